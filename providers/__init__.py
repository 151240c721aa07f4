"""Every LLM behind one async interface, and the price table."""

from providers.errors import (
    AuthError,
    BadRequest,
    BudgetExhausted,
    ContextTooLong,
    LLMError,
    MissingAPIKey,
    PermanentError,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ReplayMiss,
    RetryableError,
    ServerError,
)
from providers.interface import ChatModel, ChatRequest, ChatResponse, Message, Usage
from providers.prices import Price, PriceTable, load_price_table
from providers.registry import ProviderRegistry, resolve_model

__all__ = [
    "AuthError",
    "BadRequest",
    "BudgetExhausted",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "ContextTooLong",
    "LLMError",
    "Message",
    "MissingAPIKey",
    "PermanentError",
    "Price",
    "PriceTable",
    "ProviderError",
    "ProviderRegistry",
    "ProviderTimeout",
    "RateLimited",
    "ReplayMiss",
    "RetryableError",
    "ServerError",
    "Usage",
    "load_price_table",
    "resolve_model",
]
