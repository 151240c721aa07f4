"""RPM / TPM buckets and concurrency caps, on a fake clock: calls wait, and never exceed the limits."""

from __future__ import annotations

import asyncio
import time

import pytest

from providers.openai_chat import OpenAIChat
from runner.ladder.gateway import Target
from runner.ladder.ratelimit import LimitKey, Limits, RateLimiter, TokenBucket
from tests.runner.ladder.gateway_doubles import FakeClock

KEY = LimitKey("openai", "gpt-4o-mini", "abc123")


def most_in_any_window(events: list[tuple[float, float]], window: float) -> float:
    """The largest total amount taken in any closed time window of length `window`."""
    return max(sum(a for t, a in events if start <= t <= start + window) for start, _ in events)


async def test_rpm_bucket_waits_and_never_exceeds(fake_clock: FakeClock) -> None:
    limiter = RateLimiter({"openai/gpt-4o-mini": Limits(rpm=120)}, burst_s=1.0, clock=fake_clock,
                          sleep=fake_clock.sleep)
    sent: list[tuple[float, float]] = []

    async def one() -> None:
        async with limiter.admit(KEY, estimated_tokens=10):
            sent.append((fake_clock.now, 1))

    await asyncio.gather(*(one() for _ in range(200)))
    # 2 requests/s, 2 of burst: in any 1 s at most 2 + 2 (burst + refill); over 10 s at most 2 + 20.
    assert most_in_any_window(sent, 1.0) <= 4
    assert most_in_any_window(sent, 10.0) <= 22
    # ...and it does not wait longer than needed: 200 requests at 2/s after a burst of 2 take 99 s.
    assert fake_clock.now == pytest.approx(99.0)


async def test_tpm_bucket_is_token_weighted_and_reconciled(fake_clock: FakeClock) -> None:
    limiter = RateLimiter(default=Limits(tpm=6000), burst_s=1.0, clock=fake_clock, sleep=fake_clock.sleep)
    sent: list[tuple[float, float]] = []

    async def one(actual: int) -> None:
        async with limiter.admit(KEY, estimated_tokens=100) as lease:
            sent.append((fake_clock.now, actual))
            lease.reconcile(actual)

    # Each call reserves 100 tokens but is billed 25: reconciliation gives 75 back at once.
    await asyncio.gather(*(one(25) for _ in range(200)))
    assert most_in_any_window(sent, 10.0) <= 100 + 100 * 10  # burst + 100 tokens/s, in billed tokens
    # 200 calls x 25 tokens = 5,000 tokens at 100/s: ~50 s, not the 200 s that unreconciled estimates would take.
    assert 40.0 <= fake_clock.now <= 51.0


async def test_a_call_larger_than_the_bucket_still_goes_once_it_is_full(fake_clock: FakeClock) -> None:
    bucket = TokenBucket(60, burst_s=1.0, clock=fake_clock, sleep=fake_clock.sleep)  # 1 unit/s, capacity 1
    await bucket.take(5)  # full: admitted, leaves 4 units of debt
    await bucket.take(1)  # waits out the debt plus one unit
    assert fake_clock.now == pytest.approx(5.0)


async def test_units_given_back_wake_the_waiting_take_at_once() -> None:
    # Real time: 100 tokens/s, capacity 100. A call reserves 79 (prompt + max_tokens) and is billed 32.
    bucket = TokenBucket(6000, burst_s=1.0, clock=time.monotonic, sleep=asyncio.sleep)
    started = time.monotonic()
    await bucket.take(79)  # 21 left: the next take of 79 must wait 0.58 s for refill alone

    async def reconcile_soon() -> None:
        await asyncio.sleep(0.01)
        bucket.give_back(79 - 32)  # 68 at 0.01 s: 11 more units, 0.11 s of refill, and the next take can go

    refund = asyncio.create_task(reconcile_soon())
    await bucket.take(79)
    await refund
    assert time.monotonic() - started < 0.4  # ~0.12 s; sleeping out the pre-refund 0.58 s was the bug


async def test_a_429_pauses_and_empties_the_buckets(fake_clock: FakeClock) -> None:
    limiter = RateLimiter(default=Limits(rpm=600, tpm=60_000), burst_s=1.0, clock=fake_clock,
                          sleep=fake_clock.sleep)
    async with limiter.admit(KEY, 10):
        pass
    limiter.rate_limited(KEY, retry_after=7.0)
    async with limiter.admit(KEY, 10):
        assert fake_clock.now >= 7.0
    other = LimitKey("openai", "gpt-4o-mini", "another-key")  # another key's buckets are not paused
    started = fake_clock.now
    async with limiter.admit(other, 10):
        assert fake_clock.now == started


