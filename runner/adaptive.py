"""`concurrency = "auto"`: how many calls one server gets at once, found while running (AIMD, as TCP finds a window).

A local server (llama.cpp, a small vLLM) decodes a few requests at a time and queues the rest: 64 calls sent at once
wait in its queue past their timeout, are retried, and the server still computes the abandoned ones. The limit here
starts at one call and grows while answers come back as fast as the fastest recent ones: by one per answer at
first (doubling every round trip), by one per round trip after the first cut. It is cut when the server shows it is
full: halved on a timeout, a 429 or a 503, and by a fifth when answers take more than `tolerance` times the fastest
recent ones (requests queueing inside the server). One cut per round trip: the answers to calls sent before a cut
say nothing about the new limit.

"The fastest recent answers" follow the fastest answers down at once, and slower ones that are still within the
tolerance up slowly: the reference moves with prompts that grow over an agent's steps, but never up to the latency of
a queue, which would let the limit creep up with it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from providers.errors import ProviderTimeout, RateLimited, ServerError

TOLERANCE = 1.5
"""Answers this many times slower than the fastest recent ones mean requests are queueing in the server (two calls
on a one-slot server take twice as long; a batching server such as vLLM slows far less per added call)."""
LATENCY_CUT = 0.8
"""The limit's factor when latency rose."""
OVERLOAD_CUT = 0.5
"""The limit's factor on a timeout, a 429 or a 503."""
RECENT = 0.25
"""Weight of the newest answer in the running mean of latencies that is compared with the fastest."""
FLOOR_DRIFT = 0.02
"""How fast the fastest-recent reference follows slower answers up (per answer)."""


def overloaded(error: BaseException) -> bool:
    """Whether an error says the server is full: a timeout, a 429, a 503."""
    return isinstance(error, ProviderTimeout | RateLimited) or (isinstance(error, ServerError) and error.status == 503)


@dataclass(slots=True)
class Slot:
    """One admitted call; `sent` is set when the request leaves (after any rate-limit wait)."""

    admitted: float
    sent: float


class AdaptiveLimit:
    """Calls in flight to one server, bounded by a limit that adapts to how the server answers.

    Args:
        ceiling: The limit never grows past this (the rollouts that may be in flight at once).
        clock: Monotonic seconds.
    """

    def __init__(self, ceiling: int, *, clock: Callable[[], float]) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = 1.0
        """Calls allowed in flight (its whole part counts)."""
        self.cuts = 0
        """How often the limit was cut."""
        self._clock = clock
        self._in_flight = 0
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._fastest: float | None = None
        self._recent: float | None = None
        self._cut_at = -math.inf
        self._full_at = -math.inf

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        """Wait for room under the limit (first come, first served); the answer, or the error, adapts the limit."""
        if self._in_flight >= int(self.limit) or self._waiting:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._in_flight -= 1  # woken and cancelled at once: the room it was given goes to the next
                    self._wake()
                else:
                    self._waiting.remove(waiter)
                raise
        else:
            self._in_flight += 1
        now = self._clock()
        if self._in_flight >= int(self.limit):
            self._full_at = now
        slot = Slot(now, now)
        try:
            yield slot
        except BaseException as error:
            if overloaded(error):
                self._cut(slot, OVERLOAD_CUT)
            raise
        else:
            self._answered(slot)
        finally:
            self._in_flight -= 1
            self._wake()

    def _answered(self, slot: Slot) -> None:
        latency = self._clock() - slot.sent
        if self._fastest is None or latency < self._fastest:
            self._fastest = latency
        elif latency <= TOLERANCE * self._fastest:  # slower answers, but none from a queue, move it up slowly
            self._fastest += FLOOR_DRIFT * (latency - self._fastest)
        fastest = self._fastest
        if slot.sent < self._cut_at:
            return  # sent under the limit before the last cut: it says nothing of the new one
        recent = self._recent = latency if self._recent is None else self._recent + RECENT * (latency - self._recent)
        if recent > TOLERANCE * fastest:
            self._cut(slot, LATENCY_CUT)
        elif slot.admitted <= self._full_at:  # in flight while the limit was reached: a limit nobody reaches is
            # not shown to hold, and is not grown
            self.limit = min(float(self.ceiling), self.limit + (1.0 if not self.cuts else 1.0 / self.limit))

    def _cut(self, slot: Slot, factor: float) -> None:
        if slot.sent < self._cut_at:
            return  # sent under the limit before the last cut
        self.limit = max(1.0, self.limit * factor)
        self._cut_at = self._clock()
        self._recent = None  # a fresh mean, of calls sent under the new limit
        self.cuts += 1

    def _wake(self) -> None:
        while self._waiting and self._in_flight < int(self.limit):
            waiter = self._waiting.popleft()
            if not waiter.done():
                self._in_flight += 1
                waiter.set_result(None)
