"""The overall views per agent (run, model, strategy), pooled over every query of the run: compliance with the
counts and the delivery rate, the six dimension scores with a radar per model, each dimension's metrics, the budget
and what the money goes on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from benchmarks.reporting import Cell, Column, Kind, Radar, Section, StackedShares, Table
from benchmarks.traveleval.evaluation.modes import NO_QUEUE
from benchmarks.traveleval.metric_names import COST_NAMES, METRICS, MetricName
from benchmarks.traveleval.report.aggregate import (
    COST_CATEGORIES,
    Agent,
    Scored,
    add_rows,
    all_seven,
    all_seven_per_rollout,
    lead_columns,
    mean_of,
    metric_mean,
    number,
    partly_measured,
    plans,
)
from benchmarks.traveleval.report.scores import DIMENSIONS, SCALES, dimension_scores, radar_spokes

SHORT = {"cost_deviation_rate": "cost dev.", "fictitious_attraction_rate": "fictitious",
         "opening_hours_violations": "opening hours", "transportation_breaks": "transfer breaks",
         "intercity_planning_deviation": "intercity dev.", "people_deviation": "people dev.",
         "budget_satisfaction": "budget", "time_compliance": "days", "people_adaptability": "people",
         "accommodation_satisfaction": "hotel", "transportation_satisfaction": "transport",
         "diet_preference_satisfaction": "diet", "travel_time_satisfaction": "visit time",
         "average_tour_ratio": "tour ratio", "daily_time_utilization": "daily use",
         "overall_time_utilization": "overall use", "RP": "route penalty", "CSM.P90": "", "CSM.P95": "",
         "budget_efficiency": "budget efficiency", "aqe": "", "profit": "", "diversity": "diversity", "ads": "density"}
"""A word or two after the acronym in column headers."""
RULE = ("Means over the plans the evaluator scored, each metric over the plans where it has a value (the official "
        "analysis: `df.mean()` of its per-plan rows); rollouts without a scored plan are counted, not averaged.")


def header(metric: MetricName) -> str:
    """A column header: the paper's acronym, then a word or two."""
    return f"{metric.acronym} {SHORT.get(metric.key, '')}".strip()


def _kind(metric: MetricName) -> Kind:
    return Kind.PCT if metric.binary or metric.dimension in ("accuracy", "time") else Kind.FLOAT