async def test_a_day_long_retry_after_pauses_the_key_for_max_pause_s_not_a_day(fake_clock: FakeClock) -> None:
    limiter = RateLimiter(default=Limits(rpm=600), burst_s=1.0, max_pause_s=300.0, clock=fake_clock,
                          sleep=fake_clock.sleep)
    limiter.rate_limited(KEY, retry_after=86_400.0)  # a daily quota: the call that got it is not retried
    async with limiter.admit(KEY, 10):
        assert 300.0 <= fake_clock.now <= 301.0  # the pause, then one request of refill (0.1 s)


async def test_concurrency_caps_per_model_and_global() -> None:
    limiter = RateLimiter({"p/a": Limits(max_concurrency=2)}, max_concurrency=3)
    in_flight = {"p/a": 0, "p/b": 0}
    peaks = {"p/a": 0, "p/b": 0, "all": 0}

    async def one(key: LimitKey) -> None:
        async with limiter.admit(key, 1):
            in_flight[key.display] += 1
            peaks[key.display] = max(peaks[key.display], in_flight[key.display])
            peaks["all"] = max(peaks["all"], sum(in_flight.values()))
            await asyncio.sleep(0.001)
            in_flight[key.display] -= 1

    await asyncio.gather(*(one(LimitKey("p", "a")) for _ in range(20)), *(one(LimitKey("p", "b")) for _ in range(20)))
    assert (peaks["p/a"], peaks["all"]) == (2, 3)


async def test_a_model_at_its_cap_does_not_hold_global_slots() -> None:
    limiter = RateLimiter({"p/a": Limits(max_concurrency=2)}, max_concurrency=3)
    gate = asyncio.Event()

    async def held(key: LimitKey) -> None:
        async with limiter.admit(key, 1):
            await gate.wait()

    blocked = [asyncio.create_task(held(LimitKey("p", "a"))) for _ in range(10)]
    await asyncio.sleep(0)
    async with asyncio.timeout(1.0):  # eight "a" calls queue on their model's cap, not on the global slots
        async with limiter.admit(LimitKey("p", "b"), 1):
            pass
    gate.set()
    await asyncio.gather(*blocked)


def test_buckets_are_per_api_key_and_never_hold_the_key() -> None:
    secrets = ("sk-test-first-key-0000", "sk-test-second-key-1111")
    a, b = (Target.of("openai:gpt-4o-mini", OpenAIChat("gpt-4o-mini", api_key=s)) for s in secrets)
    assert a.limit_key != b.limit_key
    assert a.limit_key.display == b.limit_key.display == "openai/gpt-4o-mini@api.openai.com/v1"
    for target, secret in zip((a, b), secrets):
        assert len(target.limit_key.key_id) == 12 and secret not in repr(target.limit_key)


def test_buckets_are_per_endpoint_and_the_display_shows_no_credentials() -> None:
    a, b = (Target.of(f"openai-compatible:m@{url}", OpenAIChat("m", api_key="EMPTY", base_url=url))
            for url in ("http://127.0.0.1:8000/v1", "http://user:secret@127.0.0.1:8001/v1"))
    assert a.limit_key != b.limit_key and a.limit_key.key_id == b.limit_key.key_id
    assert (a.limit_key.display, b.limit_key.display) == ("openai/m@127.0.0.1:8000/v1", "openai/m@127.0.0.1:8001/v1")
    assert LimitKey("offline", "greedy").display == "offline/greedy"  # a provider without an endpoint


async def test_a_429_pauses_a_model_without_rpm_or_tpm_limits(fake_clock: FakeClock) -> None:
    limiter = RateLimiter(clock=fake_clock, sleep=fake_clock.sleep)  # no buckets at all
    limiter.rate_limited(KEY, retry_after=7.0)
    async with limiter.admit(KEY, 10):
        assert fake_clock.now >= 7.0
    limiter.rate_limited(KEY, retry_after=None)  # no Retry-After: the limiter's own backoff
    started = fake_clock.now
    async with limiter.admit(KEY, 10):
        assert fake_clock.now >= started + 1.0
    other = LimitKey("openai", "gpt-4o-mini", "another-key")
    started = fake_clock.now
    async with limiter.admit(other, 10):
        assert fake_clock.now == started
