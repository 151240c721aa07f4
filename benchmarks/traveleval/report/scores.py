"""The six dimension scores: tripbench's (the official code defines none), each in 0..1, higher better, on a fixed
scale: a plan's score depends on that plan alone, so a group scores the same whatever else is in the report.

Each is computed per scored plan, then averaged over the plans (the official analysis's rule); a dimension whose
inputs were not measured on any plan is "not measured", and is left out of the radar charts.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from benchmarks.reporting import Cell
from benchmarks.traveleval.metric_names import BY_KEY, METRICS
from benchmarks.traveleval.report.aggregate import NOT_MEASURED, Scored, mean_of, value

DIMENSIONS = ("accuracy", "constraint", "time", "space", "economy", "utility")
BE_HALF = 10.0
"""The budget efficiency (experience value per 1,000 RMB) that scores 0.5 on the economy scale BE / (BE + BE_HALF)."""
PROFIT_FULL = 5.0
"""The profit (experience value per attraction) that scores 1 on the utility scale: five stars, no preference bonus."""
SCALES = (
    "Dimension scores (tripbench's fixed scales, 0..1, higher is better; the official code defines none), per plan "
    "then averaged over the scored plans: accuracy = 1 - the mean of the measured accuracy rates (CCD, FAR, VROH, "
    "FRTC, ITD, PD, each capped at 1); constraint = the share of the seven compliance metrics met; time = STR (capped "
    f"at 1); space = 1 / (1 + SSR); economy = BE / (BE + {BE_HALF:g}); utility = Profit / {PROFIT_FULL:g} (capped at "
    "1). A dimension with no measured input is `not measured`, and left out of the radar.")
_ACCURACY = [metric for metric in METRICS if metric.dimension == "accuracy"]
_CONSTRAINTS = [metric for metric in METRICS if metric.dimension == "constraint"]


def plan_accuracy(item: Scored) -> float | str | None:
    rates = [value(item, metric) for metric in _ACCURACY]
    known = [min(1.0, rate) for rate in rates if isinstance(rate, float)]
    return 1 - fmean(known) if known else NOT_MEASURED if NOT_MEASURED in rates else None


def plan_constraint(item: Scored) -> float | None:
    met = [value(item, metric) for metric in _CONSTRAINTS]
    return fmean(float(v == 1.0) for v in met) if item.metrics is not None else None


def plan_time(item: Scored) -> float | str | None:
    found = value(item, BY_KEY["time", "average_tour_ratio"])
    return min(1.0, max(0.0, found)) if isinstance(found, float) else found


def plan_space(item: Scored) -> float | str | None:
    found = value(item, BY_KEY["space", "RP"])
    return 1 / (1 + max(0.0, found)) if isinstance(found, float) else found


def plan_economy(item: Scored) -> float | str | None:
    found = value(item, BY_KEY["economy", "budget_efficiency"])
    if not isinstance(found, float):
        return found
    found = max(0.0, found)
    return found / (found + BE_HALF)


def plan_utility(item: Scored) -> float | str | None:
    found = value(item, BY_KEY["utility", "profit"])
    return min(1.0, max(0.0, found) / PROFIT_FULL) if isinstance(found, float) else found


PER_PLAN = {"accuracy": plan_accuracy, "constraint": plan_constraint, "time": plan_time, "space": plan_space,
             "economy": plan_economy, "utility": plan_utility}


def dimension_scores(items: Sequence[Scored]) -> list[Cell]:
    """The six scores (`DIMENSIONS` order) over the scored plans among `items`."""
    return [mean_of(items, PER_PLAN[dimension]) for dimension in DIMENSIONS]


def radar_spokes(rows: Sequence[Sequence[Cell]]) -> list[int]:
    """The dimensions a radar shows: those measured for some outline (a radar draws no unmeasured spoke at 0)."""
    return [n for n in range(len(DIMENSIONS)) if any(isinstance(row[n], float) for row in rows)]
