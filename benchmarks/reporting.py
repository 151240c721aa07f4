"""What a benchmark's report sections are made of, and what they read: the contract between a benchmark and
`reports/`.

A benchmark with its own tables declares a `report` part implementing `ReportSections`: given the runs of a report
(read-only views of what the runs stored), it returns `Section`s of `Table`s and `Chart`s, plain values that the
generic renderers in `reports/` draw as Markdown, CSV, PNG and HTML. A benchmark never renders, and `reports/` never
names a benchmark.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from benchmarks.tasks import Evaluation, Task

Cell = str | int | float | None
Outcome = bool | float | None
"""A rollout's value of one metric (`ReportSections.rollout_metrics`)."""


class Kind(StrEnum):
    """How a column's values are shown (CSV keeps the raw number; None is an empty cell or a dash)."""

    TEXT = "text"
    INT = "int"
    PCT = "pct"
    """A fraction shown as a percentage with one decimal (CSV: the percentage, 4 decimals)."""
    DELTA = "delta"
    """A difference of two fractions, in percentage points with a sign."""
    USD = "usd"
    SECONDS = "seconds"
    FLOAT = "float"
    NUMBER = "number"
    """A value of any scale, four significant digits (a paired mean difference of dollars or of tokens)."""
    P_VALUE = "p_value"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind = Kind.TEXT
    short: str | None = None
    """A shorter header for narrow terminals (default: `name`)."""


@dataclass(slots=True)
class Table:
    """A titled table; `name` is its CSV file stem and HTML anchor (unique within a report)."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: list[tuple[Cell, ...]] = field(default_factory=list)
    note: str | None = None
    """A sentence shown under the table (what it counts, what is left out)."""

    def add(self, *cells: Cell) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"table {self.name}: {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(cells)


SLUG_CHARS = 120
"""The longest slug: a file name holds 255 bytes, and the output folders' clash suffix adds up to 65 more."""


def slug(name: str) -> str:
    """A file-system-safe name for a model or strategy label (`openai:gpt-4o` -> `openai_gpt-4o`); a longer one than
    `SLUG_CHARS` is cut, keeping its distinctness in a digest of the whole label."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "_"
    if len(safe) <= SLUG_CHARS:
        return safe
    return f"{safe[:SLUG_CHARS - 17]}-{hashlib.sha256(name.encode()).hexdigest()[:16]}"


def group_columns(with_run: bool) -> tuple[Column, ...]:
    """The columns naming a group: its run (only when a report covers several), model, strategy."""
    return ((Column("run"),) if with_run else ()) + (Column("model"), Column("strategy"))


@dataclass(frozen=True, slots=True)
class GroupedRates:
    """Grouped vertical bars of rates (0..1): one group per label (e.g. a constraint), one bar per series."""

    name: str
    """File stem of the PNG."""
    title: str
    labels: Sequence[str]
    series: Sequence[tuple[str, Sequence[float | None]]]


@dataclass(frozen=True, slots=True)
class StackedShares:
    """One horizontal bar per row label, split into the shares of its categories (e.g. how rollouts ended)."""

    name: str
    title: str
    rows: Sequence[tuple[str, Mapping[str, int]]]
    axis: str = "% of rollouts"
    """What a bar's 100 % is (the x-axis label)."""


@dataclass(frozen=True, slots=True)
class Radar:
    """A radar (spider) chart: one spoke per label, values in 0..1 (None: not known, drawn at 0), one outline per
    series."""

    name: str
    title: str
    labels: Sequence[str]
    series: Sequence[tuple[str, Sequence[float | None]]]


@dataclass(frozen=True, slots=True)
class Heatmap:
    """A square matrix of values in -1..1 (e.g. correlations), one row and column per label (None: a blank cell)."""

    name: str
    title: str
    labels: Sequence[str]
    values: Sequence[Sequence[float | None]]


Chart = GroupedRates | StackedShares | Radar | Heatmap


