"""TravelEval's report sections, from the evaluations the runs stored (the official `detailed_metrics` of each plan):
the six dimensions per model and strategy (one table per dimension, the paper's layout), by difficulty tier, by
progressive step (G1 -> G2 -> G3, with deltas), a radar chart per model (paper Figure 4), the budget, and what the
money goes on.

A rollout without a plan counts as failing every constraint (the evaluation stores failed verdicts for it); the
mean of any other metric is over the plans the evaluator scored. Rates divide by the rollouts evaluated so far.

The official code gives no score per dimension (its weighting is commented out), so the radar chart and the
"dimension scores" table use tripbench's own, stated in `DIMENSION_SCORES`: every score is in 0..1, higher better.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from benchmarks.base import DELIVERED, GENERIC_STATUSES
from benchmarks.reporting import (
    Column,
    GroupView,
    Kind,
    Radar,
    RolloutView,
    RunView,
    Section,
    StackedShares,
    Table,
    group_columns,
    outcome_table,
)
from benchmarks.traveleval.agents.statuses import STATUSES

DIMENSIONS = ("accuracy", "constraint", "time", "space", "economy", "utility")
CONSTRAINTS = ("budget_satisfaction", "time_compliance", "people_adaptability", "accommodation_satisfaction",
               "transportation_satisfaction", "diet_preference_satisfaction", "travel_time_satisfaction")
CONSTRAINT_HEADERS = ("budget", "days", "people", "hotel", "transport", "diet", "visit time")
ACCURACY = ("cost_deviation_rate", "fictitious_attraction_rate", "opening_hours_violations", "transportation_breaks",
            "intercity_planning_deviation", "people_deviation")
COST_CATEGORIES = ("intercity_transportation", "accommodation", "meals", "attractions", "intracity_transportation",
                   "other")
TIERS = ("easy", "medium", "hard")
PROMPTS_NOTE = ("Prompts are tripbench's own (the official repository has no license, so none of its prompts is "
                "used): numbers are comparable across models run here, not with the paper's.")
DIMENSION_SCORES = (
    "Dimension scores (tripbench's, 0..1, higher better; the official code defines none): accuracy = 1 - the mean "
    "of the six accuracy rates (each capped at 1); constraint = the mean of the seven constraint metrics; time = "
    "average_tour_ratio; space = 1 / (1 + RP); economy and utility = budget_efficiency and profit over the best "
    "(model, strategy) of the report.")
Metrics = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Scored:
    """One rollout as the report reads it."""

    view: RolloutView
    evaluated: bool
    """An evaluation is stored (with metrics, or failed verdicts when there was no plan to score)."""
    metrics: Metrics | None
    """The official metrics by dimension; None when the evaluator did not score a plan."""


def scored(view: RolloutView) -> Scored:
    details = view.evaluation.details if view.evaluation is not None else {}
    metrics = details.get("metrics")
    return Scored(view, view.evaluation is not None, metrics if isinstance(metrics, Mapping) else None)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def metric(item: Scored, dimension: str, key: str) -> float | None:
    """A metric's value (None: not scored, or null as NaN/inf are stored); CSM's percentiles as `CSM.P90`."""
    if item.metrics is None:
        return None
    found: Any = item.metrics.get(dimension) or {}
    for part in key.split("."):
        found = found.get(part) if isinstance(found, Mapping) else None
    return _number(found)


def mean(items: Sequence[Scored], read: Callable[[Scored], float | None]) -> float | None:
    values = [value for item in items if (value := read(item)) is not None]
    return fmean(values) if values else None


def constraint_value(item: Scored, key: str) -> float | None:
    """A constraint metric; a rollout evaluated without a plan fails it (0)."""
    if not item.evaluated:
        return None
    return metric(item, "constraint", key) if item.metrics is not None else 0.0


def all_constraints(item: Scored) -> float | None:
    if not item.evaluated:
        return None
    return float(all(constraint_value(item, key) == 1 for key in CONSTRAINTS))


def _constraint(key: str) -> Callable[[Scored], float | None]:
    return lambda item: constraint_value(item, key)


def _metric(dimension: str, key: str) -> Callable[[Scored], float | None]:
    return lambda item: metric(item, dimension, key)


def constraint_share(item: Scored) -> float | None:
    """The share of the seven constraints a rollout's plan meets (None: not evaluated)."""
    if not item.evaluated:
        return None
    return fmean(constraint_value(item, key) or 0.0 for key in CONSTRAINTS)


