"""The scheduler alone: its bounds, its admission gate, and stopping with a grace period."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from runner.engine.scheduler import BUDGET, COMPLETED, INTERRUPTED, Scheduler
from runner.store.records import RolloutKey


def keys(models: dict[str, int]) -> list[RolloutKey]:
    return [RolloutKey("b", "s", str(n), model, "st", 0) for model, count in models.items() for n in range(count)]


class Probe:
    """A `run_one` that records how many rollouts run at once, overall and per model.

    With `hold_until`, rollouts wait until that many run at once, then all go: the bound is reached for sure.
    """

    def __init__(self, seconds: float = 0.001, hold_until: int | None = None) -> None:
        self.seconds = seconds
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.done: list[RolloutKey] = []
        self.hold_until = hold_until
        self.released = asyncio.Event()

    async def __call__(self, key: RolloutKey) -> None:
        for name in (key.model, "*"):
            self.now[name] += 1
            self.peak[name] = max(self.peak[name], self.now[name])
        if self.now["*"] == self.hold_until:
            self.released.set()
        try:
            if self.hold_until is not None:
                await asyncio.wait_for(self.released.wait(), 30)
            await asyncio.sleep(self.seconds)
        finally:
            for name in (key.model, "*"):
                self.now[name] -= 1
        self.done.append(key)


async def test_thousands_in_flight_within_the_global_and_per_model_bounds() -> None:
    probe = Probe(seconds=0.01, hold_until=2000)
    work = keys({"a": 3000, "b": 3000, "c": 400})
    scheduler = Scheduler(2000, {"a": 500, "b": None, "c": 20})

    assert await scheduler.run(work, probe) == COMPLETED

    assert sorted(probe.done) == sorted(work)
    assert probe.peak["*"] == 2000
    assert probe.peak["a"] == 500 and probe.peak["c"] == 20


async def test_admitting_hundreds_never_blocks_the_loop(strict_loop) -> None:
    probe = Probe(seconds=0.01, hold_until=300)
    assert await Scheduler(300).run(keys({"a": 200, "b": 200}), probe) == COMPLETED
    assert probe.peak["*"] == 300


async def test_each_model_keeps_its_key_order() -> None:
    probe = Probe(seconds=0)
    work = keys({"a": 50, "b": 50})
    await Scheduler(1).run(work, probe)
    assert [k for k in probe.done if k.model == "a"] == [k for k in work if k.model == "a"]


async def test_a_closed_gate_stops_admission_and_lets_in_flight_rollouts_end() -> None:
    probe = Probe(seconds=0.02)
    admitted = 0

    def admit() -> bool:
        nonlocal admitted
        admitted += 1
        return admitted <= 30

    scheduler = Scheduler(8, admit=admit)
    assert await scheduler.run(keys({"a": 100}), probe) == BUDGET
    assert len(probe.done) == 30 and scheduler.not_started == 70


async def test_stop_waits_for_the_grace_period_then_cancels() -> None:
    finished, cancelled = [], []

    async def run_one(key: RolloutKey) -> None:
        try:
            await asyncio.sleep(0.2 if int(key.task) % 2 else 30)
        except asyncio.CancelledError:
            cancelled.append(key)
            raise
        finished.append(key)

    scheduler = Scheduler(10, grace_s=0.3)
    asyncio.get_running_loop().call_later(0.1, scheduler.stop)
    started = asyncio.get_running_loop().time()
    assert await scheduler.run(keys({"a": 100}), run_one) == INTERRUPTED
    elapsed = asyncio.get_running_loop().time() - started

    # The first ten were admitted; the five quick ones finished, the five slow ones were cancelled at the grace end.
    assert len(finished) == 5 and len(cancelled) == 5 and scheduler.not_started == 90
    assert 0.35 <= elapsed < 5


async def test_a_second_stop_cancels_at_once() -> None:
    async def run_one(key: RolloutKey) -> None:
        await asyncio.sleep(30)

    scheduler = Scheduler(4, grace_s=60)
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, scheduler.stop)
    loop.call_later(0.1, scheduler.stop)
    assert await asyncio.wait_for(scheduler.run(keys({"a": 10}), run_one), 5) == INTERRUPTED


async def test_cut_says_when_a_stop_ends_the_rollouts_under_way() -> None:
    """What rollouts run elsewhere (a replay's worker processes) are cut short by: the grace period's end, or a second
    stop; never the first stop alone."""
    scheduler = Scheduler(4, grace_s=0.2)
    assert not scheduler.cut
    scheduler.stop()
    assert not scheduler.cut
    await asyncio.sleep(0.3)
    assert scheduler.cut
    hurried = Scheduler(4, grace_s=60)
    hurried.stop()
    hurried.stop()
    assert hurried.cut


async def test_a_run_ending_error_cancels_the_others() -> None:
    async def run_one(key: RolloutKey) -> None:
        if key.task == "3":
            raise RuntimeError("bad key")
        await asyncio.sleep(30)

    with pytest.raises(RuntimeError, match="bad key"):
        await asyncio.wait_for(Scheduler(10).run(keys({"a": 10}), run_one), 5)
