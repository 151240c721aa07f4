"""Helpers shared by the provider tests."""

from __future__ import annotations

from providers.interface import ChatRequest, Message

SECRET_KEY = "sk-test-SECRET-0123456789abcdef"
MODELS = {"openai": "openai:gpt-4o-mini", "anthropic": "anthropic:claude-haiku-4-5"}


def chat(text: str = "Plan a trip to Rome", **fields: object) -> ChatRequest:
    """A one-turn request with a system prompt."""
    messages = (Message("system", "You are a travel agent."), Message("user", text))
    return ChatRequest(model="test", messages=messages, **fields)  # type: ignore[arg-type]
