"""Bounded retries with exponential backoff and full jitter, honouring Retry-After.

Reads only our exception classes (`providers.errors`): `RetryableError` is retried, `RateLimited.retry_after` is
honoured, everything else (`PermanentError`, `BudgetExhausted`, foreign exceptions) passes straight through. When
the attempts run out the last `RetryableError` is re-raised, so the rollout ends with a provider-error status
instead of the run hanging. Sleep and randomness are constructor arguments: tests pass fakes, nothing is patched.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from providers.errors import RateLimited, RetryableError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try. Never part of a cache key."""

    max_attempts: int = 6
    """Attempts in all, the first included."""
    base_delay_s: float = 0.5
    """Backoff ceiling of the first retry; it doubles per retry up to `max_delay_s`."""
    max_delay_s: float = 30.0
    max_retry_after_s: float = 300.0
    """A server asking for a longer wait than this is not waited for: the error is raised at once."""


class Retrier:
    """Runs an attempt function until it succeeds, fails permanently, or the policy gives up.

    Args:
        policy: Bounds and delays.
        sleep: Awaitable sleep; `asyncio.sleep` by default.
        rng: Source of jitter; a seeded `random.Random` in tests.
    """

    def __init__(self, policy: RetryPolicy = RetryPolicy(), *,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, rng: random.Random | None = None) -> None:
        self.policy = policy
        self._sleep = sleep
        self._rng = rng or random.Random()

    def delay(self, retry: int, error: RetryableError) -> float | None:
        """Seconds to wait before retry number `retry` (1-based), or None to give up now.

        Full jitter (uniform between 0 and the exponential ceiling) spreads a crowd of failed callers apart; a
        Retry-After is a floor, since the server knows when it will have room.
        """
        if retry >= self.policy.max_attempts:
            return None
        ceiling = min(self.policy.max_delay_s, self.policy.base_delay_s * 2 ** (retry - 1))
        wait = self._rng.uniform(0.0, ceiling)
        if isinstance(error, RateLimited) and error.retry_after is not None:
            if error.retry_after > self.policy.max_retry_after_s:
                return None
            wait = max(wait, error.retry_after)
        return wait

    async def call(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Await `attempt()` until it returns; retry `RetryableError`s as the policy allows.

        Raises:
            RetryableError: The last one, once the policy gives up.
        """
        retry = 1
        while True:
            try:
                return await attempt()
            except RetryableError as error:
                wait = self.delay(retry, error)
                if wait is None:
                    error.add_note(f"gave up after {retry} attempt(s)")
                    raise
                retry += 1
                await self._sleep(wait)
