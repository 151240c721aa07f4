"""Runs side by side: the headline rates and the cost of the (model, strategy) pairs two runs share, with deltas.

The base is the first reported run; each compared run adds a value column and a delta column (compared minus
base). The usual use: the same spec before and after a prompt or parser change. The rates are each benchmark's
own (`benchmarks.reporting.ReportSections.group_rates`); N is the number of tasks each side ran, and runs whose task
sets differ get a warning, since their rates are not over the same tasks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reports.collect import Group, RunData, benchmarks_of, load_benchmark
from reports.table import Column, Kind, Table
from reports.usage import usage_of

GroupKey = tuple[str, str, str, str, int]


@dataclass(slots=True)
class Comparison:
    tables: list[Table]
    warnings: list[str] = field(default_factory=list)
    """Compared runs with no (model, strategy, split) in common with the base run, or over other task sets."""


def _key(group: Group) -> GroupKey:
    return (group.benchmark, group.model, group.strategy, group.split, group.sample)


def task_set_warnings(base: RunData, others: Sequence[RunData]) -> list[str]:
    """One sentence per compared run whose tasks are not the base run's."""
    ids = {task.id for task in base.tasks}
    warnings = []
    for run in others:
        theirs = {task.id for task in run.tasks}
        if theirs != ids:
            warnings.append(f"Warning: {run.label} ran {len(theirs):,} tasks and {base.label} {len(ids):,}, "
                            f"{len(theirs & ids):,} in common: its rates are over other tasks.")
    return warnings


def compare_tables(base: RunData, others: Sequence[RunData], mode: str) -> Comparison:
    """Rates (groups with verdicts) and money spent, base vs each other run."""
    runs = [base, *others]
    by_run = [{_key(g): g for g in run.groups} for run in runs]
    shared = [key for key in by_run[0] if any(key in groups for groups in by_run[1:])]
    value_columns = [Column(f"N {base.label}", Kind.INT), Column(base.label, Kind.PCT)]
    money_columns = [Column(base.label, Kind.USD)]
    for run in others:
        value_columns += [Column(f"N {run.label}", Kind.INT), Column(run.label, Kind.PCT),
                          Column(f"Δ {run.label}", Kind.DELTA)]
        money_columns += [Column(run.label, Kind.USD), Column(f"Δ {run.label}", Kind.USD)]
    rates = Table("compare_rates", f"Rates compared ({mode} evaluator, %; Δ in points)",
                  (Column("model"), Column("strategy"), Column("split"), Column("rate"), *value_columns))
    money = Table("compare_cost", "Money spent compared",
                  (Column("model"), Column("strategy"), Column("split"), *money_columns))
    headline = _rates(runs, by_run, shared)
    for n, key in enumerate(shared):
        _, model, strategy, split, _ = key
        groups = [groups.get(key) for groups in by_run]
        spent = [usage_of(g).spent_usd if g is not None else None for g in groups]
        money.add(model, strategy, split, *_with_deltas(spent))
        per_run = [found[n] for found in headline]
        if per_run[0] is None:
            continue
        sizes = [len(run.tasks) if g is not None else None for run, g in zip(runs, groups)]
        for name in per_run[0]:
            values = [found.get(name) if found is not None else None for found in per_run]
            rates.add(model, strategy, split, name, *_interleaved(sizes, _with_deltas(values)))
    if not shared:
        rates.note = money.note = "No (model, strategy, split) pair is in both the base run and a compared run."
    disjoint = [f"Warning: {run.label} has no (model, strategy, split) in common with {base.label}: nothing of it "
                f"is compared ({base.label}: {_pairs(base)}; {run.label}: {_pairs(run)})"
                for run, groups in zip(others, by_run[1:]) if not groups.keys() & by_run[0].keys()]
    return Comparison([rates, money], disjoint + task_set_warnings(base, others))


def _pairs(run: RunData) -> str:
    return ", ".join(dict.fromkeys(f"{g.model} / {g.strategy} / {g.split}" for g in run.groups))


def _rates(runs: Sequence[RunData], by_run: Sequence[Mapping[GroupKey, Group]],
           shared: Sequence[GroupKey]) -> list[list[Mapping[str, float | None] | None]]:
    """Per run, the benchmark's headline rates of each shared group (None where the run lacks it or it is unscored)."""
    found: list[list[Mapping[str, float | None] | None]] = []
    for run, groups in zip(runs, by_run):
        rates: list[Mapping[str, float | None] | None] = [None] * len(shared)
        references = benchmarks_of([run])
        for name in dict.fromkeys(key[0] for key in shared):
            report = load_benchmark(references.get(name, name)).report
            if report is None:
                continue
            positions = [n for n, key in enumerate(shared) if key[0] == name]
            for n, value in zip(positions, report.group_rates(run, [groups.get(shared[n]) for n in positions])):
                rates[n] = value
        found.append(rates)
    return found


def _with_deltas(values: Sequence[float | None]) -> list[float | None]:
    """[base, v1, v1 - base, v2, v2 - base, ...]; a delta is None where either side is missing."""
    base = values[0]
    cells: list[float | None] = [base]
    for value in values[1:]:
        cells += [value, None if value is None or base is None else value - base]
    return cells


def _interleaved(sizes: Sequence[int | None], cells: Sequence[float | None]) -> list[float | int | None]:
    """The N of each side before its value: [N0, base, N1, v1, Δ1, N2, v2, Δ2, ...]."""
    out: list[float | int | None] = [sizes[0], cells[0]]
    for n, size in enumerate(sizes[1:]):
        out += [size, *cells[1 + 2 * n: 3 + 2 * n]]
    return out