def dimension_scores(items: Sequence[Scored]) -> dict[str, float | None]:
    """The raw dimension scores of `DIMENSION_SCORES` (economy and utility before scaling to the best group)."""
    def accuracy(item: Scored) -> float | None:
        rates = [metric(item, "accuracy", key) for key in ACCURACY]
        known = [min(1.0, rate) for rate in rates if rate is not None]
        return 1 - fmean(known) if known else None

    def rp(item: Scored) -> float | None:
        value = metric(item, "space", "RP")
        return None if value is None else 1 / (1 + max(0.0, value))

    return {"accuracy": mean(items, accuracy),
            "constraint": mean(items, constraint_share),
            "time": mean(items, lambda item: metric(item, "time", "average_tour_ratio")),
            "space": mean(items, rp),
            "economy": mean(items, lambda item: metric(item, "economy", "budget_efficiency")),
            "utility": mean(items, lambda item: metric(item, "utility", "profit"))}


def _label(group: GroupView, with_run: bool) -> str:
    return f"{group.run}: {group.label}" if with_run else group.label


def _items(group: GroupView, keep: Callable[[RolloutView], bool] = lambda view: True) -> list[Scored]:
    return [scored(view) for view in group.rollouts if keep(view)]


def _evaluated(items: Sequence[Scored]) -> int:
    return sum(item.evaluated for item in items)


def constraint_table(groups: Sequence[GroupView], *, with_run: bool) -> Table:
    table = Table("te_constraint", "Constraint satisfaction (the seven binary metrics, % of plans)",
                  (*group_columns(with_run), Column("split"), Column("N", Kind.INT),
                   *(Column(header, Kind.PCT) for header in CONSTRAINT_HEADERS), Column("all seven", Kind.PCT)))
    for g in groups:
        items = _items(g)
        table.add(*g.cells(with_run), g.split, _evaluated(items),
                  *(mean(items, _constraint(key)) for key in CONSTRAINTS),
                  mean(items, all_constraints))
    table.note = ("N: rollouts evaluated; one without a plan fails every constraint. Budget: the plan claims to be "
                  "within budget and its recomputed cost is not above the budget (in `official` mode the plan's own "
                  "total_budget).")
    return table


def _metric_table(groups: Sequence[GroupView], name: str, title: str, dimension: str,
                  columns: Sequence[tuple[str, str, Kind]], note: str, *, with_run: bool) -> Table:
    table = Table(name, title, (*group_columns(with_run), Column("plans", Kind.INT),
                                *(Column(header, kind) for _, header, kind in columns)))
    for g in groups:
        items = [item for item in _items(g) if item.metrics is not None]
        table.add(*g.cells(with_run), len(items),
                  *(mean(items, _metric(dimension, key)) for key, _, _ in columns))
    table.note = note
    return table


def dimension_tables(groups: Sequence[GroupView], *, with_run: bool) -> list[Table]:
    """One table per dimension besides the constraints: the mean of each official metric over the scored plans."""
    pct, num = Kind.PCT, Kind.FLOAT
    specs: list[tuple[str, str, str, list[tuple[str, str, Kind]], str]] = [
        ("te_accuracy", "Accuracy (means over scored plans, %; lower is better)", "accuracy",
         [("cost_deviation_rate", "cost deviation", pct), ("fictitious_attraction_rate", "fictitious", pct),
          ("opening_hours_violations", "opening hours", pct), ("transportation_breaks", "transfer breaks", pct),
          ("intercity_planning_deviation", "intercity deviation", pct), ("people_deviation", "people dev.", pct)],
         "Official quirk kept in `official` mode: transfer breaks are never detected (always 0)."),
        ("te_time", "Time (means over scored plans, %)", "time",
         [("average_tour_ratio", "tour ratio", pct), ("daily_time_utilization", "daily use", pct),
          ("overall_time_utilization", "overall use", pct)],
         "Effective visit time is the scheduled time minus the official queuing estimate."),
        ("te_space", "Space (means over scored plans; lower is better)", "space",
         [("RP", "route penalty", num), ("CSM.P90", "CSM P90", num), ("CSM.P95", "CSM P95", num)],
         "RP: actual / shortest daily route - 1; CSM: cross-day misalignment percentiles (a dash: no plan has them). "
         "In `official` mode with offline distances, RP = 0 and no CSM unless the official caches hold every pair; the "
         "`corrected` mode measures them with the offline distances."),
        ("te_economy", "Economy (means over scored plans)", "economy",
         [("budget_efficiency", "budget efficiency", num)],
         "Budget efficiency: experience value / recomputed cost x 1000; the cost composition is its own table."),
        ("te_utility", "Utility (means over scored plans)", "utility",
         [("aqe", "AQE", num), ("profit", "profit", num), ("diversity", "diversity", num), ("ads", "ADS", num)],
         "ADS: attractions per day / the rhythm's target density (1 = on target)."),
    ]
    return [_metric_table(groups, name, title, dimension, columns, note, with_run=with_run)
            for name, title, dimension, columns, note in specs]


