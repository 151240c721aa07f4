"""`concurrency = "auto"`: the AIMD limit of calls in flight, on a fake clock (each round: fill the limit, let time
pass, answer or fail), and through the rate limiter's admission."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
from collections.abc import AsyncIterator, Callable, Sequence

import pytest

from providers.errors import BadRequest, NotSent, ProviderTimeout, RateLimited, ServerError
from runner.ladder.adaptive import MEASURED, SOLO_CALLS, STALL_PAUSE_S, STALLED_AFTER, TRIAL_STEP, AdaptiveLimit
from runner.ladder.ratelimit import LimitKey, Limits, RateLimiter
from tests.runner.ladder.gateway_doubles import FakeClock

START = [1, 3, 8]
"""Calls sent in the first round trips to a server that answers each as fast as the first: the first answer adds two
calls, the next two agreeing ones two each, the third one."""


async def round_trip(limit: AdaptiveLimit, clock: FakeClock, latency: float | list[float],
                     error: BaseException | None = None) -> int:
    """Sends as many calls as the limit allows at once; they answer (or fail with `error`) after `latency` seconds
    (one for all, or one per call, in the order of the list, which must be ascending).

    Returns:
        How many calls were sent.
    """
    sent = int(limit.limit)
    slots = [limit.slot() for _ in range(sent)]
    for slot in slots:
        await slot.__aenter__()
    start = clock.now
    latencies = latency if isinstance(latency, list) else [latency] * sent
    for slot, seconds in zip(slots, latencies[:sent], strict=True):
        clock.now = start + seconds
        with contextlib.suppress(*(type(error),) * (error is not None)):
            await slot.__aexit__(*((type(error), error, None) if error is not None else (None, None, None)))
    return sent


async def test_the_limit_doubles_per_round_trip_until_its_ceiling(fake_clock: FakeClock) -> None:
    limit = AdaptiveLimit(20, clock=fake_clock)
    sent = [await round_trip(limit, fake_clock, 1.0) for _ in range(6)]
    assert sent == [*START, 16, 20, 20]
    assert limit.cuts == 0


@pytest.mark.parametrize("error", [ProviderTimeout("t"), RateLimited("429"), ServerError("busy", status=503)])
async def test_a_full_server_halves_the_limit_once_per_round_trip(fake_clock: FakeClock, error: Exception) -> None:
    limit = AdaptiveLimit(64, clock=fake_clock)
    for _ in START:
        await round_trip(limit, fake_clock, 1.0)
    assert limit.limit == 16
    await round_trip(limit, fake_clock, 1.0, error)  # 16 calls fail together: one cut, not sixteen
    assert (limit.limit, limit.cuts) == (8, 1)
    # after a cut it grows by one per round trip, not by one per answer
    await round_trip(limit, fake_clock, 1.0)
    assert limit.limit == pytest.approx(9.0, abs=0.1)


@pytest.mark.parametrize("error", [BadRequest("no"), ServerError("bug", status=500), asyncio.CancelledError()])
async def test_errors_that_say_nothing_of_load_leave_the_limit(fake_clock: FakeClock, error: BaseException) -> None:
    limit = AdaptiveLimit(64, clock=fake_clock)
    await round_trip(limit, fake_clock, 1.0)
    await round_trip(limit, fake_clock, 1.0, error)
    assert (limit.limit, limit.cuts, limit.in_flight) == (3, 0, 0)


async def test_answers_slowing_down_cut_the_limit(fake_clock: FakeClock) -> None:
    """A one-slot server: n calls at once take n times as long, so the limit settles at a few calls, never 64."""
    limit = AdaptiveLimit(64, clock=fake_clock)
    sent = [await round_trip(limit, fake_clock, 1.0 * int(limit.limit)) for _ in range(100)]
    # three calls take three times as long as the first: back to one call at a time until the reference is a mean
    # of several calls alone, then doubling until the answers slow down
    assert sent[:SOLO_CALLS + 4] == [1, 3] + [1] * SOLO_CALLS + [2, 4]
    # one trial of two calls more (until `MEASURED` answers give its answers a second), then no creep up
    trial = [n for n in sent[SOLO_CALLS + 4:] if n > 3]
    assert len(trial) <= MEASURED // 4 and max(trial) <= 2 + TRIAL_STEP
    assert max(sent[50:]) <= 3 and sum(sent) / len(sent) < 2 and limit.cuts > 20


async def test_a_slow_first_answer_does_not_set_the_pace(fake_clock: FakeClock) -> None:
    """A server's first answer includes its warm-up (weights loaded, kernels compiled): were it the reference, a
    one-slot server would be sent ten calls at once."""
    limit = AdaptiveLimit(64, clock=fake_clock)
    await round_trip(limit, fake_clock, 10.0)
    sent = [await round_trip(limit, fake_clock, 1.0 * int(limit.limit)) for _ in range(50)]
    assert max(sent) <= 2 + TRIAL_STEP and sum(1 for n in sent[10:] if n > 3) <= MEASURED // 4  # one trial


async def test_a_server_that_keeps_its_pace_is_given_more(fake_clock: FakeClock) -> None:
    """A many-slot server (vLLM): latency grows a little with the batch, the limit reaches its ceiling."""
    limit = AdaptiveLimit(64, clock=fake_clock)
    for _ in range(8):
        await round_trip(limit, fake_clock, 1.0 + 0.005 * int(limit.limit))
    assert limit.limit == 64 and limit.cuts == 0


async def steady_stream(limit: AdaptiveLimit | FixedLimit, clock: FakeClock, calls: int, slots: int | None,
                        size_s: float | None = None,
                        slowdown: Sequence[float] | Callable[[float], Sequence[float]] = (1.0,)) -> list[int]:
    """Calls of `size_s` (None: 1 to 5 s, cycling) kept coming as fast as the limit lets them, to a server decoding
    `slots` at a time (first come, first served; None: as many as come), until `calls` are answered (the clock then
    reads the time of the last). A call that starts with k slots busy, itself included, takes `slowdown[k - 1]` times
    its size (a CPU server's slots share its cores; a GPU's barely slow down: 1.0); `slowdown` may be a function of
    the time. Returns the calls in flight as each answer arrived."""
    ends: list[tuple[float, int, contextlib.AbstractAsyncContextManager[object]]] = []
    server_free = [0.0] * (slots or 1)  # when each decoding slot is next free
    in_flight: list[int] = []
    sent = 0
    for _ in range(calls):
        while len(ends) < int(limit.limit):
            slot = limit.slot()
            await slot.__aenter__()
            size = size_s or 1.0 + sent % 5
            sent += 1
            if slots is None:
                end = clock.now + size
            else:
                free = min(range(slots), key=server_free.__getitem__)
                start = max(clock.now, server_free[free])
                busy = sum(1 for free_at in server_free if free_at > start)  # other slots decoding
                factors = slowdown(start) if callable(slowdown) else slowdown
                end = server_free[free] = start + size * factors[min(busy, len(factors) - 1)]
            heapq.heappush(ends, (end, sent, slot))
        end, _, slot = heapq.heappop(ends)
        clock.now = end
        in_flight.append(len(ends) + 1)
        await slot.__aexit__(None, None, None)
    return in_flight


class FixedLimit:
    """A fixed number of calls in flight (`concurrency = N`), as `steady_stream` drives a limit."""

    def __init__(self, limit: int) -> None:
        self.limit = float(limit)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        yield


BATCHING_A_LITTLE = (1.0, 1.7, 2.4, 3.1)
"""c calls together take 1 + 0.7 (c - 1) times a call's time each: +18 % answers a second at 2 calls, +25 % at 3,
+29 % at 4."""
LLAMA_CPP_ONE_THREAD = (1.0, 2.0, 2.75, 3.3)
"""llama.cpp's server, `--parallel 4 --threads 1`, SmolLM2-135M, 16 tokens a call, as measured on this project's
2-core machine (mean latency at 1, 2, 3, 4 calls in flight: 0.24, 0.47, 0.66, 0.79 s): two calls answer no faster
than one, four 21 % faster."""


@pytest.mark.parametrize("size_s", [1.0, None])
@pytest.mark.parametrize("slowdown", [BATCHING_A_LITTLE, LLAMA_CPP_ONE_THREAD], ids=["a-little", "llama-cpp"])
async def test_a_cpu_server_whose_slots_batch_a_little_is_kept_near_its_best_pace(
        fake_clock: FakeClock, size_s: float | None, slowdown: tuple[float, ...]) -> None:
    """llama.cpp `--parallel 4` on a CPU: past 4 calls they queue. Answers slow down as on a one-slot server's queue
    (on llama.cpp, two calls answer no faster than one), but the answers per second still rise further on: a trial of
    more calls finds it, and the limit keeps >= 95 % of 4 fixed calls' pace, the queue short."""
    fixed = FakeClock()
    await steady_stream(FixedLimit(4), fixed, 400, slots=4, size_s=size_s, slowdown=slowdown)
    limit = AdaptiveLimit(64, clock=fake_clock)
    in_flight = await steady_stream(limit, fake_clock, 400, slots=4, size_s=size_s, slowdown=slowdown)
    assert fake_clock.now <= fixed.now / 0.95, (fake_clock.now, fixed.now)
    assert max(in_flight[200:]) <= 2 * 4, in_flight


