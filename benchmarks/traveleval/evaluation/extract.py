"""What the evaluator reads out of a plan, as the official `PlanExtractor` (core/utils/plan_extractors.py) reads it.

The evaluator works on the raw itinerary dict (`FinalTravelPlan.itinerary`), not on a validated model: the
official code reads it with `dict.get`, `float()` and `int()`, and where those fail on a malformed plan the
official evaluator records the plan as an error. The functions here fail the same way, with the same built-in
exceptions, and `evaluation.evaluate_plan` turns them into `{"query_uid", "error"}`.

Official behaviour reproduced here:
- Daily stops (`daily_stops`): per `day` (a day plan without `day` is skipped; a repeated `day` replaces the
  earlier one in place), the `starting_point` (when truthy, typed `starting_point`, times 00:00-00:00), every
  activity with a truthy `location_name` (its `type` and times), then the `ending_point` (a dict: its
  `location_name` (default ""), `type`, `start_time`/`end_time` (default 23:59); any other truthy value: the name
  "ending_point"). Each activity's `cost` is converted with `float(cost or 0)`, so a non-numeric cost fails the plan.
- Durations (`activity_hours`): end - start in hours from `H:MM`; an end hour below the start hour wraps over
  midnight; a negative result is 0; an unreadable time gives 0.0.
- Recomputed cost (`actual_costs`, the "actual cost" of several metrics): intercity = sum of details.price x
  details.number; hotel = sum of quantity x price_per_night x nights; each activity: ticket_price x ticket_number
  (x summary.total_travelers when the ticket number is 0 or missing) when there is a ticket price, else its `cost`,
  booked under attractions / meals / other (transport, accommodation and check-in/out activities are not booked);
  intracity = every activity's and every ending point's transportation_cost that is below the LAST intercity
  leg's details.price (infinity when there is no leg). Categories with nothing booked stay the integer 0.
- Trip span in days (`trip_days`): (last leg's end - first leg's start) / 24 + total_days - 1, the clock times
  8:00 and 22:00 when there is no leg.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COST_CATEGORIES = ("attractions", "intercity_transportation", "intracity_transportation", "accommodation", "meals",
                   "other")
"""The recomputed cost's categories, in the official order (the order of `cost_distribution`)."""
_UNBOOKED = ("intercity_transport", "accommodation", "accommodation_check_in", "accommodation_check_out",
             "intracity_transport")
"""Activity types whose cost is not booked into any category (their tickets are counted elsewhere or not at all)."""

Stop = dict[str, Any]
"""One daily stop: `name`, `type`, `start_time`, `end_time`."""


def activity_hours(activity: Any) -> float:
    """Hours from `start_time` to `end_time` (both `H:MM`, default 00:00), wrapping past midnight; 0 when negative,
    0.0 when unreadable."""
    try:
        start_h, start_m = map(int, activity.get("start_time", "00:00").split(":"))
        end_h, end_m = map(int, activity.get("end_time", "00:00").split(":"))
    except (ValueError, AttributeError):
        return 0.0
    hours = (end_h + 24 - start_h if start_h > end_h else end_h - start_h) + (end_m - start_m) / 60.0
    return max(0, hours)


def clock_hours(text: Any) -> float:
    """`H:MM` as hours (9:30 -> 9.5), as the time metrics read a clock time; raises on anything else."""
    return int(text.split(":")[0]) + int(text.split(":")[1]) / 60


def daily_stops(itinerary: Any, *, with_ends: bool = True) -> dict[Any, list[Stop]]:
    """The stops of each day (see the module docstring), keyed by the plan's `day` values in plan order."""
    days: dict[Any, list[Stop]] = {}
    for day_plan in itinerary.get("daily_plans", []):
        day = day_plan.get("day")
        if day is None:
            continue
        stops: list[Stop] = []
        start = day_plan.get("starting_point") if with_ends else None
        if start:
            stops.append({"name": start, "type": "starting_point", "start_time": "00:00", "end_time": "00:00"})
        for activity in day_plan.get("activities", []):
            stop = {"name": activity.get("location_name"), "type": activity.get("type"),
                    "start_time": activity.get("start_time"), "end_time": activity.get("end_time")}
            float(activity.get("cost", 0) or 0)  # the official extraction converts it: a non-number fails the plan
            if stop["name"]:
                stops.append(stop)
        end = day_plan.get("ending_point") if with_ends else None
        if end and isinstance(end, dict):
            stops.append({"name": end.get("location_name", ""), "type": end.get("type"),
                          "start_time": end.get("start_time", "23:59"), "end_time": end.get("end_time", "23:59")})
        elif end:
            stops.append({"name": "ending_point", "type": "ending_point", "start_time": "23:59", "end_time": "23:59"})
        days[day] = stops
    return days


