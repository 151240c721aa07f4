"""A provider wrapper the concurrency scripts share: it counts the attempts that timed out, each one a request the
server may still be working on (`perf/local_concurrency.py`, `perf/slots_concurrency.py`)."""

from __future__ import annotations

from providers.errors import ProviderTimeout
from providers.interface import ChatModel, ChatRequest, ChatResponse


class CountingTimeouts:
    """The provider, counting the attempts that timed out."""

    def __init__(self, model: ChatModel) -> None:
        self.inner = model
        self.timeouts = 0
        for name in ("provider", "model", "endpoint", "api_key_id"):
            setattr(self, name, getattr(model, name))

    async def complete(self, request: ChatRequest) -> ChatResponse:
        try:
            return await self.inner.complete(request)
        except ProviderTimeout:
            self.timeouts += 1
            raise
