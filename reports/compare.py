"""Runs side by side: the rates and the cost of the (model, strategy) pairs two runs share, with deltas.

The base is the first reported run; each compared run adds a value column and a delta column (compared minus
base). The usual use: the same spec before and after a prompt or parser change.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.travelplanner.metrics import RATE_NAMES
from reports import travelplanner
from reports.collect import Group, RunData
from reports.table import Column, Kind, Table
from reports.usage import usage_of

GroupKey = tuple[str, str, str, int]


def _key(group: Group) -> GroupKey:
    return (group.model, group.strategy, group.split, group.sample)


def compare_tables(base: RunData, others: Sequence[RunData], mode: str) -> list[Table]:
    """Rates (TravelPlanner groups with labels) and money spent, base vs each other run."""
    runs = [base, *others]
    by_run = [{_key(g): g for g in run.groups} for run in runs]
    shared = [key for key in by_run[0] if any(key in groups for groups in by_run[1:])]
    value_columns = [Column(base.label, Kind.PCT)]
    money_columns = [Column(base.label, Kind.USD)]
    for run in others:
        value_columns += [Column(run.label, Kind.PCT), Column(f"Δ {run.label}", Kind.DELTA)]
        money_columns += [Column(run.label, Kind.USD), Column(f"Δ {run.label}", Kind.USD)]
    rates = Table("compare_rates", f"Pass rates compared ({mode} evaluator, %; Δ in points)",
                  (Column("model"), Column("strategy"), Column("split"), Column("rate"), *value_columns))
    money = Table("compare_cost", "Money spent compared",
                  (Column("model"), Column("strategy"), Column("split"), *money_columns))
    queries = [travelplanner.run_queries(run.tasks) if any(g.benchmark == travelplanner.NAME for g in run.groups)
               else [] for run in runs]  # parsed once per run, not per (model, strategy)
    for key in shared:
        model, strategy, split, _ = key
        groups = [groups.get(key) for groups in by_run]
        spent = [usage_of(g).spent_usd if g is not None else None for g in groups]
        money.add(model, strategy, split, *_with_deltas(spent))
        scores = [travelplanner.group_scores(g, run.tasks, run_queries, run.evaluated).scores
                  if g is not None and g.benchmark == travelplanner.NAME else None
                  for g, run, run_queries in zip(groups, runs, queries)]
        if scores[0] is None:
            continue
        for name, header in zip(RATE_NAMES, travelplanner.RATE_HEADERS):
            rates.add(model, strategy, split, header,
                      *_with_deltas([s.rates[name] if s is not None else None for s in scores]))
    if not shared:
        rates.note = money.note = "No (model, strategy, split) pair is in both the base run and a compared run."
    return [rates, money]


def _with_deltas(values: Sequence[float | None]) -> list[float | None]:
    """[base, v1, v1 - base, v2, v2 - base, ...]; a delta is None where either side is missing."""
    base = values[0]
    cells: list[float | None] = [base]
    for value in values[1:]:
        cells += [value, None if value is None or base is None else value - base]
    return cells
