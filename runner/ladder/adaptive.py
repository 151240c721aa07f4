"""`concurrency = "auto"`: how many calls one server gets at once, found while running (AIMD, as TCP finds a window).

A local server (llama.cpp, a small vLLM) decodes a few requests at a time and queues the rest: 64 calls sent at once
wait in its queue past their timeout, are retried, and the server still computes the abandoned ones. The limit here
starts at one call and grows while answers come back about as fast as a call's alone. The first answer is the
reference at first, and each answer that agrees with it adds `PROBING_STEP` calls (1, 3, 9 calls in the first round
trips), so a server of 4 to 256 slots is filled in a few round trips; until `AGREEING` answers confirmed it, one answer
far slower or far faster than it (a one-slot server's queue, requests of many sizes, a first call slowed by the
server's warm-up) sends the limit back to one call, and `SOLO_CALLS` calls alone make the reference before it grows
again. It grows by one per answer (doubling every round trip) until the first cut, by one per round trip after. It
is cut when the server shows it is full: halved on a timeout, a 429 or a 503, and by a fifth when the running mean of
latencies passes `TOLERANCE` times the reference: that of calls that had the server to themselves (requests queueing
inside it). One cut per round trip: the answers to calls sent before a cut say nothing about the new limit. After a
storm of 429s or timeouts (a restart), it doubles per round trip back to half the limit the storm found.

A server that says how many requests it works on at once (llama.cpp's `--parallel` slots, its `total_slots`, asked
once before the first call: `runner.ladder.transports.Online`) is not learned from one call up: the limit starts at
its slots (`declare_slots`), calls that had the server to themselves are those sent while no more than the slots were
in flight, and the limit grows at most `TRIAL_STEP` calls past them; answers slowing down cut it no lower than the
slots (there they show the server's cores shared, not a queue), while timeouts, 429s and 503s cut it as above.
Learning costs a CPU server's slots up to a tenth of a short run's pace (below); once said, nothing.

Answers slowing down as calls are added look alike on a one-slot server's queue and on a CPU server whose slots share
its cores: on llama.cpp `--parallel 4 --threads 1`, two calls in flight take twice a lone call's time each (no more
answers a second than one call), yet four answer a fifth more a second. So once the limit was cut, answers slowing
down again start a trial instead of a cut: the answers a second are measured at the limit, then at `TRIAL_STEP` calls
more. If the higher level answered `GAIN` times more a second, it stays (cut once answers take longer than there), and
the next slowdown tries again; if not, the limit goes back, held about there if it answered more a second than one
call, else cut as on a queue, and the next trial waits `TRIAL_PAUSE` calls, twice as many after each trial that gained
nothing (a one-slot server pays a short queue now and then; a pace measured on a busy machine is measured again).

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
from dataclasses import dataclass, field

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
"""Calls sent one at a time when the first answer's reference was contradicted (not counting the first call, whose
latency may include the server loading its model or compiling), so the reference is a mean of several, not one
call's size."""
PROBING_STEP = 2.0
"""Growth per answer while the first answer is the reference (the limit triples per round trip: 1, 3, 9 calls), so
a server of many slots is filled in fewer round trips; the answers of a one-slot server contradict it at once."""
TRIAL_STEP = 2
"""Calls more than the limit that a trial tries."""
GAIN = 1.05
"""Answers a second at the level tried, against the limit's, that keep it (a pure queue gains nothing; a CPU
server batching a little gains 9 % from 2 to 4 calls)."""
TRIAL_PAUSE = 250
"""Calls after a trial that gained nothing before the next may start (doubled after each such trial)."""
MEASURED = 16
"""Answers a trial measures at each level at least (and three times the level's calls: a few round trips, their
answers coming in bursts, counted whole)."""
AGREEING = 3
"""Answers within `TOLERANCE` of the first one (either way) that make it a reference the limit may grow on for good:
on a server with two slots or more, the second round trip (two calls) and the first answer of the third confirm it."""


def overloaded(error: BaseException) -> bool:
    """Whether an error says the server is full: a timeout, a 429, a 503."""
    return isinstance(error, ProviderTimeout | RateLimited) or (isinstance(error, ServerError) and error.status == 503)


