"""Client-side rate limits: calls wait for room under RPM and TPM rather than fail with 429s.

Per (provider, model, endpoint, API key) there is a request bucket and a token-weighted bucket. A call reserves its
estimated tokens (the gateway counts the prompt with tiktoken's cl100k encoding and adds `max_tokens`) before it
is sent, and the reservation is reconciled with the usage the provider reports. A 429 pauses the buckets for its
Retry-After and empties them, so traffic ramps up again from zero instead of replaying a burst. Per-model and global
concurrency caps bound how many calls are in flight; a model's cap may adapt to its server
(`runner.ladder.adaptive`). The limiter's identity key holds a short sha256 of the API key, never the key itself
(inspect_ai's `concurrency(name, key=...)` split), and the endpoint: two servers serving one model name with one
placeholder key neither share a budget nor pause each other. `LimitKey.display` is what logs show and
what limits are looked up by.

With `SharedBuckets` (the team database's, `runner.team.limits`) the RPM and TPM buckets are shared by every process
using them, and a 429 pauses them all; the concurrency caps stay each process's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from runner.ladder.adaptive import AdaptiveLimit

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

_EPSILON = 1e-9
ADAPTIVE_CEILING = 256
"""How far an adaptive limit may grow when nothing else bounds it."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one (provider, model, endpoint, key); None means unlimited."""

    rpm: float | None = None
    tpm: float | None = None
    max_concurrency: int | None = None
    adaptive: bool = False
    """Calls in flight bounded by an `AdaptiveLimit` (`concurrency = "auto"`), which grows up to `max_concurrency`."""


@dataclass(frozen=True, slots=True)
class LimitKey:
    """Identity of one set of buckets."""

    provider: str
    model: str
    key_id: str = "-"
    """A short sha256 of the API key where the provider offers one ("-" otherwise): never the key."""
    endpoint: str | None = None
    """Base URL where the provider has one."""

    @property
    def display(self) -> str:
        """`provider/model`, then `@host/path` of the endpoint: no scheme, and no credentials a URL may carry."""
        if self.endpoint is None:
            return f"{self.provider}/{self.model}"
        parts = urlsplit(self.endpoint)
        return f"{self.provider}/{self.model}@{parts.netloc.rpartition('@')[2]}{parts.path.rstrip('/')}"