@pytest.mark.parametrize("size_s", [1.0, None])
@pytest.mark.parametrize("slowdown", [(1.0,), LLAMA_CPP_ONE_THREAD], ids=["gpu", "llama-cpp"])
async def test_a_server_that_says_its_slots_is_kept_full_from_the_first_round_trip(
        fake_clock: FakeClock, size_s: float | None, slowdown: tuple[float, ...]) -> None:
    """llama.cpp says its `--parallel` slots (`total_slots`): the limit starts there and 120 calls come at >= 98 % of
    four fixed calls' pace, where learning them costs a CPU server's a tenth (the first round trips, the cut back, the
    trials); past the slots it grows by a call a round trip, two calls at most (more would only queue)."""
    fixed = FakeClock()
    await steady_stream(FixedLimit(4), fixed, 120, slots=4, size_s=size_s, slowdown=slowdown)
    limit = AdaptiveLimit(64, clock=fake_clock)
    limit.declare_slots(4)
    in_flight = await steady_stream(limit, fake_clock, 120, slots=4, size_s=size_s, slowdown=slowdown)
    assert in_flight[0] == 4 and limit.slots == 4
    assert fake_clock.now <= fixed.now / 0.98, (fake_clock.now, fixed.now)
    assert max(in_flight) <= 4 + TRIAL_STEP, in_flight