def scores_table(groups: Sequence[GroupView], *, with_run: bool) -> tuple[Table, dict[str, list[float | None]]]:
    """The six dimension scores per group (economy and utility scaled to the best group), and the values by label."""
    raw = [(g, dimension_scores(_items(g))) for g in groups]
    best: dict[str, float] = {}
    for key in ("economy", "utility"):
        known = [value for _, score in raw if (value := score[key]) is not None]
        if known:
            best[key] = max(known)
    table = Table("te_dimensions", "Six dimensions (tripbench's scores, 0..1, higher is better)",
                  (*group_columns(with_run), *(Column(dimension, Kind.FLOAT) for dimension in DIMENSIONS)))
    values: dict[str, list[float | None]] = {}
    for g, score in raw:
        for key in ("economy", "utility"):
            value, top = score[key], best.get(key)
            score[key] = value / top if value is not None and top else None
        row = [score[dimension] for dimension in DIMENSIONS]
        table.add(*g.cells(with_run), *row)
        values[_label(g, with_run)] = row
    table.note = DIMENSION_SCORES
    return table, values


def radar_charts(groups: Sequence[GroupView], values: Mapping[str, Sequence[float | None]],
                 *, with_run: bool) -> list[Radar]:
    """One radar chart per model (paper Figure 4), one outline per strategy."""
    models: dict[str, list[GroupView]] = {}
    for g in groups:
        if g.sample == 0:
            models.setdefault(f"{g.run}: {g.model}" if with_run else g.model, []).append(g)
    return [Radar(f"te_radar_{n + 1}", f"Six dimensions: {model}", DIMENSIONS,
                  [(g.strategy, values[_label(g, with_run)]) for g in members])
            for n, (model, members) in enumerate(models.items())]


def _tag(view: RolloutView) -> str | None:
    return str(view.task.input.get("tag")) if view.task is not None else None


def _tagged(tier: str) -> Callable[[RolloutView], bool]:
    return lambda view: _tag(view) == tier


def _stepped(step: int) -> Callable[[RolloutView], bool]:
    return lambda view: _step(view) == step


def _step(view: RolloutView) -> int | None:
    step = view.task.input.get("step") if view.task is not None else None
    return step if isinstance(step, int) else None


HEADLINES: tuple[tuple[str, Kind, Callable[[Sequence[Scored]], float | None]], ...] = (
    ("all seven", Kind.PCT, lambda items: mean(items, all_constraints)),
    ("budget", Kind.PCT, lambda items: mean(items, lambda item: constraint_value(item, "budget_satisfaction"))),
    ("accuracy", Kind.FLOAT, lambda items: dimension_scores(items)["accuracy"]),
    ("constraint", Kind.FLOAT, lambda items: dimension_scores(items)["constraint"]),
    ("time", Kind.FLOAT, lambda items: dimension_scores(items)["time"]),
    ("space", Kind.FLOAT, lambda items: dimension_scores(items)["space"]),
    ("profit", Kind.FLOAT, lambda items: mean(items, lambda item: metric(item, "utility", "profit"))),
)
"""The few figures the tier and progressive tables show per cell."""