def compliance_table(found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Table:
    seven = [metric for metric in METRICS if metric.binary]
    table = Table("te_constraint", "Compliance and delivery (% of scored plans; counts of rollouts)",
                  (*lead_columns(with_run, with_samples), Column("splits"), Column("rollouts", Kind.INT),
                   Column("plans scored", Kind.INT), Column("delivery", Kind.PCT),
                   *(Column(header(metric), Kind.PCT) for metric in seven), Column("all seven", Kind.PCT),
                   Column("all seven / rollouts", Kind.PCT)))

    def row(items: Sequence[Scored]) -> list[Cell]:
        evaluated = [item for item in items if item.evaluated]
        scored_plans = plans(items)
        return ["+".join(agent.splits), len(items), len(scored_plans),
                len(scored_plans) / len(evaluated) if evaluated else None,
                *(metric_mean(items, metric) for metric in seven), mean_of(items, all_seven),
                all_seven_per_rollout(items)]

    for agent in found:
        add_rows(table, agent.cells(with_run), agent.samples, row, with_samples=with_samples)
    table.note = (f"{RULE} Delivery: plans scored / rollouts evaluated. All seven / rollouts: the share of evaluated "
                  "rollouts meeting every constraint, a rollout without a scored plan failing (not the paper's rule). "
                  "BCS: the plan claims to be within budget and its recomputed cost is not above the budget.")
    return table


def scores_table(found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Table:
    table = Table("te_dimensions", "Six dimensions (tripbench's fixed scales, 0..1, higher is better)",
                  (*lead_columns(with_run, with_samples), Column("plans", Kind.INT),
                   *(Column(dimension, Kind.FLOAT) for dimension in DIMENSIONS)))
    for agent in found:
        add_rows(table, agent.cells(with_run), agent.samples,
                 lambda items: [len(plans(items)), *dimension_scores(items)], with_samples=with_samples)
    table.note = SCALES
    return table


def radar_charts(found: Sequence[Agent], *, with_run: bool) -> list[Radar]:
    """One radar per model (paper Figure 4), one outline per strategy over all its samples; unmeasured dimensions
    have no spoke."""
    models: dict[str, list[Agent]] = {}
    for agent in found:
        models.setdefault(f"{agent.run}: {agent.model}" if with_run else agent.model, []).append(agent)
    charts = []
    for n, (model, members) in enumerate(models.items()):
        rows = [dimension_scores(agent.pooled) for agent in members]
        charts.append(radar(f"te_radar_{n + 1}", f"Six dimensions: {model}", rows, [a.strategy for a in members]))
    return charts


def radar(name: str, title: str, rows: Sequence[Sequence[Cell]], names: Sequence[str]) -> Radar:
    spokes = radar_spokes(rows)
    left = [DIMENSIONS[n] for n in range(len(DIMENSIONS)) if n not in spokes]
    suffix = f" ({', '.join(left)} not measured)" if left else ""
    return Radar(name, title + suffix, [DIMENSIONS[n] for n in spokes],
                 [(label, [number(row[n]) for n in spokes]) for label, row in zip(names, rows, strict=True)])


DIMENSION_TABLES = (
    ("te_accuracy", "Accuracy (%, lower is better)", "accuracy",
     "In `official` mode FRTC is the official code's constant 0 (it never checks a transfer): not measured."),
    ("te_time", "Temporality (%)", "time",
     "Effective visit time is the scheduled time minus the official queuing estimate (STR: the paper's "
     "scene-time ratio, the official average_tour_ratio)."),
    ("te_space", "Spatiality (lower is better)", "space",
     "SSR: the route penalty (the official RP), actual / shortest daily route - 1; CSM: cross-day mismatch "
     "percentiles. Not measured: a distance was missing (see the notes above)."),
    ("te_economy", "Economy", "economy",
     "BE: experience value / recomputed cost x 1000 (the official code's; the paper writes x 100 %); the cost "
     "composition is its own section."),
    ("te_utility", "Utility", "utility",
     "ADS: attractions per day / the rhythm's target density (1 = on target); EDI: category entropy / log2(24)."),
)


NO_QUEUE_TIME = "Effective visit time is the whole scheduled time: the `no-queue` mode switches the queuing model off."
"""The time table's note in `no-queue` mode (the paper's ablation), in place of its queuing note."""


def dimension_tables(found: Sequence[Agent], *, with_run: bool, with_samples: bool, mode: str = "official"
                     ) -> list[Table]:
    """One table per dimension besides compliance: the mean of each official metric over the scored plans."""
    tables = []
    for name, title, dimension, note in DIMENSION_TABLES:
        if name == "te_time" and mode == NO_QUEUE:
            note = NO_QUEUE_TIME
        metrics = [metric for metric in METRICS if metric.dimension == dimension]
        table = Table(name, title, (*lead_columns(with_run, with_samples), Column("plans", Kind.INT),
                                    *(Column(header(metric), _kind(metric)) for metric in metrics)))
        for agent in found:
            add_rows(table, agent.cells(with_run), agent.samples, _means(metrics), with_samples=with_samples)
        table.note = " ".join(filter(None, (RULE, note, partly_measured(found, metrics, with_run=with_run))))
        tables.append(table)
    return tables


def _means(metrics: Sequence[MetricName]) -> Callable[[Sequence[Scored]], list[Cell]]:
    """A row reader: the plans scored, then each metric's mean."""
    return lambda items: [len(plans(items)), *(metric_mean(items, metric) for metric in metrics)]


def budget_table(found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Table:
    table = Table("te_budget", "Budget (BCS, the plans' own claim, and what they cost)",
                  (*lead_columns(with_run, with_samples), Column("plans", Kind.INT), Column("BCS", Kind.PCT),
                   Column("claimed within", Kind.PCT), Column("cost / budget", Kind.PCT)))

    def row(items: Sequence[Scored]) -> list[Cell]:
        scored_plans = plans(items)
        claimed = [float(bool(s.get("is_within_budget"))) for item in scored_plans if (s := _summary(item))]
        ratios = [total / budget for item in scored_plans
                  if (total := total_cost(item)) is not None and (budget := number(_summary(item).get("total_budget")))]
        bcs = [float(item.metrics is not None and item.metrics.get("constraint", "budget_satisfaction") == 1)
               for item in scored_plans]
        return [len(scored_plans), fmean(bcs) if bcs else None, fmean(claimed) if claimed else None,
                fmean(ratios) if ratios else None]

    for agent in found:
        add_rows(table, agent.cells(with_run), agent.samples, row, with_samples=with_samples)
    table.note = (f"{RULE} BCS: the official check (the plan's own is_within_budget claim and its recomputed cost "
                  "within the budget; in `official` mode the plan's own total_budget); claimed: the plan's "
                  "is_within_budget; cost / budget: the recomputed cost over the plan's total_budget, mean.")
    return table


def _summary(item: Scored) -> dict[str, Any]:
    plan = item.view.plan
    itinerary = plan.get("itinerary") if isinstance(plan, dict) else None
    summary = itinerary.get("summary") if isinstance(itinerary, dict) else None
    return summary if isinstance(summary, dict) else {}


def costs(item: Scored) -> dict[str, float]:
    """The official recomputed cost by category (economy.cost_distribution), RMB."""
    if item.metrics is None:
        return {}
    return {key: amount for key in COST_CATEGORIES
            if (amount := number(item.metrics.get("economy", f"cost_distribution.{key}"))) is not None}


def total_cost(item: Scored) -> float | None:
    found = costs(item)
    return sum(found.values()) if found else None


def cost_means(items: Sequence[Scored]) -> tuple[int, list[float | None], float | None, list[float | None]]:
    """(plans with costs, mean RMB per category, mean total, each category's share of the money)."""
    found = [c for item in plans(items) if (c := costs(item))]
    means: list[float | None] = [fmean(c.get(key, 0.0) for c in found) if found else None for key in COST_CATEGORIES]
    total = sum(m for m in means if m is not None) if found else None
    return len(found), means, total, [m / total if m is not None and total else None for m in means]


COST_AXIS = "% of the recomputed cost (the mean plan's money)"


def cost_section(found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Section:
    table = Table("te_costs", "Cost composition (recomputed cost per plan: mean RMB, and each category's share)",
                  (*lead_columns(with_run, with_samples), Column("plans", Kind.INT),
                   *(Column(COST_NAMES[key], Kind.FLOAT) for key in COST_CATEGORIES), Column("total", Kind.FLOAT),
                   *(Column(f"{COST_NAMES[key]} %", Kind.PCT) for key in COST_CATEGORIES)))

    def row(items: Sequence[Scored]) -> list[Cell]:
        count, means, total, shares = cost_means(items)
        return [count, *means, total, *shares]

    for agent in found:
        add_rows(table, agent.cells(with_run), agent.samples, row, with_samples=with_samples)
    table.note = ("The official actual-cost recomputation (economy.cost_distribution, RMB), not the plans' own "
                  "breakdown, under the paper's names (ACD accommodation, ATD attractions, ETD intercity, RTD "
                  "intracity, MED meals, OTD other); shares are of the mean plan's total (the official code gives "
                  "RMB, the paper shares).")
    rows = [(agent.label(with_run), shares_of(agent.pooled)) for agent in found]
    chart = StackedShares("te_costs", "What the money goes on", [(label, r) for label, r in rows if r], COST_AXIS)
    return Section("Cost composition", [table], [chart])


def shares_of(items: Sequence[Scored]) -> dict[str, int]:
    """Mean RMB per category, rounded (a stacked bar's parts)."""
    count, means, _, _ = cost_means(items)
    return {key: round(m or 0.0) for key, m in zip(COST_CATEGORIES, means, strict=True)} if count else {}
