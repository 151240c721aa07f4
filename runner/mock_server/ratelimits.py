"""Server-side RPM and TPM limits per API key, as token buckets, and the `x-ratelimit-*` headers.

Each key gets a request bucket (capacity `rpm`, refilled at `rpm / 60` per second) and a token bucket (capacity
`tpm`, refilled at `tpm / 60` per second), both full at the key's first request: the continuous replenishment
OpenAI describes for its limits. A request is admitted only if both buckets hold enough (1 request; its input +
output tokens, i.e. exactly what `usage` bills), and then both are charged. A client that keeps an identical
bucket and reconciles its token reservation to the billed usage therefore never sees a 429.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass


class TokenBucket:
    """A bucket of `capacity` units refilled continuously at `per_s` units per second."""

    def __init__(self, capacity: float, per_s: float, now: float) -> None:
        self.capacity = capacity
        self.per_s = per_s
        self.level = capacity
        self._updated = now

    def refill(self, now: float) -> None:
        """Add what accrued since the last refill, up to capacity."""
        self.level = min(self.capacity, self.level + (now - self._updated) * self.per_s)
        self._updated = now

    def wait_s(self, amount: float) -> float:
        """Seconds until `amount` units are available (0 if they are; inf if they never will be)."""
        if amount > self.capacity:
            return math.inf
        return max(0.0, (amount - self.level) / self.per_s)

    def reset_s(self) -> float:
        """Seconds until the bucket is full again."""
        return (self.capacity - self.level) / self.per_s


@dataclass(frozen=True, slots=True)
class Admission:
    """The verdict on one request."""

    admitted: bool
    retry_after_s: float
    """0 when admitted; inf when the request can never fit (more tokens than the TPM limit)."""
    limit: str | None
    """The limit that refused it: `requests` or `tokens`; None when admitted."""
    headers: dict[str, str]
    """`x-ratelimit-*` headers describing the buckets after this request."""


class RateLimits:
    """Per-key RPM and TPM buckets; either limit may be None (unlimited)."""

    def __init__(self, rpm: int | None, tpm: int | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._clock = clock
        self._buckets: dict[str, tuple[TokenBucket | None, TokenBucket | None]] = {}

    def admit(self, key: str, tokens: int) -> Admission:
        """Admit and charge a request of `tokens` tokens from `key`, or say how long to wait."""
        now = self._clock()
        requests, token_bucket = self._for(key, now)
        wait, limit = 0.0, None
        for name, bucket, amount in (("requests", requests, 1), ("tokens", token_bucket, tokens)):
            if bucket is not None:
                bucket.refill(now)
                if bucket.wait_s(amount) > wait:
                    wait, limit = bucket.wait_s(amount), name
        if limit is None:
            for bucket, amount in ((requests, 1), (token_bucket, tokens)):
                if bucket is not None:
                    bucket.level -= amount
        return Admission(limit is None, wait, limit, self._headers(requests, token_bucket))

    def _for(self, key: str, now: float) -> tuple[TokenBucket | None, TokenBucket | None]:
        if key not in self._buckets:
            self._buckets[key] = (
                TokenBucket(self.rpm, self.rpm / 60.0, now) if self.rpm else None,
                TokenBucket(self.tpm, self.tpm / 60.0, now) if self.tpm else None,
            )
        return self._buckets[key]

    @staticmethod
    def _headers(requests: TokenBucket | None, tokens: TokenBucket | None) -> dict[str, str]:
        headers: dict[str, str] = {}
        for name, bucket in (("requests", requests), ("tokens", tokens)):
            if bucket is not None:
                headers[f"x-ratelimit-limit-{name}"] = str(int(bucket.capacity))
                headers[f"x-ratelimit-remaining-{name}"] = str(max(0, math.floor(bucket.level)))
                headers[f"x-ratelimit-reset-{name}"] = f"{bucket.reset_s():.3f}s"  # OpenAI's duration style
        return headers
