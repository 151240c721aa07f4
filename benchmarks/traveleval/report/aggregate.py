"""How the report reads the stored evaluations, and the rule that averages them.

The rule is the official analysis's (`run.py`: `df.mean()` over the evaluator's per-plan rows): a metric's mean is over
the plans the evaluator scored, each metric over the plans where it has a value. A rollout without a plan, or with
a plan the evaluator could not score, is in the counts and the delivery rate, not in the means. A metric the
evaluator could not measure (its `not_measured`) is no value: a mean with none is "not measured", never a score.

Rows are per agent (run, model, strategy), pooled over every split of the run, with one row per sample when the
run drew several, then the mean, the standard deviation and the half-width of the 95 % t-interval across samples.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean, stdev
from types import MappingProxyType
from typing import Any

from benchmarks.reporting import Cell, Column, GroupView, RolloutView, Table, group_columns
from benchmarks.traveleval.metric_names import DIMENSION_NAMES, METRICS, MetricName

NOT_MEASURED = "not measured"
"""The cell of a mean with no measured value (the report says why in its notes)."""
CONSTRAINT_KEYS = ("budget_satisfaction", "time_compliance", "people_adaptability", "accommodation_satisfaction",
                   "transportation_satisfaction", "diet_preference_satisfaction", "travel_time_satisfaction")
SPREAD_ROWS = ("mean", "sd", "95% CI ±")
"""The rows under an agent's samples: mean, standard deviation and t-interval half-width across samples."""
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
"""Student's t 97.5 % quantile for 1..30 degrees of freedom (above: 1.96)."""
COST_CATEGORIES = ("intercity_transportation", "accommodation", "meals", "attractions", "intracity_transportation",
                   "other")
"""The official cost composition's categories (`economy.cost_distribution`), in the report's order."""
LEAVES = (*((metric.dimension, metric.key) for metric in METRICS),
          *(("economy", f"cost_distribution.{key}") for key in COST_CATEGORIES))
"""The (dimension, dotted key) of every official metric the report reads."""
_POSITIONS = {leaf: n for n, leaf in enumerate(LEAVES)}
_PATHS = tuple((dimension, tuple(key.split("."))) for dimension, key in LEAVES)
LEGACY_WHY = ("stored before tripbench recorded unmeasured metrics: in `official` mode an empty CSM means a Gaode "
              "distance was missing, and RP is then the official stand-in 0.0")


@dataclass(frozen=True, slots=True)
class PlanMetrics:
    """A scored plan's official metrics as the report reads them, compact: the dimensions present and each of
    `LEAVES` (a number as stored, else None). A report of a hundred thousand plans holds these, not the nested dicts
    of their evaluations (a few KB a plan)."""

    dimensions: frozenset[str]
    values: tuple[int | float | None, ...]

    @classmethod
    def of(cls, metrics: Mapping[str, Any]) -> PlanMetrics:
        return cls(_shared_dimensions(frozenset(key for key in metrics if key in DIMENSION_NAMES)),
                   tuple(_leaf(metrics, dimension, path) for dimension, path in _PATHS))

    def get(self, dimension: str, key: str) -> int | float | None:
        """The metric `key` (dotted for a nested one: `CSM.P90`) of `dimension`; None when it is not a number."""
        return self.values[_POSITIONS[dimension, key]]


def _leaf(metrics: Mapping[str, Any], dimension: str, path: tuple[str, ...]) -> int | float | None:
    found: Any = metrics.get(dimension) or {}
    for part in path:
        found = found.get(part) if isinstance(found, Mapping) else None
    return found if isinstance(found, (int, float)) else None


@functools.cache
def _shared_dimensions(dimensions: frozenset[str]) -> frozenset[str]:
    """One object per set of dimensions (at most 64), however many plans have it."""
    return dimensions


@functools.lru_cache(maxsize=256)
def _shared_reasons(reasons: tuple[tuple[str, str], ...]) -> Mapping[str, str]:
    """One mapping per set of reasons, however many plans share it (they are few and long)."""
    return MappingProxyType(dict(reasons))


