"""In-process doubles for the call ladder's tests: a scripted provider and a fake clock (no patching of our code)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from providers.interface import ChatRequest, ChatResponse, Usage
from providers.tokens import count_prompt_tokens


class ScriptedProvider:
    """A `ChatModel` that answers from its script: queued errors first, then an echo billed like the mock server.

    `gate`, when set, holds every call until the test opens it, so calls can be made to overlap.
    """

    provider = "fake"
    endpoint = None

    def __init__(self, model: str = "m", *, output_tokens: int = 20,
                 on_call: Callable[[ChatRequest], None] | None = None) -> None:
        self.model = model
        self.output_tokens = output_tokens
        self.errors: list[Exception] = []
        self.calls: list[ChatRequest] = []
        self.gate: asyncio.Event | None = None
        self.reply = "echo"
        self.input_scale = 1.0
        """Bill this multiple of the cl100k prompt count (another tokenizer's view of the same text)."""
        self.latency_s = 0.0
        self._on_call = on_call

    def fail_next(self, *errors: Exception) -> None:
        self.errors.extend(errors)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls.append(request)
        if self._on_call is not None:
            self._on_call(request)
        if self.gate is not None:
            await self.gate.wait()
        await asyncio.sleep(self.latency_s)
        if self.errors:
            raise self.errors.pop(0)
        output = self.output_tokens if request.max_tokens is None else min(self.output_tokens, request.max_tokens)
        prompt = count_prompt_tokens((m.role, m.content) for m in request.messages)
        usage = Usage(input_tokens=round(prompt * self.input_scale), output_tokens=output)
        return ChatResponse(f"{self.reply}: {request.messages[-1].content} #{request.sample}", "stop", usage)


class FakeClock:
    """Monotonic time that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)