def stop_names(days: Mapping[Any, list[Stop]]) -> dict[Any, list[Any]]:
    """Each day's stop names, days in sorted order (the official attraction sequence)."""
    return {day: [stop["name"] for stop in days[day]] for day in sorted(days)}


def attraction_names(days: Mapping[Any, list[Stop]]) -> dict[Any, list[Any]]:
    """Each day's stops of type `attraction`, by name, days in sorted order."""
    return {day: [stop["name"] for stop in days[day] if stop["type"] == "attraction"] for day in sorted(days)}


def daily_activities(itinerary: Any) -> dict[Any, Any]:
    """Each day's raw `activities` list, keyed by `day` (days without one skipped)."""
    return {day_plan.get("day"): day_plan.get("activities", []) for day_plan in itinerary.get("daily_plans", [])
            if day_plan.get("day") is not None}


def check_readable(itinerary: Any) -> None:
    """Fail where the official extraction step fails before any metric runs (then the plan is an error)."""
    days = daily_stops(itinerary)
    stop_names(days)
    daily_activities(itinerary)
    summary = itinerary.get("summary", {})
    breakdown = itinerary.get("cost_breakdown", {})
    for category in (*COST_CATEGORIES, "total"):
        breakdown.get(category)
    summary.get("is_within_budget", False)


def actual_costs(itinerary: Any) -> dict[str, Any]:
    """The plan's cost recomputed from its itemised fields, per category (see the module docstring)."""
    costs: dict[str, Any] = dict.fromkeys(COST_CATEGORIES, 0)
    travelers = itinerary.get("summary", {}).get("total_travelers")
    total: Any = 0
    details: Any = None
    for leg in itinerary["intercity_transport"]["transport_type"]:
        details = leg.get("details")
        total = total + float(details.get("price")) * float(details.get("number"))
    costs["intercity_transportation"] = total
    if details is None:
        details = {"price": float("inf")}
    total = 0
    for room in itinerary["accommodation"]["room_type"]:
        total = total + float(room.get("quantity")) * float(room.get("price_per_night")) * float(room.get("nights"))
    costs["accommodation"] = total
    for day_plan in itinerary["daily_plans"]:
        for activity in day_plan["activities"]:
            cost = _activity_cost(activity, travelers)
            transfer = float(activity.get("transportation_cost", 0))
            kind = activity["type"]
            if kind == "attraction":
                costs["attractions"] += cost
            elif kind == "meal":
                costs["meals"] += cost
            elif kind not in _UNBOOKED:
                costs["other"] += cost
            if transfer < details.get("price"):
                costs["intracity_transportation"] += transfer
        end = day_plan.get("ending_point", {})
        if end and float(end.get("transportation_cost", 0)) < details.get("price"):
            costs["intracity_transportation"] += float(end.get("transportation_cost", 0))
    return costs


def _activity_cost(activity: Any, travelers: Any) -> float:
    details = activity.get("details") if "details" in activity else None
    if details is None:
        return float(activity.get("cost", 0))
    price = float(details.get("ticket_price", 0) or 0.0)
    number = int(details.get("ticket_number", 0) or 0)
    if not price:
        return float(activity.get("cost", 0))
    return price * number if number else price * travelers


def total_cost(itinerary: Any) -> Any:
    """The recomputed cost's sum over the categories, in the official order."""
    total: Any = 0
    for value in actual_costs(itinerary).values():
        total += value
    return total


def trip_days(summary: Any, legs: Any) -> float:
    """The trip's span in days: first leg's start to last leg's end plus the whole days between (module docstring)."""
    start, end = (legs[0]["start_time"], legs[-1]["end_time"]) if legs else ("8:00", "22:00")
    hours = clock_hours(end) - clock_hours(start)
    return hours / 24 + int(summary["total_days"]) - 1