@dataclass(frozen=True, slots=True)
class Scored:
    """One rollout as the report reads it."""

    view: RolloutView
    evaluated: bool
    """An evaluation is stored (with metrics, or the reason there are none)."""
    metrics: PlanMetrics | None
    """The official metrics; None when the evaluator scored no plan."""
    not_measured: Mapping[str, str] = field(default_factory=dict)
    """`dimension.key` -> why its value is a stand-in, not a measurement."""

    @property
    def uid(self) -> str:
        return self.view.task_id


def scored(view: RolloutView) -> Scored:
    details = view.evaluation.details if view.evaluation is not None else {}
    metrics = details.get("metrics")
    if not isinstance(metrics, Mapping):
        return Scored(view, view.evaluation is not None, None)
    missing = details.get("not_measured")
    if not isinstance(missing, Mapping):
        missing = _legacy_not_measured(metrics, details.get("mode"))
    return Scored(view, True, PlanMetrics.of(metrics),
                  _shared_reasons(tuple((str(key), str(why)) for key, why in missing.items())))


def _legacy_not_measured(metrics: Mapping[str, Any], mode: Any) -> dict[str, str]:
    """What an evaluation stored before `not_measured` existed did not measure (official mode only)."""
    if mode != "official":
        return {}
    missing = {"accuracy.transportation_breaks": "the official code never detects a transfer break (always 0)"}
    if (metrics.get("space") or {}).get("CSM") == {}:
        missing.update({"space.RP": LEGACY_WHY, "space.CSM": LEGACY_WHY})
    return missing


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def value(item: Scored, metric: MetricName) -> float | str | None:
    """A plan's value of a metric: a number, `NOT_MEASURED`, or None (no plan scored, or null as NaN is stored)."""
    if item.metrics is None:
        return None
    if f"{metric.dimension}.{metric.key.split('.')[0]}" in item.not_measured:
        return NOT_MEASURED
    return number(item.metrics.get(metric.dimension, metric.key))


def plans(items: Sequence[Scored]) -> list[Scored]:
    """The rollouts whose plan the evaluator scored: what the official analysis averages."""
    return [item for item in items if item.metrics is not None]


def mean_of(items: Sequence[Scored], read: Callable[[Scored], float | str | None]) -> Cell:
    """The mean of `read` over the scored plans that have a number; `NOT_MEASURED` when none has, but some plan's
    value was not measured."""
    values = [read(item) for item in plans(items)]
    numbers = [v for v in values if isinstance(v, float)]
    if numbers:
        return fmean(numbers)
    return NOT_MEASURED if NOT_MEASURED in values else None


def metric_mean(items: Sequence[Scored], metric: MetricName) -> Cell:
    return mean_of(items, lambda item: value(item, metric))


def partly_measured(found: Sequence[Agent], metrics: Sequence[MetricName], *, with_run: bool = False) -> str:
    """A sentence naming each metric an agent measured on only some of its scored plans, with on how many its mean
    rests ("" when none): a mean over a handful of degenerate plans must not read as one over them all."""
    parts = []
    for metric in metrics:
        for agent in found:
            values = [value(item, metric) for item in plans(agent.pooled)]
            unmeasured = values.count(NOT_MEASURED)
            measured = sum(isinstance(v, float) for v in values)
            if unmeasured and measured:
                parts.append(f"{metric.acronym} of {agent.label(with_run)} rests on {measured:,} of {len(values):,} "
                             "plans")
    return (f"Measured on only some plans (the rest not measured): {'; '.join(parts)}." if parts else "")


def all_seven(item: Scored) -> float | None:
    """1.0 when the plan meets every constraint (None: no plan scored)."""
    metrics = item.metrics
    if metrics is None or "constraint" not in metrics.dimensions:  # no plan scored, or the evaluator failed before
        return None
    return float(all(metrics.get("constraint", key) == 1 for key in CONSTRAINT_KEYS))


def all_seven_per_rollout(items: Sequence[Scored]) -> float | None:
    """The share of evaluated rollouts whose plan meets every constraint, a rollout without a scored plan counting as
    failing (a success rate, not the official analysis's mean)."""
    evaluated = [item for item in items if item.evaluated]
    return fmean(all_seven(item) or 0.0 for item in evaluated) if evaluated else None


