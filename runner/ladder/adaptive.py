"""`concurrency = "auto"`: how many calls one server gets at once, found while running (AIMD, as TCP finds a window).

A local server (llama.cpp, a small vLLM) decodes a few requests at a time and queues the rest: 64 calls sent at once
wait in its queue past their timeout, are retried, and the server still computes the abandoned ones. The limit here
starts at one call (the first `SOLO_CALLS` + 1 go one at a time) and grows while answers come back about as fast as a
call's alone: by one per answer at first (doubling every round trip), by one per round trip after the first cut. It
is cut when the server shows it is full: halved on a timeout, a 429 or a 503, and by a fifth when the running mean of
latencies passes `TOLERANCE` times that of calls that had the server to themselves (requests queueing inside it). One
cut per round trip: the answers to calls sent before a cut say nothing about the new limit.

The reference is a running mean of calls that were alone in flight from start to end, not the fastest answer ever:
requests differ in size (a 10-token answer and a 500-token one), and a mean over the same mix of sizes compares like
with like. It is never taken from calls that shared the server, so it cannot creep up with a queue; after a cut to
one call, fresh solo calls bring it up to date (prompts grow over an agent's steps).

A server that stopped answering (hung, its GPU wedged) would otherwise hold every call for its timeout and every retry
(12 minutes a call at the defaults), one call at a time: after `STALLED_AFTER` round trips in a row that timed out, no
answer between (calls in flight together count once), its calls fail at once for `STALL_PAUSE_S`, unsent (`NotSent`:
nothing billed, the rollout ends as a provider error that a resume runs again); then one call is let through, and one
more timeout stops them again.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from providers.errors import NotSent, ProviderTimeout, RateLimited, ServerError

log = logging.getLogger(__name__)

TOLERANCE = 1.5
"""Answers this many times slower than calls alone mean requests are queueing in the server (two calls on a
one-slot server take twice as long; a batching server such as vLLM slows far less per added call)."""
LATENCY_CUT = 0.8
"""The limit's factor when latency rose."""
OVERLOAD_CUT = 0.5
"""The limit's factor on a timeout, a 429 or a 503."""
RECENT = 0.1
"""Weight of the newest answer in the running means of latencies (of all calls, and of calls alone), once they hold
ten answers (before, each is the plain mean of what it holds)."""
STALLED_AFTER = 3
"""Round trips in a row that timed out, with no answer between, that show a server has stopped answering."""
STALL_PAUSE_S = 60.0
"""How long the calls to a stalled server fail at once before one is tried again."""
SOLO_CALLS = 5
"""Calls sent one at a time when the limit starts (after the first, whose latency may include the server loading its
model or compiling), so the reference is a mean of several, not one call's size."""


def overloaded(error: BaseException) -> bool:
    """Whether an error says the server is full: a timeout, a 429, a 503."""
    return isinstance(error, ProviderTimeout | RateLimited) or (isinstance(error, ServerError) and error.status == 503)


@dataclass(slots=True)
class Slot:
    """One admitted call; `sent` is set when the request leaves (after any rate-limit wait)."""

    admitted: float
    sent: float
    number: int
    """Admissions so far, this one included: another call admitted while this one is in flight takes the next."""
    alone: bool
    """No other call was in flight when it was admitted."""


class AdaptiveLimit:
    """Calls in flight to one server, bounded by a limit that adapts to how the server answers.

    Args:
        ceiling: The limit never grows past this (the rollouts that may be in flight at once).
        clock: Monotonic seconds.
    """

    def __init__(self, ceiling: int, *, clock: Callable[[], float], name: str = "the server") -> None:
        self.ceiling = max(1, ceiling)
        self.name = name
        """The server, as messages name it."""
        self.limit = 1.0
        """Calls allowed in flight (its whole part counts)."""
        self.cuts = 0
        """How often the limit was cut."""
        self._clock = clock
        self._in_flight = 0
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._alone = _Mean()
        self._recent = _Mean()
        self._admitted = 0
        self._cut_at = -math.inf
        self._full_at = -math.inf
        self._timeouts = 0  # round trips in a row that timed out, no answer between
        self._timed_out_at = -math.inf
        self._stalled_until = -math.inf

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
                elif waiter in self._waiting:  # `_wake` drops cancelled waiters it meets: maybe gone already
                    self._waiting.remove(waiter)
                raise
        else:
            self._in_flight += 1
        now = self._clock()
        if now < self._stalled_until:
            self._in_flight -= 1
            self._wake()
            raise NotSent(f"{self.name} answered none of the last {STALLED_AFTER} calls (each timed out): its calls "
                          f"are not sent for {self._stalled_until - now:.0f} s more")
        if self._in_flight >= int(self.limit):
            self._full_at = now
        self._admitted += 1
        slot = Slot(now, now, self._admitted, alone=self._in_flight == 1)
        try:
            yield slot
        except BaseException as error:
            if overloaded(error):
                self._cut(slot, OVERLOAD_CUT)
            if isinstance(error, ProviderTimeout):
                self._timed_out(slot)
            raise
        else:
            self._answered(slot)
        finally:
            self._in_flight -= 1
            self._wake()

    def _timed_out(self, slot: Slot) -> None:
        if slot.sent < self._timed_out_at:
            return  # in flight with a call that timed out already: one round trip the server left unanswered
        self._timed_out_at = self._clock()
        self._timeouts += 1
        if self._timeouts >= STALLED_AFTER:
            if self._stalled_until == -math.inf:
                log.warning("%s answered none of the last %d calls (each timed out): its calls fail at once, unsent, "
                            "for %.0f s at a time, one call trying it between", self.name, STALLED_AFTER,
                            STALL_PAUSE_S)
            self._stalled_until = self._clock() + STALL_PAUSE_S
            self._timeouts = STALLED_AFTER - 1  # the call let through afterwards decides alone

    def _answered(self, slot: Slot) -> None:
        self._timeouts = 0
        self._stalled_until = -math.inf
        latency = self._clock() - slot.sent
        if slot.alone and slot.number == self._admitted > 1:  # nobody joined it either; and not the first call,
            self._alone.add(latency)                            # which may include the server's warm-up
        if slot.sent < self._cut_at:
            return  # sent under the limit before the last cut: it says nothing of the new one
        self._recent.add(latency)
        if self._alone.count and self._recent.value > TOLERANCE * self._alone.value:
            self._cut(slot, LATENCY_CUT)
        elif slot.admitted <= self._full_at and self._alone.count >= SOLO_CALLS:
            # grown only when in flight while the limit was reached: a limit nobody reaches is not shown to hold
            self.limit = min(float(self.ceiling), self.limit + (1.0 if not self.cuts else 1.0 / self.limit))

    def _cut(self, slot: Slot, factor: float) -> None:
        if slot.sent < self._cut_at:
            return  # sent under the limit before the last cut
        self.limit = max(1.0, self.limit * factor)
        self._cut_at = self._clock()
        self._recent = _Mean()  # a fresh mean, of calls sent under the new limit
        self.cuts += 1

    def _wake(self) -> None:
        while self._waiting and self._in_flight < int(self.limit):
            waiter = self._waiting.popleft()
            if not waiter.done():
                self._in_flight += 1
                waiter.set_result(None)


@dataclass(slots=True)
class _Mean:
    """A running mean of latencies: plain over the first answers, then exponentially weighted (`RECENT`)."""

    value: float = 0.0
    count: int = 0

    def add(self, latency: float) -> None:
        self.count += 1
        self.value += max(RECENT, 1.0 / self.count) * (latency - self.value)