async def test_answers_slowing_down_cut_no_lower_than_the_slots_said_and_a_429_does(fake_clock: FakeClock) -> None:
    """At or below its slots, a CPU server's answers slow down as its cores are shared: no cut; a 429 halves."""
    limit = AdaptiveLimit(64, clock=fake_clock)
    limit.declare_slots(4)
    sent = [await round_trip(limit, fake_clock, 1.0 + n) for n in range(12)]  # each round trip slower than the last
    assert min(sent) == 4 and limit.cuts > 0  # cut back to the slots after it grew past them, never below
    while int(limit.limit) > 4:
        await round_trip(limit, fake_clock, 12.0)
    await round_trip(limit, fake_clock, 1.0, RateLimited("429"))
    assert int(limit.limit) == 2


async def test_slots_said_after_the_first_call_or_of_one_change_nothing(fake_clock: FakeClock) -> None:
    """Said late (the limit already learns from answers) or a one-slot server's: the limit grows as it would."""
    late, one = AdaptiveLimit(64, clock=fake_clock), AdaptiveLimit(64, clock=fake_clock)
    await round_trip(late, fake_clock, 1.0)
    late.declare_slots(16)
    one.declare_slots(1)
    assert (late.slots, late.limit, one.slots, one.limit) == (1, START[1], 1, 1)


