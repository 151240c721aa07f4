"""Bounded retries: Retry-After honoured, 5xx backoff bounded, permanent errors not retried, last error re-raised."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cache.store import CacheStore
from providers.errors import AuthError, BadRequest, ContextTooLong, ProviderTimeout, RateLimited, ServerError
from providers.interface import ChatRequest, Message
from runner.ladder.calls import CallRecord
from runner.ladder.gateway import Gateway
from runner.ladder.ratelimit import Limits, RateLimiter
from runner.ladder.retry import Retrier, RetryPolicy
from tests.runner.ladder.gateway_doubles import FakeClock, ScriptedProvider


class Flaky:
    """An attempt function failing with the given errors, then returning "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.attempts = 0

    async def __call__(self) -> str:
        self.attempts += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def retrier(clock: FakeClock, **policy: float) -> Retrier:
    return Retrier(RetryPolicy(**policy), sleep=clock.sleep, rng=random.Random(7))  # type: ignore[arg-type]


async def test_retry_after_is_a_floor(fake_clock: FakeClock) -> None:
    attempt = Flaky(RateLimited("429", retry_after=7.5), RateLimited("429", retry_after=0.0))
    assert await retrier(fake_clock).call(attempt) == "ok"
    assert attempt.attempts == 3
    assert fake_clock.sleeps[0] >= 7.5  # the server's wait, never less
    assert fake_clock.sleeps[1] <= 1.0  # no Retry-After to honour: jitter under the second ceiling (0.5 * 2)


async def test_server_errors_back_off_within_exponential_ceilings_then_give_up(fake_clock: FakeClock) -> None:
    errors = [ServerError(f"500 #{i}", status=500) for i in range(10)]
    attempt = Flaky(*errors)
    with pytest.raises(ServerError) as caught:
        await retrier(fake_clock, max_attempts=6, base_delay_s=1.0, max_delay_s=8.0).call(attempt)
    assert caught.value is errors[5]  # the last error itself, re-raised
    assert "gave up after 6 attempt(s)" in caught.value.__notes__[0]
    assert attempt.attempts == 6 and len(fake_clock.sleeps) == 5
    ceilings = [1.0, 2.0, 4.0, 8.0, 8.0]
    assert all(0.0 <= s <= c for s, c in zip(fake_clock.sleeps, ceilings))
    assert len(set(fake_clock.sleeps)) == 5  # jittered, not a fixed schedule


@pytest.mark.parametrize("error", [AuthError("401", status=401), BadRequest("400", status=400),
                                   ContextTooLong("too long", status=400), ValueError("not ours")])
async def test_permanent_and_foreign_errors_are_not_retried(fake_clock: FakeClock, error: Exception) -> None:
    attempt = Flaky(error)
    with pytest.raises(type(error)):
        await retrier(fake_clock).call(attempt)
    assert attempt.attempts == 1 and fake_clock.sleeps == []


async def test_timeouts_are_retried(fake_clock: FakeClock) -> None:
    attempt = Flaky(ProviderTimeout("timed out"), ProviderTimeout("timed out"))
    assert await retrier(fake_clock).call(attempt) == "ok" and attempt.attempts == 3


async def test_an_unreasonable_retry_after_is_not_waited_for(fake_clock: FakeClock) -> None:
    attempt = Flaky(RateLimited("429", retry_after=3600.0))
    with pytest.raises(RateLimited):
        await retrier(fake_clock, max_retry_after_s=300.0).call(attempt)
    assert attempt.attempts == 1 and fake_clock.sleeps == []


async def test_gateway_retries_through_the_limiter_and_records_them(
        tmp_path: Path, scripted: ScriptedProvider, fake_clock: FakeClock, records: list[CallRecord]) -> None:
    scripted.fail_next(RateLimited("429", retry_after=4.0), ServerError("502", status=502))
    limiter = RateLimiter(default=Limits(rpm=60), clock=fake_clock, sleep=fake_clock.sleep)
    with CacheStore(tmp_path) as store:
        gw = Gateway(resolve=lambda _: scripted, cache=store, limiter=limiter, retrier=retrier(fake_clock),
                     on_call=records.append)
        response = await gw.complete(ChatRequest("fake:m", (Message("user", "hi"),)))
    assert response.text.startswith("echo") and len(scripted.calls) == 3
    assert records[0].retries == 2 and records[0].error_type is None
    # Each attempt took a request from the 1/s bucket, and the 429 paused it for its Retry-After.
    assert fake_clock.now >= 4.0 + 1.0


async def test_gateway_ends_a_failing_call_with_the_provider_error(
        scripted: ScriptedProvider, fake_clock: FakeClock, records: list[CallRecord]) -> None:
    scripted.fail_next(*[ServerError("503", status=503) for _ in range(5)])
    gw = Gateway(resolve=lambda _: scripted, retrier=retrier(fake_clock, max_attempts=3), on_call=records.append)
    with pytest.raises(ServerError):
        await gw.complete(ChatRequest("fake:m", (Message("user", "hi"),)))
    assert len(scripted.calls) == 3
    assert (records[0].error_type, records[0].retries, records[0].hit) == ("ServerError", 2, False)