@dataclass(slots=True)
class Slot:
    """One admitted call; `sent` is set when the request leaves (after any rate-limit wait)."""

    admitted: float
    sent: float
    crowded: int | None
    """None if it was admitted with more calls in flight than the server's slots, itself included; else the count of
    such admissions so far: one more while it is in flight queues a call in the server."""


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
        self.slots = 1
        """Requests the server says it works on at once (`declare_slots`); one until it says."""
        self._clock = clock
        self._in_flight = 0
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._alone = _Mean()  # latencies of calls that had a slot to themselves: "alone" on a one-slot server
        self._recent = _Mean()
        self._admitted = 0
        self._crowded = 0  # admissions with more calls in flight than `slots`, itself included
        self._cut_at = -math.inf
        self._full_at = -math.inf
        self._timeouts = 0  # round trips in a row that timed out, no answer between
        self._timed_out_at = -math.inf
        self._stalled_until = -math.inf
        self._probing = True  # the first answer is the reference until `AGREEING` answers confirm or one contradicts it
        self._agreeing = 0
        self._regrow_to = 0.0  # after a storm of overload errors: the limit doubles per round trip up to this
        self._paced = 0.0  # from a trial, the reference past the lone calls': the latency of the level kept / TOLERANCE
        self._answered_at = -math.inf
        self._storm = False  # overload cuts with no answer between
        self._trial_after = 0  # the admissions after which the next slowdown may start a trial
        self._trial_pause = TRIAL_PAUSE
        self._grown = False  # the limit grew since the last cut: answers slowing down now are news of a new level
        self._trial: _Trial | None = None

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def trying(self) -> int | None:
        """The limit a trial is measuring the pace at (then two calls more); None when no trial is going on."""
        return None if self._trial is None else self._trial.level

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
                    self._add(-1)  # woken and cancelled at once: the room it was given goes to the next
                    self._wake()
                elif waiter in self._waiting:  # `_wake` drops cancelled waiters it meets: maybe gone already
                    self._waiting.remove(waiter)
                raise
        else:
            self._add(1)
        now = self._clock()
        if now < self._stalled_until:
            self._add(-1)
            self._wake()
            raise NotSent(f"{self.name} answered none of the last {STALLED_AFTER} calls (each timed out): its calls "
                          f"are not sent for {self._stalled_until - now:.0f} s more")
        if self._in_flight >= int(self.limit):
            self._full_at = now
        self._admitted += 1
        if self._in_flight > self.slots:
            self._crowded += 1
        slot = Slot(now, now, None if self._in_flight > self.slots else self._crowded)
        try:
            yield slot
        except BaseException as error:
            if overloaded(error):
                self._overloaded(slot)
            if isinstance(error, ProviderTimeout):
                self._timed_out(slot)
            raise
        else:
            self._answered(slot)
        finally:
            self._add(-1)
            self._wake()

    def declare_slots(self, slots: int) -> None:
        """The server says it works on `slots` requests at once (llama.cpp's `total_slots`): the limit starts there, not
        at one call, and grows past it by one call a round trip up to `TRIAL_STEP` calls more (more only queue in the
        server; two hide the moment between an answer and the next request); a call had the server to itself if no
        more than `slots` calls were in flight during its life. Said after answers came, it changes nothing."""
        if self._admitted or slots <= 1:
            return
        self.slots = min(slots, self.ceiling)
        self.ceiling = min(self.ceiling, slots + TRIAL_STEP)
        log.info("%s says it works on %d requests at once: the limit starts at %d", self.name, slots, self.slots)
        self.limit = float(self.slots)
        self._probing = False

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

    def _overloaded(self, slot: Slot) -> None:
        if self._cut(slot, OVERLOAD_CUT) and not self._storm:
            self._storm = True
            self._regrow_to = self.limit  # half the limit the storm found: regained quickly once it passes

    def _answered(self, slot: Slot) -> None:
        self._timeouts = 0
        self._storm = False
        self._stalled_until = -math.inf
        now = self._clock()
        latency = now - slot.sent
        # no answer during a call's whole life: the server was idle for want of calls before it, not slow
        gap, self._answered_at = min(latency, now - self._answered_at), now
        if slot.sent < self._cut_at:
            return  # sent under the limit before the last cut: it says nothing of the new one
        if self._probing and self._alone.count and not self._confirms(latency):
            return
        if slot.crowded == self._crowded:  # nobody queued behind it either
            self._alone.add(latency)
        self._recent.add(latency)
        if self._trial is not None:
            self._tried(latency, gap)
        elif self._alone.count and self._recent.value > TOLERANCE * self._reference():
            # at or below the slots a server said, answers slow down as its cores are shared, not as requests queue
            if not self._try_more() and self._cut(slot, LATENCY_CUT, floor=self.slots):
                self._regrow_to = 0.0  # requests queue in the server: the limit found, no quick regrowth past it
        elif slot.admitted <= self._full_at and (self._probing or self._agreeing >= AGREEING
                                                    or self._alone.count >= SOLO_CALLS):
            # grown only when in flight while the limit was reached: a limit nobody reaches is not shown to hold
            # past the slots a server declared, one more call a round trip from the start
            step = (PROBING_STEP if self._probing
                    else 1.0 if (not self.cuts and self.slots == 1) or self.limit < max(self._regrow_to, self.slots)
                    else 1.0 / self.limit)
            self.limit = min(float(self.ceiling), self.limit + step)
            self._grown = True

    def _confirms(self, latency: float) -> bool:
        """While the first answer is the reference: whether this answer agrees with it; if not, back to one call, and
        a reference of calls alone, the first call not among them, before the limit grows again."""
        if self._alone.value / TOLERANCE <= latency <= self._alone.value * TOLERANCE:
            self._agreeing += 1
            self._probing = self._agreeing < AGREEING
            return True
        self._probing = False
        self._agreeing = 0
        self._alone = _Mean()
        self._recent = _Mean()
        self.limit = 1.0
        self._cut_at = self._clock()
        return False

    def _try_more(self) -> bool:
        """Answers slowed down: whether a trial starts instead of a cut (see the module's docstring); only once the
        limit was cut and grew again to where answers slow down (the overshoot of the first round trips, or the levels
        it is cut through, say nothing of the level where the slowdown starts)."""
        if (not (self.cuts and self._grown) or self._admitted < self._trial_after
                or int(self.limit) + TRIAL_STEP > self.ceiling):
            return False
        self._trial = _Trial(int(self.limit))
        self._cut_at = self._clock()  # measured from the calls sent from now on
        return True

    def _tried(self, latency: float, gap: float) -> None:
        """An answer during a trial: at the limit first, then at the level tried, until each pace is measured."""
        trial = self._trial
        assert trial is not None
        if not trial.add(latency, gap):
            return
        self._cut_at = self._clock()
        self._recent = _Mean()
        if trial.tried is None:  # the limit's pace is measured: now the level above it
            trial.tried = _Pace()
            self.limit = float(trial.level + TRIAL_STEP)
            return
        self._trial = None
        if trial.tried.per_second >= GAIN * trial.at_limit.per_second:  # kept: cut once answers take longer than there
            self._paced = trial.tried.latency.value / TOLERANCE
            return
        self._trial_after = self._admitted + self._trial_pause
        self._trial_pause *= 2
        self.limit = float(trial.level)
        self.cuts += 1
        if not self._paced and trial.at_limit.per_second * self._alone.value >= GAIN * self.slots:
            # the limit's level answered more a second than the slots' calls, two calls more no more: the best pace is
            # reached there, and the limit is kept about there
            self._paced = trial.at_limit.latency.value / TOLERANCE

    def _cut(self, slot: Slot, factor: float, floor: int = 1) -> bool:
        """Cuts the limit by `factor`, to `floor` at least, unless `slot` was sent before the last cut or the limit is
        at a floor of slots the server said; whether it did."""
        if slot.sent < self._cut_at:
            return False  # sent under the limit before the last cut
        if floor > 1 and self.limit <= floor:
            return False
        self.limit = max(float(floor), self.limit * factor)
        self._grown = False
        self._trial = None  # a storm during a trial: its counts are of other limits
        self._cut_at = self._clock()
        self._recent = _Mean()  # a fresh mean, of calls sent under the new limit
        self.cuts += 1
        return True

    def _reference(self) -> float:
        """The latency answers are compared with: that of calls alone, or, once a trial found more calls in flight
        answer more a second (a CPU server batching its slots: each answer slower, more of them), that of its level."""
        return max(self._alone.value, self._paced)

    def _add(self, calls: int) -> None:
        self._in_flight += calls

    def _wake(self) -> None:
        while self._waiting and self._in_flight < int(self.limit):
            waiter = self._waiting.popleft()
            if not waiter.done():
                self._add(1)
                waiter.set_result(None)


