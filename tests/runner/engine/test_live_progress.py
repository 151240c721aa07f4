"""Live progress rendered into a string at a fixed width with a fake clock (rich's own test idiom)."""

from __future__ import annotations

import asyncio
import io
import re

from rich.console import Console

from benchmarks.base import BUDGET_EXHAUSTED, DELIVERED, RolloutResult
from providers.interface import Usage
from runner.engine.progress import TOTAL, LiveProgress, RunStats
from runner.ladder.batches import BatchCounts
from runner.ladder.budget import SpendCap
from runner.ladder.calls import CallRecord
from runner.store.records import RolloutKey, RolloutRecord


def call(hit: bool, cost: float, retries: int = 0) -> CallRecord:
    return CallRecord("x:a", "k", hit, Usage(300, 0, 200), 0.0 if hit else cost, cost if hit else 0.0, 0.1, retries)


def finished(model: str, status: str) -> RolloutRecord:
    return RolloutRecord(RolloutKey("toy", "train", "1", model, "scripted", 0), RolloutResult(status))


def render(disable: bool = False, width: int = 160, a: str = "a", b: str = "b") -> str:
    output = io.StringIO()
    console = Console(file=output, force_terminal=True, width=width, color_system=None)
    readings = iter([0.0])
    clock = lambda: next(readings, 10.0)  # noqa: E731  the run started at 0; it is 10 s later ever after
    cap = SpendCap(5.0, spent_usd=1.0)  # $1 spent by an earlier session, on model a's finished rollout
    stats = RunStats(cap, clock=clock, spent_before={a: 1.0})
    with LiveProgress(stats, {a: 4, b: 2}, {a: 1}, console, disable=disable) as live:
        observe = stats.observer(a)
        for record in (call(False, 0.25, retries=2), call(True, 0.25), call(False, 0.25)):
            observe(record)
            cap.settle(asyncio.run(cap.reserve(record.cost_usd or 0.0)), record.cost_usd or 0.0)
        live.done(finished(a, DELIVERED))
        live.done(finished(b, BUDGET_EXHAUSTED))
        assert live.line().endswith(" · ETA -")  # 2 rollouts in this session say nothing about the rate yet
    return output.getvalue()


def test_rows_show_done_total_money_rates_hits_retries_and_failures_by_kind() -> None:
    text = render().rsplit("\x1b[2K", 1)[-1].splitlines()  # the last frame
    row_a = next(line for line in text if line.startswith("a "))
    row_b = next(line for line in text if line.startswith("b "))
    total = next(line for line in text if line.startswith("total"))
    # every row on the run's basis: done and money of all sessions (a's $1 before and $0.50 now, as the total)
    assert "2/4" in row_a and ("$1.50 · 100 tok/s · 3 calls, 33% hits · 2 retries · 0 agent failures · "
                               "0 provider errors") in row_a
    assert "1/2" in row_b and "$0.00 · 0 tok/s" in row_b
    assert "0 agent failures · 0 provider errors · 1 cut by the spend cap" in row_b
    assert "3/6" in total and "$1.50 / $5.00" in total and "1 cut by the spend cap" in total
    assert "ETA" not in "".join(text)  # not yet meaningful


def test_at_80_columns_no_row_wraps_even_with_long_labels() -> None:
    long_a = "openai-compatible:llama-3.1-8b-instruct@http://gpu-node-17.internal:8000/v1"
    text = render(width=80, a=long_a, b="anthropic:claude-sonnet-4-5").rsplit("\x1b[2K", 1)[-1].splitlines()
    rows = [line for line in text if line.strip() and not line.startswith("\x1b")]
    assert len(rows) == 3 and all(len(line) <= 80 for line in rows), rows  # one line per model, one total
    row_a = next(line for line in rows if line.startswith("openai-compatible:"))
    assert "2/4" in row_a and "$1.50 · 0 agent / 0 provider failures" in row_a  # money and failures fit


def test_disabled_progress_draws_nothing() -> None:
    assert render(disable=True) == ""


def test_the_total_row_shows_the_batches_of_a_batch_run() -> None:
    counts = BatchCounts(submitted=3, ended=1, requests=120, answered=40)
    stats = RunStats(SpendCap(), batches=counts)
    assert stats.describe(TOTAL).endswith("batches 3 submitted, 2 in progress, 1 ended, 40/120 requests done")
    assert "batches" not in RunStats(SpendCap()).describe(TOTAL)


def test_the_eta_shows_once_enough_rollouts_finished_in_this_session() -> None:
    ticks = iter(range(1_000_000))
    stats = RunStats(SpendCap(), clock=lambda: float(next(ticks)))  # one second per reading
    console = Console(file=io.StringIO(), force_terminal=True, width=160, color_system=None)
    with LiveProgress(stats, {"a": 100}, {"a": 50}, console, disable=True) as live:
        for n in range(1, 11):
            assert live.line().endswith(" · ETA -"), n  # 50 done before this session say nothing of its pace
            live.done(finished("a", DELIVERED))
        assert re.search(r" · ETA \d+:\d\d:\d\d$", live.line()), live.line()
