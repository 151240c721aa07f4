"""The one interface every LLM sits behind: a typed request in, a typed response out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

DEFAULT_TIMEOUT_S = 120.0
"""Seconds one request to a provider may take unless a run spec says otherwise (`request_timeout_s`). A policy,
never part of a request's identity: it stays out of `ChatRequest` and so out of every cache key."""


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message; `role` is `system`, `user` or `assistant`."""

    role: str
    content: str


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """Everything that can change a completion (all of it goes into the cache key, docs/architecture.md §3.1)."""

    model: str
    """Model string as the user wrote it, e.g. `openai:gpt-4o-mini` or `offline:oracle`."""
    messages: tuple[Message, ...]
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    sample: int = 0
    """Sample index: k samples of one prompt are k distinct requests (and cache entries)."""
    extras: tuple[tuple[str, Any], ...] = ()
    """Provider-specific sampling fields, as sorted (name, value) pairs so the request stays hashable."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens billed for one call."""

    input_tokens: int = 0
    """All prompt tokens, cached ones included (OpenAI's `prompt_tokens`; Anthropic's input + cache reads/writes)."""
    cached_input_tokens: int = 0
    """The part of `input_tokens` served from the provider's prompt cache, billed at the cached-input rate."""
    output_tokens: int = 0

    def __reduce__(self) -> tuple[type[Usage], tuple[int, int, int]]:
        # pickled as its three numbers: the slots dataclass's own `__setstate__` looks its fields up each time
        return Usage, (self.input_tokens, self.cached_input_tokens, self.output_tokens)


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """One completion."""

    text: str
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    request_id: str | None = None
    usage_problem: str | None = None
    """What was wrong with the usage the provider reported (missing, malformed, impossible), which `usage` then does
    not hold: the gateway charges such a call at its worst case. None: the usage was read as reported."""


@runtime_checkable
class ChatModel(Protocol):
    """What agents call: one async method. Providers, the cache and the gateway all satisfy it.

    The built-in providers also expose `provider`, `model` (the id sent), `endpoint` (base URL), `api_key_id` (a
    digest, never the key) and `async aclose()`; read them with `getattr`, since the offline models and the providers
    a caller brings (`providers.registry.ProviderRegistry`) need not.
    """

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


@runtime_checkable
class DeclaresSlots(Protocol):
    """A model whose server may say how many requests it works on at once (llama.cpp's slots), which
    `concurrency = "auto"` starts from."""

    async def declared_slots(self) -> int | None: ...
