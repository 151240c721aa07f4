"""Live progress of a run: done / total per model, ETA, $ spent / cap, tokens/s, cache hit %, retries, and the
rollouts that did not deliver, agent failures apart from provider errors (and the rarer kinds: `failure_counts`).

`RunStats` is updated as calls and rollouts end (plain counters, no I/O); `LiveProgress` shows it with rich, one
row per model and a total row whose columns read the counters at each refresh. Every row counts the whole run, earlier
sessions included: rollouts done, and money (the total row: the spend cap's ledger; a model row: its stored rollouts'
cost plus this session's calls). The ETA shows once `ETA_AFTER` rollouts of the row finished in this session; no
row wraps (below `WIDE` columns a row drops its bar, the rates and the calls). Where the console is not a
terminal (nohup, cron, a CI log) it prints one plain line every `log_every_s` seconds instead; `--quiet` shows nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn
from rich.progress import Task as ProgressTask
from rich.table import Column
from rich.text import Text

from runner.ladder.batches import BatchCounts
from runner.ladder.budget import SpendCap
from runner.ladder.calls import CallRecord
from runner.outcomes import failure_counts, failure_kind
from runner.store.records import RolloutRecord

TOTAL = "total"
ETA_AFTER = 10
"""Rollouts of a row finished in this session before its ETA is shown (fewer say nothing about the rate)."""
WIDE = 120
"""Console columns below which rows drop the bar and the rates (tok/s, hits, retries), so that none wraps."""
LABEL_WIDTH = 28
"""Longest model label shown in a row (a longer one ends in an ellipsis)."""


@dataclass(slots=True)
class Counters:
    """What one model (or the whole run) has done in this session."""

    calls: int = 0
    hits: int = 0
    retries: int = 0
    billed_tokens: int = 0
    """Input + output tokens of calls that reached a provider (hits excluded)."""
    cost_usd: float = 0.0
    failures: Counter[str] = field(default_factory=Counter)
    """Rollouts that ended in another status than `delivered`, by `failure_kind`."""

    def add_call(self, call: CallRecord) -> None:
        self.calls += 1
        self.hits += call.hit
        self.retries += call.retries
        if not call.hit:
            self.billed_tokens += call.usage.input_tokens + call.usage.output_tokens
        self.cost_usd += call.cost_usd or 0.0


class RunStats:
    """Counters per model label and for the run, fed by the engine.

    Args:
        spend_cap: The run's cap (its `spent_usd` includes earlier sessions).
        clock: Seconds, for rates.
        batches: The batch transport's counts, when some model goes through a batch API.
        spent_before: Per model label, what its stored rollouts of earlier sessions cost.
    """

    def __init__(self, spend_cap: SpendCap, clock: Callable[[], float] = time.monotonic,
                 batches: BatchCounts | None = None, spent_before: Mapping[str, float] | None = None) -> None:
        self.spend_cap = spend_cap
        self.batches = batches
        self.spent_before = dict(spent_before or {})
        """Per model label: what its stored rollouts of earlier sessions cost (its row's money starts there)."""
        """The run's batches (None: no model goes through a batch API)."""
        self.models: dict[str, Counters] = {}
        self.total = Counters()
        self.clock = clock
        """Seconds: the rates' clock, and the live rows' (their ETA)."""
        self.started = clock()

    def observer(self, label: str) -> Callable[[CallRecord], None]:
        """The per-call hook for rollouts of model `label`."""
        counters = self.models.setdefault(label, Counters())

        def observe(call: CallRecord) -> None:
            counters.add_call(call)
            self.total.add_call(call)
        return observe

    def rollout_done(self, record: RolloutRecord) -> None:
        if (kind := failure_kind(record.result.status)) is not None:
            self.models.setdefault(record.key.model, Counters()).failures[kind] += 1
            self.total.failures[kind] += 1

    def describe(self, label: str, *, compact: bool = False) -> str:
        """One line of figures for a model row, or for the total row (`TOTAL`); `compact`: money and failures."""
        counters = self.total if label == TOTAL else self.models.get(label, Counters())
        elapsed = max(self.clock() - self.started, 1e-9)
        hit_rate = f"{counters.hits / counters.calls:.0%}" if counters.calls else "-"
        if label == TOTAL:
            cap, reserved = self.spend_cap.cap_usd, self.spend_cap.reserved_usd
            money = (f"${self.spend_cap.spent_usd:.2f}" + (f" +${reserved:.2f} reserved" if reserved else "")
                     + (f" / ${cap:.2f}" if cap is not None else ""))
        else:
            money = f"${self.spent_before.get(label, 0.0) + counters.cost_usd:.2f}"
        if compact:
            return f"{money} · {failure_counts(counters.failures, compact=True)}"
        line = (f"{money} · {counters.billed_tokens / elapsed:,.0f} tok/s · {counters.calls:,} calls, "
                f"{hit_rate} hits · {counters.retries:,} retries · "
                f"{failure_counts(counters.failures)}")
        if label == TOTAL and (b := self.batches) is not None:
            line += (f" · batches {b.submitted} submitted, {b.in_progress} in progress, {b.ended} ended, "
                     f"{b.answered:,}/{b.requests:,} requests done")
        return line


def _one_line(max_width: int | None = None) -> Column:
    return Column(no_wrap=True, overflow="ellipsis", max_width=max_width)


class _FiguresColumn(ProgressColumn):
    """The figures of the row's model, read from the live counters at each refresh."""

    def __init__(self, stats: RunStats, compact: bool, max_width: int | None) -> None:
        super().__init__(table_column=_one_line(max_width=max_width))
        self._stats = stats
        self._compact = compact

    def render(self, task: ProgressTask) -> Text:
        return Text(self._stats.describe(task.fields["label"], compact=self._compact), style="progress.data.speed")


class _EtaColumn(ProgressColumn):
    """Time left at the row's rate in this session, once `ETA_AFTER` of its rollouts finished in this session."""

    def __init__(self) -> None:
        super().__init__(table_column=_one_line())

    def render(self, task: ProgressTask) -> Text:
        return Text(_eta(task) or "", style="progress.remaining")


def _eta(task: ProgressTask) -> str | None:
    if task.completed - task.fields["before"] < ETA_AFTER or task.time_remaining is None:
        return None
    return f"ETA {timedelta(seconds=round(task.time_remaining))}"


class LiveProgress:
    """Rich progress rows for a run; a context manager. `done(record)` advances a row.

    Args:
        stats: The run's counters.
        totals: Rollouts planned per model label (finished ones included).
        finished: Rollouts already finished per model label (a resumed run starts there).
        console: Where to draw.
        disable: Draw no live rows (`--quiet`, or not a terminal).
        log_every_s: Print a plain line of the run's figures this often (a console that is not a terminal).
    """

    def __init__(self, stats: RunStats, totals: Mapping[str, int], finished: Mapping[str, int], console: Console | None,
                 *, disable: bool = False, log_every_s: float | None = None) -> None:
        self._stats = stats
        self._log_every_s = log_every_s
        self._logger: asyncio.Task[None] | None = None
        wide = console is None or console.width >= WIDE
        # the figures (the total row's are the longest) end in an ellipsis rather than squeeze out the done column
        done_width = len(f"{sum(totals.values())}/{sum(totals.values())}")
        figures_width = None if console is None else console.width - LABEL_WIDTH - done_width - 3
        bar = [BarColumn(bar_width=24)] if wide else []
        self._progress = Progress(
            TextColumn("{task.description}", table_column=_one_line(max_width=LABEL_WIDTH)), *bar,
            MofNCompleteColumn(table_column=_one_line()), _EtaColumn(),
            _FiguresColumn(stats, compact=not wide, max_width=figures_width),
            console=console, disable=disable, refresh_per_second=4, get_time=stats.clock,
        )
        single = len(totals) == 1  # its row shows the run's figures ($ spent / cap)
        self._rows = {label: self._progress.add_task(label, total=n, completed=finished.get(label, 0),
                                                     label=TOTAL if single else label, before=finished.get(label, 0))
                      for label, n in totals.items()}
        if len(totals) > 1:
            self._rows[TOTAL] = self._progress.add_task(
                TOTAL, total=sum(totals.values()), completed=sum(finished.values()), label=TOTAL,
                before=sum(finished.values()))

    def __enter__(self) -> LiveProgress:
        self._progress.start()
        if self._log_every_s is not None:
            self._logger = asyncio.get_running_loop().create_task(self._log(self._log_every_s))
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
        if self._logger is not None:
            self._logger.cancel()

    async def _log(self, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            self._progress.console.print(self.line(), highlight=False, markup=False, soft_wrap=True)

    def line(self) -> str:
        """The run's figures on one line: time, done / total, money, calls, hits, retries, failures, ETA."""
        run = self._progress.tasks[self._rows.get(TOTAL, next(iter(self._rows.values())))]
        return (f"{datetime.now().strftime('%H:%M:%S')} {run.completed:,.0f}/{run.total:,.0f} rollouts · "
                f"{self._stats.describe(TOTAL)} · {_eta(run) or 'ETA -'}")

    def stopping(self, in_flight: int, grace_s: float, *, again: bool) -> None:
        """Acknowledges Ctrl-C / SIGTERM at once, above the rows (which settle only as rollouts end)."""
        if again:
            text = f"stopping now: cancelling {in_flight:,} rollouts in flight (the same command resumes them)"
        else:
            text = (f"stopping: {in_flight:,} rollouts in flight, finishing (up to {grace_s:g} s; Ctrl-C again "
                    "cancels them)…")
        self._progress.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def done(self, record: RolloutRecord) -> None:
        """Counts a finished rollout."""
        self._stats.rollout_done(record)
        self._progress.advance(self._rows[record.key.model])
        if TOTAL in self._rows:
            self._progress.advance(self._rows[TOTAL])