class TokenBucket:
    """Refills `per_minute / 60` units a second up to `burst_s` seconds' worth; takes wait, first come first served.

    A take larger than the capacity is admitted once the bucket is full and leaves it in debt, so one huge prompt
    waits its turn instead of never fitting. Units given back (an estimate reconciled with a smaller bill) wake the
    waiting take at once: a take that slept the time computed before the refund would leave the bucket idle, and a
    TPM-bound run whose `max_tokens` overstates the output reached only ~55 % of the allowed rate.

    Args:
        per_minute: Sustained rate.
        burst_s: Seconds of rate the bucket holds when idle. Small keeps traffic smooth, as servers that enforce
            a per-minute limit over shorter windows expect.
        clock: Monotonic seconds.
        sleep: Awaitable sleep (a fake one in tests).
    """

    def __init__(self, per_minute: float, *, burst_s: float, clock: Clock, sleep: Sleep) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self._clock, self._sleep = clock, sleep
        self._level = self.capacity
        self._updated = clock()
        self._paused_until = 0.0
        self._lock = asyncio.Lock()
        self._queued = 0  # takes waiting for or holding the lock
        self._refunded = asyncio.Event()

    def _refill(self) -> float:
        now = self._clock()
        if now > self._updated:
            start = max(self._updated, min(now, self._paused_until))  # nothing accrues while paused
            self._level = min(self.capacity, self._level + (now - start) * self.rate)
            self._updated = now
        return now

    def _wait_for(self, amount: float) -> float:
        now = self._refill()
        if now < self._paused_until:
            return self._paused_until - now
        needed = min(amount, self.capacity) - self._level
        # The tolerance stops a float residue (1 - 0.9999999999999964) from asking for a sleep too short to
        # move the clock at all.
        return 0.0 if needed <= _EPSILON else needed / self.rate

    async def take(self, amount: float) -> None:
        """Wait until `amount` units are available, then take them."""
        if not self._queued and self._wait_for(amount) <= 0:  # room and nobody ahead: no lock, no suspension
            self._level -= amount
            return
        self._queued += 1
        try:
            async with self._lock:  # FIFO: the head of the queue waits, the others wait behind it
                while (wait := self._wait_for(amount)) > 0:
                    await self._nap(wait)
                self._level -= amount
        finally:
            self._queued -= 1

    async def _nap(self, seconds: float) -> None:
        """Sleep `seconds`, or less should units be given back meanwhile."""
        self._refunded.clear()
        sleeping = asyncio.ensure_future(self._sleep(seconds))
        refunded = asyncio.ensure_future(self._refunded.wait())
        try:
            await asyncio.wait((sleeping, refunded), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeping.cancel()
            refunded.cancel()

    def give_back(self, amount: float) -> None:
        """Return unused units (or, negative, charge more) after the real usage is known."""
        self._refill()
        self._level = min(self.capacity, self._level + amount)
        if amount > 0:
            self._refunded.set()

    def pause(self, seconds: float) -> None:
        """Stop admitting for `seconds` and empty the bucket: the server told us we were too fast."""
        now = self._refill()
        self._paused_until = max(self._paused_until, now + seconds)
        self._level = min(self._level, 0.0)


class SharedBuckets(Protocol):
    """RPM and TPM buckets held outside this process (one set per `LimitKey` for every process using them)."""

    async def take(self, key: LimitKey, limits: Limits, tokens: int, burst_s: float) -> None:
        """Waits until one request and `tokens` fit under `key`'s limits, then takes them; raises when the buckets
        cannot be reached (the call is then not sent)."""
        ...

    def give_back(self, key: LimitKey, limits: Limits, tokens: int) -> None:
        """Returns unused tokens (negative: takes more) once the reply's usage is known."""
        ...

    def pause(self, key: LimitKey, limits: Limits, seconds: float, burst_s: float) -> None:
        """Stops admitting under `key` for `seconds`, everywhere, and empties its buckets."""
        ...


@dataclass(slots=True)
class _KeyState:
    requests: TokenBucket | None
    tokens: TokenBucket | None
    in_flight: asyncio.Semaphore | None
    adaptive: AdaptiveLimit | None
    key: LimitKey
    limits: Limits
    shared: SharedBuckets | None = None
    """Holds this key's RPM and TPM buckets instead of `requests` and `tokens`."""
    paused_until: float = 0.0
    """A 429's Retry-After holds every call of the key until then, whether or not it has buckets."""


@dataclass(slots=True)
class Lease:
    """One admitted call: reconcile its reserved tokens once the provider reports usage."""

    reserved_tokens: int
    _state: _KeyState
    _settled: bool = False

    def reconcile(self, actual_tokens: int) -> None:
        """Correct the token bucket from the estimate to the billed tokens (at most once)."""
        if self._state.tokens is not None and not self._settled:
            self._state.tokens.give_back(self.reserved_tokens - actual_tokens)
        elif self._state.shared is not None and not self._settled:
            self._state.shared.give_back(self._state.key, self._state.limits, self.reserved_tokens - actual_tokens)
        self._settled = True


class RateLimiter:
    """All buckets and concurrency caps of a run.

    Args:
        limits: Limits per `LimitKey.display` (`openai/gpt-4o@api.openai.com/v1`); `default` applies to the others.
        default: Limits for models not in `limits`.
        max_concurrency: Calls in flight across all models (None: unbounded).
        burst_s: Bucket depth in seconds of rate (see `TokenBucket`).
        backoff_s: How long a 429 without Retry-After pauses the buckets.
        max_pause_s: The longest a 429 pauses the buckets, whatever its Retry-After says. A server asking for more
            (a daily quota) would otherwise stall every call of the key that long, silently, while the retry policy
            gives up on the call that got the 429 at once (`RetryPolicy.max_retry_after_s`, the same 300 s).
        shared: Holds the RPM and TPM buckets of every key with such limits (the team's); None: in this process.
        clock: Monotonic seconds; `time.monotonic` by default.
        sleep: Awaitable sleep; `asyncio.sleep` by default.
    """

    def __init__(self, limits: dict[str, Limits] | None = None, *, default: Limits = Limits(),
                 max_concurrency: int | None = None, burst_s: float = 1.0, backoff_s: float = 1.0,
                 max_pause_s: float = 300.0, shared: SharedBuckets | None = None, clock: Clock = time.monotonic,
                 sleep: Sleep = asyncio.sleep) -> None:
        self._limits = dict(limits or {})
        self._default = default
        self._burst_s, self._backoff_s, self._max_pause_s = burst_s, backoff_s, max_pause_s
        self._clock, self._sleep = clock, sleep
        self._shared = shared
        self._global = asyncio.Semaphore(max_concurrency) if max_concurrency else None
        self._states: dict[LimitKey, _KeyState] = {}

    def _state(self, key: LimitKey) -> _KeyState:
        state = self._states.get(key)
        if state is None:
            limits = self._limits.get(key.display, self._default)
            bucket = functools.partial(TokenBucket, burst_s=self._burst_s, clock=self._clock, sleep=self._sleep)
            shared = self._shared if limits.rpm or limits.tpm else None
            state = _KeyState(
                bucket(limits.rpm) if limits.rpm and shared is None else None,
                bucket(limits.tpm) if limits.tpm and shared is None else None,
                asyncio.Semaphore(limits.max_concurrency) if limits.max_concurrency and not limits.adaptive else None,
                AdaptiveLimit(limits.max_concurrency or ADAPTIVE_CEILING, clock=self._clock, name=key.display)
                if limits.adaptive else None,
                key, limits, shared,
            )
            self._states[key] = state
        return state

    @contextlib.asynccontextmanager
    async def admit(self, key: LimitKey, estimated_tokens: int) -> AsyncIterator[Lease]:
        """Hold a concurrency slot and take one request and `estimated_tokens` from the key's buckets.

        The model's own slot comes before the global one, so calls queued behind a model at its cap hold no
        global slot that another model could use; tokens come last, spent just before the request leaves.
        """
        state = self._state(key)
        async with contextlib.AsyncExitStack() as stack:
            if state.in_flight is not None:
                await stack.enter_async_context(state.in_flight)
            slot = await stack.enter_async_context(state.adaptive.slot()) if state.adaptive is not None else None
            if self._global is not None:
                await stack.enter_async_context(self._global)
            while (pause := state.paused_until - self._clock()) > 0:
                await self._sleep(pause)
            if state.requests is not None:
                await state.requests.take(1)
            if state.tokens is not None:
                await state.tokens.take(estimated_tokens)
            if state.shared is not None:
                await state.shared.take(key, state.limits, estimated_tokens, self._burst_s)
            if slot is not None:
                slot.sent = self._clock()  # the server's latency, not the wait for the buckets
            yield Lease(estimated_tokens, state)

    def adaptive_limit(self, key: LimitKey) -> AdaptiveLimit | None:
        """The adaptive concurrency limit of `key`, if its limits have one."""
        return self._state(key).adaptive

    def rate_limited(self, key: LimitKey, retry_after: float | None) -> None:
        """A 429 for `key`: pause its calls for the server's Retry-After (or `backoff_s`, at most `max_pause_s`), a
        model without RPM/TPM limits too, and empty its buckets."""
        state = self._state(key)
        pause = min(retry_after if retry_after is not None else self._backoff_s, self._max_pause_s)
        if retry_after is None or retry_after <= self._max_pause_s:
            # a wait the retry policy makes for the call that got it: every call of the key waits too. One past it
            # (a daily quota) is not waited for: without buckets the key's calls then fail at once, none stalls.
            state.paused_until = max(state.paused_until, self._clock() + pause)
        for bucket in (state.requests, state.tokens):
            if bucket is not None:
                bucket.pause(pause)
        if state.shared is not None:
            state.shared.pause(key, state.limits, pause, self._burst_s)