async def test_a_pace_that_rises_after_a_trial_found_none_is_found_by_a_later_trial(fake_clock: FakeClock) -> None:
    """A server whose slots first gain nothing together (another tenant on its CPU, or a busy machine spoiling a
    trial's count), then batch as llama.cpp's do: a trial gained nothing, a later one (after `TRIAL_PAUSE` calls)
    finds the pace, and the last answers come at >= 95 % of four fixed calls' pace."""
    def slowdown(now: float) -> Sequence[float]:
        return (1.0, 2.0, 3.0, 4.0) if now < 150 else LLAMA_CPP_ONE_THREAD

    limit = AdaptiveLimit(64, clock=fake_clock)
    in_flight = await steady_stream(limit, fake_clock, 1200, slots=4, size_s=1.0, slowdown=slowdown)
    fixed = FakeClock()
    await steady_stream(FixedLimit(4), fixed, 1200, slots=4, size_s=1.0, slowdown=slowdown)
    assert min(in_flight[-200:]) >= 3, in_flight
    assert fake_clock.now <= fixed.now / 0.95, (fake_clock.now, fixed.now)


async def test_a_storm_during_a_trial_ends_it(fake_clock: FakeClock) -> None:
    """A 429 while a trial counts the pace: the limit is halved and the trial over (its counts would compare other
    limits, and its end would raise the limit the storm cut)."""
    limit = AdaptiveLimit(64, clock=fake_clock)
    while limit.trying is None:  # a one-slot server: n calls take n times as long, until a slowdown starts a trial
        await round_trip(limit, fake_clock, 1.0 * int(limit.limit))
    level = limit.trying
    await round_trip(limit, fake_clock, 1.0, RateLimited("429"))
    assert limit.trying is None and int(limit.limit) == max(1, level // 2)
    # before a new trial could count its pace (`MEASURED` answers), nothing raises it to two calls more
    sent = [await round_trip(limit, fake_clock, 1.0 * int(limit.limit)) for _ in range(MEASURED // 2)]
    assert max(sent) <= level


async def test_answers_of_many_sizes_are_not_mistaken_for_a_queue(fake_clock: FakeClock) -> None:
    """Short and long answers on a server with room for all: the mean of calls alone is compared with the mean of
    all, so the spread of sizes alone never cuts the limit."""
    limit = AdaptiveLimit(64, clock=fake_clock)
    in_flight = await steady_stream(limit, fake_clock, 600, slots=None)
    assert limit.limit == 64 and limit.cuts == 0 and in_flight[-1] == 64


async def test_a_one_slot_server_with_answers_of_many_sizes_gets_a_few_calls(fake_clock: FakeClock) -> None:
    limit = AdaptiveLimit(64, clock=fake_clock)
    in_flight = await steady_stream(limit, fake_clock, 600, slots=1)
    # slow start overshoots once (to 7, a few answers' wait), then it holds two or three, never creeping up: but for a
    # trial of two calls more now and then, each `MEASURED` answers long, fewer and fewer (the pace never rose)
    trials = [n for n in in_flight[100:] if n > 3]
    assert max(in_flight) <= 8 and max(in_flight[100:]) <= 3 + TRIAL_STEP and limit.cuts > 10
    assert len(trials) <= 2 * MEASURED, in_flight


async def test_calls_past_the_limit_wait_their_turn_and_a_cancelled_wait_frees_nothing(fake_clock: FakeClock) -> None:
    limit = AdaptiveLimit(64, clock=fake_clock)
    order: list[int] = []
    first = limit.slot()
    await first.__aenter__()  # the limit is one call

    async def call(number: int) -> None:
        async with limit.slot():
            order.append(number)

    waiting = [asyncio.create_task(call(n)) for n in range(3)]
    await asyncio.sleep(0)
    waiting[1].cancel()
    await asyncio.sleep(0)
    assert order == [] and limit.in_flight == 1
    fake_clock.now += 1.0
    await first.__aexit__(None, None, None)
    await asyncio.gather(waiting[0], waiting[2])
    assert order == [0, 2] and limit.in_flight == 0 and waiting[1].cancelled()


async def test_the_rate_limiter_times_the_request_not_the_wait_for_its_buckets(fake_clock: FakeClock) -> None:
    key = LimitKey("openai-compatible", "smol", "-", "http://127.0.0.1:8080/v1")
    limiter = RateLimiter({key.display: Limits(rpm=60, adaptive=True, max_concurrency=8)}, burst_s=1.0,
                          clock=fake_clock, sleep=fake_clock.sleep)
    adaptive = limiter.adaptive_limit(key)
    assert adaptive is not None and adaptive.ceiling == 8
    for _ in range(SOLO_CALLS):  # one request a second: each waits ~1 s for the bucket, then takes 0.1 s
        async with limiter.admit(key, estimated_tokens=10):
            fake_clock.now += 0.1
    # 1.1 s counted against 0.1 s would have cut it; one call at a time grows the limit to 3 (the first answer), and
    # no further
    assert adaptive.cuts == 0 and adaptive.limit == 3
    with pytest.raises(ProviderTimeout):
        async with limiter.admit(key, estimated_tokens=10):
            raise ProviderTimeout("t")
    assert int(adaptive.limit) == 1


async def test_a_server_that_stopped_answering_gets_no_call_for_a_while_then_one(fake_clock: FakeClock) -> None:
    limit = AdaptiveLimit(64, clock=fake_clock)
    for _ in START:
        await round_trip(limit, fake_clock, 1.0)
    for _ in range(STALLED_AFTER):  # 16, then 8, then 4 calls in flight, all timing out: three round trips
        await round_trip(limit, fake_clock, 120.0, ProviderTimeout("t"))
    with pytest.raises(NotSent, match="answered none of the last 3 calls"):
        await round_trip(limit, fake_clock, 1.0)
    fake_clock.now += STALL_PAUSE_S
    await round_trip(limit, fake_clock, 1.0)  # one is let through; it is answered: calls flow again
    await round_trip(limit, fake_clock, 1.0)


@pytest.mark.parametrize(("slots", "ramp"), [(4, 1), (16, 3), (64, 5), (256, 7)])
async def test_a_server_of_several_slots_is_kept_full_without_a_long_queue(fake_clock: FakeClock, slots: int,
                                                                         ramp: int) -> None:
    """llama.cpp `--parallel N`, vLLM: N requests decoded at once, the rest queue. Against N fixed calls in flight
    (the best setting), the limit costs `ramp` round trips to fill the slots (1, 3, 8, 16, 32 calls...), then keeps them
    full: 120 calls on 4 slots at >= 95 % of the best pace. The queue stays short of what would time calls out (64
    fixed calls on 4 slots wait 16 times a call's latency)."""
    calls = 30 * slots
    limit = AdaptiveLimit(256, clock=fake_clock)
    in_flight = await steady_stream(limit, fake_clock, calls, slots, size_s=1.0)
    assert fake_clock.now <= 30 + ramp  # the last answer, each call taking 1 s: 30 s with N in flight
    assert max(in_flight) <= 5 * slots and max(in_flight[calls // 2:]) <= 3 * slots, max(in_flight)


async def test_after_a_storm_of_429s_the_limit_doubles_back(fake_clock: FakeClock) -> None:
    """A provider's burst of 429s (or a restart refusing calls) halves the limit to one call; once answers come again
    it doubles per round trip back to half what the storm found, then grows by one per round trip."""
    limit = AdaptiveLimit(256, clock=fake_clock)
    while limit.limit < 64:
        await round_trip(limit, fake_clock, 1.0)
    while int(limit.limit) > 1:
        await round_trip(limit, fake_clock, 1.0, RateLimited("429"))
    sent = [await round_trip(limit, fake_clock, 1.0) for _ in range(6)]
    assert sent == [1, 2, 4, 8, 16, 32]  # one call per round trip more would take 31 round trips to reach 32
    assert limit.limit == pytest.approx(33.0, abs=0.1)


async def test_after_a_restart_that_timed_calls_out_the_limit_doubles_back(fake_clock: FakeClock) -> None:
    limit = AdaptiveLimit(64, clock=fake_clock)
    for _ in START:
        await round_trip(limit, fake_clock, 1.0)
    for _ in range(STALLED_AFTER):  # 16, 8, then 4 calls time out: the server is down
        await round_trip(limit, fake_clock, 120.0, ProviderTimeout("t"))
    fake_clock.now += STALL_PAUSE_S  # back up: its calls are answered again
    sent = [await round_trip(limit, fake_clock, 1.0) for _ in range(3)]
    assert sent == [2, 4, 8]
    assert limit.limit == pytest.approx(9.0, abs=0.1)