def tier_table(groups: Sequence[GroupView], *, with_run: bool) -> Table | None:
    tiers = [tier for tier in TIERS if any(_tag(view) == tier for g in groups for view in g.rollouts)]
    if len(tiers) < 2 and not any(_step(view) for g in groups for view in g.rollouts):
        return None
    table = Table("te_tiers", "By difficulty tier (%, scores 0..1)",
                  (*group_columns(with_run), Column("tier"), Column("N", Kind.INT),
                   *(Column(name, kind) for name, kind, _ in HEADLINES)))
    for g in groups:
        for tier in tiers:
            items = _items(g, _tagged(tier))
            if items:
                table.add(*g.cells(with_run), tier, _evaluated(items), *(read(items) for _, _, read in HEADLINES))
    table.note = "Tiers are the queries' tags (easy: no constraint block; medium and hard add more)."
    return table


def progressive_table(groups: Sequence[GroupView], *, with_run: bool) -> Table | None:
    """G1 -> G2 -> G3: each step's figures and their change from the step before (the same trips, more
    constraints at each step)."""
    if not any(_step(view) for g in groups for view in g.rollouts):
        return None
    deltas = [(name, read) for name, kind, read in HEADLINES if kind is Kind.PCT]
    table = Table("te_progressive", "Progressive groups, step by step (G1 -> G2 -> G3; deltas in points)",
                  (*group_columns(with_run), Column("step"), Column("N", Kind.INT),
                   *(Column(name, kind) for name, kind, _ in HEADLINES),
                   *(Column(f"Δ {name}", Kind.DELTA) for name, _ in deltas)))
    for g in groups:
        previous: list[float | None] | None = None
        for step in (1, 2, 3):
            items = _items(g, _stepped(step))
            if not items:
                continue
            now = [read(items) for _, read in deltas]
            changes = [None if previous is None or a is None or b is None else a - b
                       for a, b in zip(now, previous or now)]
            table.add(*g.cells(with_run), f"G{step}", _evaluated(items), *(read(items) for _, _, read in HEADLINES),
                      *changes)
            previous = now
    table.note = "Each step's deltas are against the step before, over the same groups' queries."
    return table


def budget_table(groups: Sequence[GroupView], *, with_run: bool) -> Table:
    table = Table("te_budget", "Budget (official satisfaction rate, and what the plans cost)",
                  (*group_columns(with_run), Column("plans", Kind.INT), Column("satisfied", Kind.PCT),
                   Column("claimed within", Kind.PCT), Column("cost / budget", Kind.PCT)))
    for g in groups:
        plans = [(item, summary) for item in _items(g)
                 if item.metrics is not None and isinstance(summary := _summary(item.view), Mapping)]
        claimed = [float(bool(s.get("is_within_budget"))) for _, s in plans]
        ratios = [total / budget for item, s in plans
                  if (total := _total_cost(item)) is not None and (budget := _number(s.get("total_budget")))]
        table.add(*g.cells(with_run), len(plans),
                  mean([item for item, _ in plans], lambda item: constraint_value(item, "budget_satisfaction")),
                  fmean(claimed) if claimed else None, fmean(ratios) if ratios else None)
    table.note = ("Satisfied: the official check; claimed: the plan's own is_within_budget; cost / budget: the "
                  "recomputed cost (economy.cost_distribution) over the plan's total_budget, mean.")
    return table


def _summary(view: RolloutView) -> Any:
    itinerary = view.plan.get("itinerary") if isinstance(view.plan, Mapping) else None
    return itinerary.get("summary") if isinstance(itinerary, Mapping) else None


def _costs(item: Scored) -> dict[str, float]:
    found = (item.metrics or {}).get("economy", {}).get("cost_distribution")
    if not isinstance(found, Mapping):
        return {}
    return {key: value for key in COST_CATEGORIES if (value := _number(found.get(key))) is not None}


def _total_cost(item: Scored) -> float | None:
    costs = _costs(item)
    return sum(costs.values()) if costs else None