@dataclass(slots=True)
class Section:
    title: str
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class RolloutView(Protocol):
    """One stored rollout."""

    @property
    def task(self) -> Task | None:
        """The task as the run saw it (None if the store lacks it)."""
    @property
    def status(self) -> str: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def plan(self) -> Any: ...
    @property
    def task_id(self) -> str: ...
    @property
    def steps(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def evaluation(self) -> Evaluation | None:
        """The stored evaluation in the report's mode; None when not evaluated (or labels are hidden)."""


class GroupView(Protocol):
    """The rollouts of one (run, model, strategy, split, sample): one submission file."""

    @property
    def run(self) -> str: ...
    @property
    def benchmark(self) -> str: ...
    @property
    def split(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def strategy(self) -> str: ...
    @property
    def sample(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def planned(self) -> int:
        """Tasks the run saw: what rates divide by."""
    @property
    def label(self) -> str: ...
    @property
    def rollouts(self) -> Sequence[RolloutView]: ...

    def cells(self, with_run: bool) -> tuple[str, ...]:
        """The values of `group_columns`."""
        ...


class RunView(Protocol):
    """One run directory as a report reads it."""

    @property
    def label(self) -> str: ...
    @property
    def tasks(self) -> Sequence[Task]: ...
    @property
    def groups(self) -> Sequence[GroupView]: ...
    @property
    def evaluated(self) -> bool:
        """Whether any verdict of the report's mode was stored."""
    @property
    def partial(self) -> bool:
        """Still going, or stopped before every planned rollout finished."""
    @property
    def options(self) -> Mapping[str, Any]:
        """The benchmark options of the run's spec."""
    @property
    def sampling(self) -> Mapping[str, Mapping[str, Any]]:
        """Model label -> the sampling settings the run's spec sets for it (unset ones are absent)."""


def outcome_table(name: str, title: str, column: str, counted: Sequence[tuple[GroupView, Counter[str]]],
                  descriptions: Mapping[str, str], *, with_run: bool) -> Table:
    """How rollouts ended per (model, strategy): each outcome's meaning, count and share, most frequent first.

    Args:
        name: The table's name (CSV stem).
        title: Its title.
        column: What an outcome is called (`status`, `category`).
        counted: Each group with its outcomes counted.
        descriptions: Outcome -> one-line meaning.
        with_run: Whether a run column leads.
    """
    table = Table(name, title, (*group_columns(with_run), Column(column), Column("meaning"),
                                Column("rollouts", Kind.INT), Column("share", Kind.PCT)))
    for g, counts in counted:
        for outcome, count in counts.most_common():
            table.add(*g.cells(with_run), outcome, descriptions.get(outcome, ""), count, count / len(g.rollouts))
    return table


class ReportSections(Protocol):
    """An optional part of a `Benchmark` (its `report`): its own report sections. Without it a report shows the
    generic status table for the benchmark's runs."""

    def report_sections(self, runs: Sequence[RunView], mode: str, *, with_run: bool) -> list[Section]:
        """The benchmark's sections over its runs (every group of `runs` is this benchmark's).

        Args:
            runs: The reported runs of this benchmark, in report order.
            mode: The evaluator mode whose stored verdicts the runs carry.
            with_run: Several runs are reported: tables lead with a run column (`group_columns`).
        """
        ...

    def group_rates(self, run: RunView, groups: Sequence[GroupView | None]) -> list[Mapping[str, float | None] | None]:
        """The headline rates of each group (name -> rate in 0..1, in display order), for `report --compare`;
        None for a missing group or one without verdicts."""
        ...

    def rollout_category(self, view: RolloutView) -> str:
        """How one rollout ended, in the benchmark's terms (its page's headline): `delivered`, an error kind, ..."""
        ...

    def rollout_metrics(self, view: RolloutView) -> Mapping[str, Outcome]:
        """One rollout's values of the benchmark's metrics, for `tripbench compare` to pair across runs, in display
        order, the headline pass/fail first (the one regressed and improved tasks are listed by): a bool for an
        all-or-nothing metric, a float for a continuous one, None where the rollout has no value (no labels, not
        evaluated, not measured)."""
        ...
