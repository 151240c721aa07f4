"""What the concurrency scripts share (`perf/local_concurrency.py`, `perf/slots_concurrency.py`): a provider wrapper
that counts the attempts that timed out, each one a request the server may still be working on, and a wait until a
real server has finished the requests a setting abandoned."""

from __future__ import annotations

import time

from providers.errors import ProviderTimeout
from providers.interface import ChatModel, ChatRequest, ChatResponse, Message
from providers.registry import resolve_model


class CountingTimeouts:
    """The provider, counting the attempts that timed out; with `slots_said=False`, it passes on no slots the server
    says it has (`concurrency = "auto"` then learns them)."""

    def __init__(self, model: ChatModel, *, slots_said: bool = True) -> None:
        self.inner = model
        self.timeouts = 0
        self._slots_said = slots_said
        for name in ("provider", "model", "endpoint", "api_key_id"):
            setattr(self, name, getattr(model, name))

    async def declared_slots(self) -> int | None:
        ask = getattr(self.inner, "declared_slots", None) if self._slots_said else None
        return await ask() if ask is not None else None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        try:
            return await self.inner.complete(request)
        except ProviderTimeout:
            self.timeouts += 1
            raise


async def idle_s(url: str, within_s: float | None = None) -> float:
    """How long a one-token call takes; with `within_s`, asked until one takes no longer: the server has finished the
    abandoned requests a setting left it (they would slow the next setting down), whatever order it takes them in."""
    model = resolve_model(f"openai-compatible:smol@{url}", timeout_s=600)
    try:
        while True:
            started = time.perf_counter()
            await model.complete(ChatRequest("", (Message("user", "ok"),), max_tokens=1))
            took = time.perf_counter() - started
            if within_s is None or took <= within_s:
                return took
    finally:
        await model.aclose()  # type: ignore[attr-defined]