def cost_section(groups: Sequence[GroupView], *, with_run: bool) -> Section:
    table = Table("te_costs", "Cost composition (recomputed cost per plan, mean RMB, and share of the total)",
                  (*group_columns(with_run), Column("plans", Kind.INT),
                   *(Column(key, Kind.FLOAT) for key in COST_CATEGORIES), Column("total", Kind.FLOAT),
                   *(Column(f"{key} %", Kind.PCT) for key in COST_CATEGORIES[:3])))
    rows: list[tuple[str, Mapping[str, int]]] = []
    for g in groups:
        costs = [c for item in _items(g) if (c := _costs(item))]
        means = [fmean(c.get(key, 0.0) for c in costs) if costs else None for key in COST_CATEGORIES]
        total = sum(value for value in means if value is not None) if costs else None
        shares = [value / total if value is not None and total else None for value in means[:3]]
        table.add(*g.cells(with_run), len(costs), *means, total, *shares)
        if costs:
            rows.append((_label(g, with_run), {key: round(value or 0.0) for key, value in zip(COST_CATEGORIES,
                                                                                               means)}))
    table.note = "The official actual-cost recomputation (economy.cost_distribution), not the plans' own breakdown."
    return Section("Cost composition", [table], [StackedShares("te_costs", "What the money goes on", rows)])


def _distances(runs: Sequence[RunView]) -> str:
    sources: Counter[str] = Counter()
    for run in runs:
        for g in run.groups:
            for view in g.rollouts:
                if view.evaluation is not None and (source := view.evaluation.details.get("distance")):
                    sources[str(source)] += 1
    if not sources:
        return "Distances: none recorded (no plan was scored)."
    listed = ", ".join(f"{source} ({count} plans)" for source, count in sources.most_common())
    return (f"Distances for the space and transfer metrics: {listed}; `amap` is the Gaode web API, `offline` the "
            "sandbox's coordinates.")


def rollout_category(view: RolloutView) -> str:
    """How a rollout ended: its status if not delivered, else whether every constraint held (or the first that
    failed), or the evaluator's error."""
    if view.status != DELIVERED:
        return view.status
    item = scored(view)
    if not item.evaluated:
        return DELIVERED
    if item.metrics is None:
        return "not scored"
    failed = [key for key in CONSTRAINTS if constraint_value(item, key) != 1]
    return f"failed {failed[0]}" if failed else "all constraints met"


def report_sections(runs: Sequence[RunView], mode: str, *, with_run: bool) -> list[Section]:
    groups = [g for run in runs for g in run.groups]
    notes = [f"Evaluator: {mode}.", _distances(runs), PROMPTS_NOTE]
    if not any(run.evaluated for run in runs):
        notes.append(f"No `{mode}` evaluations are stored: add it to the spec's `evaluate` and run again.")
    scores, values = scores_table(groups, with_run=with_run)
    overview = Section("TravelEval: six dimensions", [constraint_table(groups, with_run=with_run), scores,
                                                      *dimension_tables(groups, with_run=with_run)],
                       list(radar_charts(groups, values, with_run=with_run)), notes)
    sections = [overview]
    by_tier, by_step = tier_table(groups, with_run=with_run), progressive_table(groups, with_run=with_run)
    breakdown = [table for table in (by_tier, by_step) if table is not None]
    if breakdown:
        sections.append(Section("By difficulty", breakdown))
    sections += [Section("Budget", [budget_table(groups, with_run=with_run)]), cost_section(groups, with_run=with_run)]
    counted = [(g, Counter(view.status for view in g.rollouts)) for g in groups]
    sections.append(Section("How rollouts ended", [outcome_table(
        "te_statuses", "How rollouts ended", "status", counted, {**GENERIC_STATUSES, **STATUSES},
        with_run=with_run)]))
    return sections


def group_rates(run: RunView, groups: Sequence[GroupView | None]) -> list[Mapping[str, float | None] | None]:
    """The seven constraint rates and all seven together, per group (for `report --compare`)."""
    rates: list[Mapping[str, float | None] | None] = []
    for g in groups:
        if g is None or not run.evaluated:
            rates.append(None)
            continue
        items = _items(g)
        rates.append({**{header: mean(items, _constraint(key))
                         for key, header in zip(CONSTRAINTS, CONSTRAINT_HEADERS)},
                      "all seven": mean(items, all_constraints)})
    return rates