@dataclass(slots=True)
class _Pace:
    """The answers to calls sent at one level: their mean latency, and answers a second (the seconds between them
    summed: answers come in bursts, so a plain sum, not a running mean)."""

    latency: _Mean = field(default_factory=lambda: _Mean())
    answers: int = 0
    seconds: float = 0.0

    def add(self, latency: float, gap: float) -> None:
        self.latency.add(latency)
        self.seconds += gap
        self.answers += 1

    @property
    def per_second(self) -> float:
        return self.answers / max(self.seconds, 1e-9)


@dataclass(slots=True)
class _Trial:
    """A level tried: the pace at the limit `level` (measured first), then at `TRIAL_STEP` calls more."""

    level: int
    at_limit: _Pace = field(default_factory=lambda: _Pace())
    tried: _Pace | None = None

    def add(self, latency: float, gap: float) -> bool:
        """Counts an answer to the level being measured; whether that level's pace is measured now."""
        pace = self.tried or self.at_limit
        pace.add(latency, gap)
        return pace.answers >= max(MEASURED, 3 * (self.level + (TRIAL_STEP if self.tried else 0)))


@dataclass(slots=True)
class _Mean:
    """A running mean of latencies: plain over the first answers, then exponentially weighted (`RECENT`)."""

    value: float = 0.0
    count: int = 0

    def add(self, latency: float) -> None:
        self.count += 1
        self.value += max(RECENT, 1.0 / self.count) * (latency - self.value)