@dataclass(slots=True)
class Agent:
    """One (run, model, strategy): its rollouts by sample, pooled over the run's splits."""

    run: str
    model: str
    strategy: str
    splits: list[str] = field(default_factory=list)
    samples: dict[int, list[Scored]] = field(default_factory=dict)

    def cells(self, with_run: bool) -> tuple[str, ...]:
        return ((self.run,) if with_run else ()) + (self.model, self.strategy)

    def label(self, with_run: bool) -> str:
        return f"{self.run}: {self.model} / {self.strategy}" if with_run else f"{self.model} / {self.strategy}"

    @property
    def pooled(self) -> list[Scored]:
        """Every sample's rollouts together (the radar's and the correlations' population)."""
        return [item for items in self.samples.values() for item in items]


def agents(groups: Sequence[GroupView]) -> list[Agent]:
    """The groups as agents, in report order, each rollout read once."""
    found: dict[tuple[str, str, str], Agent] = {}
    for g in groups:
        agent = found.setdefault((g.run, g.model, g.strategy), Agent(g.run, g.model, g.strategy))
        if g.split not in agent.splits:
            agent.splits.append(g.split)
        agent.samples.setdefault(g.sample, []).extend(scored(view) for view in g.rollouts)
    return list(found.values())


def sampled(found: Sequence[Agent]) -> bool:
    return any(len(agent.samples) > 1 for agent in found)


def lead_columns(with_run: bool, with_samples: bool, *extra: str) -> tuple[Column, ...]:
    """The columns naming a row: run (several runs), model, strategy, the `extra` labels (a tier, a step), then
    sample (several samples)."""
    return (*group_columns(with_run), *(Column(name) for name in extra),
            *((Column("sample"),) if with_samples else ()))


def add_rows(table: Table, lead: tuple[Cell, ...], samples: Mapping[int, Sequence[Scored]],
             read: Callable[[Sequence[Scored]], Sequence[Cell]], *, with_samples: bool) -> None:
    """An agent's rows of `table`: `read` of each sample's rollouts (`add_sample_rows`)."""
    add_sample_rows(table, lead, {n: list(read(items)) for n, items in samples.items()}, with_samples=with_samples)


def add_sample_rows(table: Table, lead: tuple[Cell, ...], rows: Mapping[int, Sequence[Cell]], *,
                    with_samples: bool) -> None:
    """An agent's rows, one per sample (labelled `#n` when the report has samples), then, with several samples, the
    mean, sd and 95 % interval half-width of each numeric column across them."""
    ordered = [list(rows[n]) for n in sorted(rows)]
    if not with_samples:
        for row in ordered:
            table.add(*lead, *row)
        return
    for n, row in zip(sorted(rows), ordered, strict=True):
        table.add(*lead, f"#{n}", *row)
    if len(ordered) > 1:
        for label, row in zip(SPREAD_ROWS, spread(ordered), strict=True):
            table.add(*lead, label, *row)


def spread(rows: Sequence[Sequence[Cell]]) -> tuple[list[Cell], list[Cell], list[Cell]]:
    """Mean, sd and 95 % t-interval half-width per column of numbers (a column holding one word throughout keeps
    it as its mean; anything else is blank)."""
    means: list[Cell] = []
    sds: list[Cell] = []
    halves: list[Cell] = []
    for column in zip(*rows, strict=True):
        numbers = [number(cell) for cell in column]
        if all(n is not None for n in numbers):
            known = [n for n in numbers if n is not None]
            sd = stdev(known)
            means.append(fmean(known))
            sds.append(sd)
            halves.append(_t975(len(known) - 1) * sd / math.sqrt(len(known)))
            continue
        means.append(column[0] if len(set(column)) == 1 and isinstance(column[0], str) else None)
        sds.append(None)
        halves.append(None)
    return means, sds, halves


def _t975(freedom: int) -> float:
    return _T975[freedom - 1] if freedom <= len(_T975) else 1.96


def sample_means(agent: Agent, read: Callable[[Sequence[Scored]], Cell]) -> Cell:
    """`read` of each sample, averaged across samples (one sample: its value)."""
    values = [read(items) for _, items in sorted(agent.samples.items())]
    numbers = [n for v in values if (n := number(v)) is not None]
    if numbers:
        return fmean(numbers)
    return NOT_MEASURED if NOT_MEASURED in values else None
