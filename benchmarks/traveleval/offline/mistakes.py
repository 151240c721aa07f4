"""The mistakes `offline:noisy` builds into the oracle's plans, each aimed at one official metric.

Which mistake a query gets is a pure function of the seed and the query (`injected_mistake`), so a report or the
demo can recover it per task; a mistake is drawn only among those the query admits (a transport mistake needs a
transport preference, ...). `apply_mistake` makes it; a mistake the plan gives no hold for (no attraction with
opening hours to break) is not made, and it says so.

| mistake | what the plan does | metric it moves |
|---|---|---|
| fictitious attraction | an attraction renamed to a place that does not exist | accuracy.fictitious_attraction_rate |
| closed attraction | a visit moved before the attraction opens | accuracy.opening_hours_violations |
| miscounted costs | the breakdown's meals 10% + 50 too high | accuracy.cost_deviation_rate |
| wrong train times | the outbound leg given a time no timetable row has | accuracy.intercity_planning_deviation |
| wrong traveller count | one traveller more in the summary | constraint.people_adaptability |
| over budget | a banquet: 125% of the budget, still "within budget" | constraint.budget_satisfaction |
| wrong day count | the trip one day short (queries of 3+ days) | constraint.time_compliance |
| excluded transport | legs of an excluded / not the preferred type | constraint.transportation_satisfaction |
| hotel without the feature | preferred feature missing, or the excluded one | constraint.accommodation_satisfaction |
| cuisine missed | the preferred cuisines avoided (or an excluded one eaten) | constraint.diet_preference_satisfaction |
| visit too short | one visit of 5 minutes, below the recommended time | constraint.travel_time_satisfaction |

A rate moves above zero (intercity deviation above `DEVIATION_FLOOR`), a constraint fails (0).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.offline import NoisyConfig, NoisyOptions
from benchmarks.traveleval.evaluation.accuracy import intercity_planning_deviation
from benchmarks.traveleval.evaluation.city import intercity_options
from benchmarks.traveleval.offline.plan_builder import build_plan, clock, minutes, settle_costs, visit_minutes
from benchmarks.traveleval.sandbox.sandbox import Sandbox

DEFAULT_RATE = 0.8
FICTITIOUS_NAME = "天空之城水晶迷宫"
"""An attraction no city has (and no real name contains)."""
DEVIATION_FLOOR = 0.05
"""Intercity deviation below this is the timetable's rounding (durations in hundredths of an hour), not a mistake."""


@dataclass(frozen=True, slots=True)
class Mistake:
    name: str
    dimension: str
    metric: str
    shows: Callable[[Any], bool]
    """Whether the metric's value shows the mistake (a rate above zero, a constraint failed)."""
    admits: Callable[[Mapping[str, Any]], bool] = lambda query: True
    """Whether a query admits the mistake."""


def _failed(value: Any) -> bool:
    return isinstance(value, int | float) and value == 0


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 1e-9


