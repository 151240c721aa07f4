"""The bottom rung of the call ladder: one attempt of a call, and the transports that take it to its provider.

The gateway books an attempt against the spend cap, then hands it to its model's transport: `Online` sends it at once
under the model's rate limits; `runner.ladder.batches.BatchTransport` queues it into the model's open batch and
waits for its result. Both answer as the provider's `complete` would (a response, or the error a direct call raises),
so the rungs above never ask which one answered, except to price it (`Transport.batched`).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Protocol

from providers.errors import RateLimited
from providers.interface import ChatModel, ChatRequest, ChatResponse, DeclaresSlots
from runner.ladder.budget import IMPOSSIBLE_MULTIPLE
from runner.ladder.ratelimit import LimitKey, RateLimiter


@dataclass(slots=True)
class Attempt:
    """One attempt of a call, booked against the spend cap."""

    request: ChatRequest
    key: str
    """The call's cache key (a batch request is named by it, and an earlier session's batch found by it)."""
    charge: int | None
    """The spend cap's booking of this attempt (a batch records it, so that a later session can settle it)."""
    tokens: int
    """What the TPM bucket takes for it: the prompt estimate and the output allowance."""
    unsent: bool = False
    """Set by a transport when the attempt failed before the provider could have it (it left its batch's queue
    unsent): its booking is released whatever the error."""


class Transport(Protocol):
    """How an attempt reaches its provider."""

    batched: bool
    """Through the provider's batch API: priced at its batch rate."""

    async def complete(self, attempt: Attempt) -> ChatResponse:
        """The provider's answer, or the error a direct call would raise (`attempt.unsent` says if it never left)."""
        ...


class Online:
    """A model's attempts sent at once, each under its limits: a concurrency slot, the RPM and TPM buckets, the tokens
    reconciled with the reply's usage, and a 429 slowing the model's key down (`runner.ladder.ratelimit`)."""

    batched = False

    def __init__(self, model: ChatModel, key: LimitKey, limiter: RateLimiter) -> None:
        self._model = model
        self._key = key
        self._limiter = limiter
        self._slots_asked = False
        self._asking = asyncio.Lock()

    async def complete(self, attempt: Attempt) -> ChatResponse:
        # unsent until the limits admit it: a wait cut short (a cancellation, a shared limiter that cannot be reached,
        # the first calls waiting for the server's slots) sent nothing
        attempt.unsent = True
        if not self._slots_asked:
            await self._ask_slots()
        async with self._limiter.admit(self._key, attempt.tokens) as lease:
            attempt.unsent = False
            try:
                response = await self._model.complete(attempt.request)
            except RateLimited as exc:
                self._limiter.rate_limited(self._key, exc.retry_after)
                raise
            if response.usage_problem is None:  # else the estimate stays: the reply's count is no count
                used = response.usage.input_tokens + response.usage.output_tokens
                lease.reconcile(min(used, math.ceil(lease.reserved_tokens * IMPOSSIBLE_MULTIPLE)))
        return response

    async def _ask_slots(self) -> None:
        """Before the first call under `concurrency = "auto"`: the slots the server says it has (llama.cpp's), where
        the limit then starts (`AdaptiveLimit.declare_slots`). Asked once: the first calls wait for the answer."""
        async with self._asking:
            if self._slots_asked:
                return
            adaptive = self._limiter.adaptive_limit(self._key)
            try:
                if adaptive is not None and isinstance(self._model, DeclaresSlots):
                    slots = await self._model.declared_slots()
                    if slots is not None:
                        adaptive.declare_slots(slots)
            finally:
                self._slots_asked = True  # asked once, even if cut short: the limit learns them then