def _has(block: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda query: bool((query.get(block) or {}).get("preferences") or (query.get(block) or {}).get(
        "constraints"))


MISTAKES: tuple[Mistake, ...] = (
    Mistake("fictitious attraction", "accuracy", "fictitious_attraction_rate", _positive),
    Mistake("closed attraction", "accuracy", "opening_hours_violations", _positive),
    Mistake("miscounted costs", "accuracy", "cost_deviation_rate", _positive),
    Mistake("wrong train times", "accuracy", "intercity_planning_deviation",
            lambda value: isinstance(value, int | float) and value > DEVIATION_FLOOR),
    Mistake("wrong traveller count", "constraint", "people_adaptability", _failed),
    Mistake("over budget", "constraint", "budget_satisfaction", _failed),
    Mistake("wrong day count", "constraint", "time_compliance", _failed, lambda query: int(query["days"]) >= 3),
    Mistake("excluded transport", "constraint", "transportation_satisfaction", _failed, _has("transportation")),
    Mistake("hotel without the feature", "constraint", "accommodation_satisfaction", _failed,
            _has("accommodations")),
    Mistake("cuisine missed", "constraint", "diet_preference_satisfaction", _failed, _has("diet")),
    Mistake("visit too short", "constraint", "travel_time_satisfaction", _failed),
)
BY_NAME = {mistake.name: mistake for mistake in MISTAKES}


NOISY = NoisyOptions("TravelEval", DEFAULT_RATE)
"""`offline:noisy`'s options: `seed=3&rate=0.5`."""


def injected_mistake(query: Mapping[str, Any], config: NoisyConfig) -> Mistake | None:
    """The mistake `offline:noisy` builds into its plan for this query (None: the oracle's plan)."""
    rng = random.Random(f"{config.seed}\x1f{query.get('uid')}\x1f{query.get('dates')}\x1f{query.get('budget')}")
    if rng.random() >= config.rate:
        return None
    admitted = [mistake for mistake in MISTAKES if mistake.admits(query)]
    return admitted[rng.randrange(len(admitted))]


def found_mistakes(metrics: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The mistakes an evaluation's metrics show (`{"accuracy": {...}, "constraint": {...}, ...}`)."""
    return [m.name for m in MISTAKES if m.shows((metrics.get(m.dimension) or {}).get(m.metric))]


def noisy_plan(sandbox: Sandbox, query: Mapping[str, Any],
               config: NoisyConfig) -> tuple[dict[str, Any] | None, Mistake | None]:
    """The noisy model's plan and the mistake made in it (None when none was drawn or the plan gave no hold)."""
    mistake = injected_mistake(query, config)
    plan = make_mistake(sandbox, query, mistake) if mistake is not None else None
    return (plan, mistake) if plan is not None else (build_plan(sandbox, query), None)


def make_mistake(sandbox: Sandbox, query: Mapping[str, Any], mistake: Mistake) -> dict[str, Any] | None:
    """The oracle's plan with `mistake` in it; None when the plan gives it no hold (or there is no plan)."""
    plan = _rebuilt(sandbox, query, mistake.name)
    edit = _EDITS.get(mistake.name)
    if plan is None:
        return None
    if edit is None:  # built for a changed query: a mistake only if the sandbox offered something else
        return plan if plan != build_plan(sandbox, query) else None
    return plan if edit(sandbox, query, plan["itinerary"]) else None


def _swapped(query: Mapping[str, Any], block: str) -> dict[str, Any]:
    """The query with a block's preferences and exclusions swapped: the plan then wants what was excluded and
    avoids what was wanted."""
    wanted = dict(query.get(block) or {})
    swapped = {"preferences": list(wanted.get("constraints") or []), "constraints": list(wanted.get("preferences")
                                                                                        or [])}
    return {**query, block: swapped}


def _rebuilt(sandbox: Sandbox, query: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The plan the mistake starts from: the oracle's, or one built for a changed query."""
    changed: Mapping[str, Any] = query
    if name == "wrong day count":
        changed = {**query, "days": int(query["days"]) - 1}
    elif name in ("excluded transport", "hotel without the feature", "cuisine missed"):
        block = {"excluded transport": "transportation", "hotel without the feature": "accommodations",
                 "cuisine missed": "diet"}[name]
        changed = _swapped(query, block)
    plan = build_plan(sandbox, changed)
    return None if plan is None else copy.deepcopy(plan)


def _attractions(itinerary: Mapping[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(day["day"], activity) for day in itinerary["daily_plans"] for activity in day["activities"]
            if activity["type"] == "attraction"]


def _fictitious(sandbox: Sandbox, query: Mapping[str, Any], itinerary: dict[str, Any]) -> bool:
    for _, activity in _attractions(itinerary)[:1]:
        activity["location_name"] = FICTITIOUS_NAME
        activity["description"] = f"游览{FICTITIOUS_NAME}"
        return True
    return False


def _closed(sandbox: Sandbox, query: Mapping[str, Any], itinerary: dict[str, Any]) -> bool:
    for day, activity in _attractions(itinerary):
        row = sandbox.attraction(str(query["target_city"]), activity["location_name"])
        if row is None or minutes(row.opentime) < 120:
            continue
        start = minutes(row.opentime) - 90
        stay = visit_minutes(row, str(query["dates"]), day, start)
        if stay is None:
            continue
        activity["start_time"], activity["end_time"] = clock(start), clock(start + stay)
        return True
    return False


def _miscounted(sandbox: Sandbox, query: Mapping[str, Any], itinerary: dict[str, Any]) -> bool:
    breakdown = itinerary["cost_breakdown"]
    breakdown["meals"] = breakdown["meals"] * 1.1 + 50
    breakdown["total"] = sum(value for key, value in breakdown.items() if key != "total")
    return True


def _fast_train(sandbox: Sandbox, query: Mapping[str, Any], itinerary: dict[str, Any]) -> bool:
    """The outbound leg said to take a time no timetable row of the route comes near. Which row the official check
    compares a leg with depends on its clock times (and a row of a day or more can match a short leg), so the time
    is tried, from 40% of the route's fastest, until the evaluator's own check sees the deviation."""
    origin, destination = str(query["start_city"]), str(query["target_city"])
    trains, flights = intercity_options(sandbox, origin, destination)
    hours = [option.duration for option in (*trains, *flights)]
    leg = itinerary["intercity_transport"]["transport_type"][0]
    begin = minutes(leg["start_time"])
    first = round(0.4 * min(hours, default=1.0) * 60)
    for length in (first, *range(30, 24 * 60, 30)):
        leg["end_time"] = clock((begin + length) % (24 * 60))
        if intercity_planning_deviation(itinerary, trains, flights) > 4 * DEVIATION_FLOOR:
            return True
    return False


def _one_more(sandbox: Sandbox, query: Mapping[str, Any], itinerary: dict[str, Any]) -> bool:
    itinerary["summary"]["total_travelers"] = int(query["people_number"]) + 1
    return True


def _banquet(sandbox: Sandbox, query: Mapping[str, Any], itinerary: dict[str, Any]) -> bool:
    meals = [a for day in itinerary["daily_plans"] for a in day["activities"] if a["type"] == "meal"]
    if not meals:
        return False
    settle_costs(itinerary)
    meals[-1]["cost"] += float(query["budget"]) * 1.25 - itinerary["summary"]["calculated_total_cost"] + 1
    settle_costs(itinerary)
    itinerary["summary"]["is_within_budget"] = True  # the claim the official check takes at its word
    return True


def _short_visit(sandbox: Sandbox, query: Mapping[str, Any], itinerary: dict[str, Any]) -> bool:
    for _, activity in _attractions(itinerary):
        row = sandbox.attraction(str(query["target_city"]), activity["location_name"])
        if row is not None and row.recommendmintime >= 0.25:
            activity["end_time"] = clock(minutes(activity["start_time"]) + 5)
            return True
    return False


_EDITS: Mapping[str, Callable[[Sandbox, Mapping[str, Any], dict[str, Any]], bool]] = {
    "fictitious attraction": _fictitious, "closed attraction": _closed, "miscounted costs": _miscounted,
    "wrong train times": _fast_train, "wrong traveller count": _one_more, "over budget": _banquet,
    "visit too short": _short_visit,
}
"""Mistakes made by editing the plan (the others are made by building it for a changed query, `_rebuilt`)."""
