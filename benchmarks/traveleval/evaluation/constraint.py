"""Constraint compliance (`constraint` in the results): seven 0/1 verdicts, as the official
`core/metrics/constraint.py` gives them.

- `budget_satisfaction`: 1 when the plan's summary.is_within_budget is truthy and its summary.total_budget is 0
  or at least the recomputed cost (`extract.total_cost`). Official quirk: the budget is the plan's own claim, not
  the query's (fix `budget-from-query`).
- `time_compliance`: 1 when the query has no days, or summary.total_days == query days (3 != "3").
- `people_adaptability`: 0 when summary.total_travelers != people_number, a leg's details.number is below it,
  the room capacity is below it, an activity's truthy ticket_number is below it, or an activity's or ending
  point's vehicles (load_limit - 1 seats x car_number, both given) seat fewer; checked in that order; 1 when the
  query has no people_number.
- `accommodation_satisfaction`: 0 when the mean of the room types' nights differs from total_days - 1 (no room
  type fails the plan: division by zero) or the city has no hotels; else the hotel (first row of that exact name)
  feature must be one of the preferences, or, without preferences, not one of the constraints; 1 without either.
- `transportation_satisfaction`: 1 without transport preferences or constraints. Each leg's transportation_to
  must be a preference (0 at once otherwise); the constraints only count on the LAST leg (each leg overwrites the
  verdict; fix `transport-every-leg`); 0 without legs.
- `diet_preference_satisfaction`: 0 when the city has no restaurants. Meals are walked in day order; a meal's
  cuisine is its restaurant's (first row of that exact name); a meal at an unknown restaurant keeps the previous
  meal's cuisine ("" before any). While preferences remain, a meal's cuisine is struck off them and constraints
  are not looked at; once none remain (or when there were none), a meal with an excluded cuisine gives 0. In the
  end 1 when every preference was met (fix `diet-exclusions-always`).
- `travel_time_satisfaction`: 1 when the city has no attractions; else 0 as soon as an attraction activity's
  effective time (`time.effective_hours`) is outside [recommendmintime, recommendmaxtime].
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.traveleval.evaluation.accuracy import activity_details, room_capacity
from benchmarks.traveleval.evaluation.extract import total_cost
from benchmarks.traveleval.evaluation.time import visited_attractions
from benchmarks.traveleval.sandbox.sandbox import Attraction


def budget_satisfaction(itinerary: Any, query: Mapping[str, Any], *, fixed: bool = False) -> int:
    cost = total_cost(itinerary)
    summary = itinerary.get("summary", {})
    budget = float((query.get("budget") if fixed else summary.get("total_budget", 0)) or 0)
    if not summary.get("is_within_budget", False):
        return 0
    return int(budget == 0 or cost <= budget)


def time_compliance(itinerary: Any, query: Mapping[str, Any]) -> int:
    planned = itinerary.get("summary", {}).get("total_days", 0)
    wanted = query.get("days", 0)
    return int(wanted == 0 or planned == wanted)


def people_adaptability(itinerary: Any, query: Mapping[str, Any]) -> int:
    people = query.get("people_number", 0)
    if people == 0:
        return 1
    if itinerary.get("summary", {}).get("total_travelers", 0) != people:
        return 0
    for leg in itinerary["intercity_transport"]["transport_type"]:
        if float(leg.get("details").get("number")) < people:
            return 0
    if room_capacity(itinerary) < people:
        return 0
    for day_plan in itinerary["daily_plans"]:
        for details in activity_details(day_plan):
            ticket_number = details.get("ticket_number", 0)
            if ticket_number and ticket_number < people:
                return 0
            if _too_few_seats(details, people):
                return 0
        end = day_plan.get("ending_point", {})
        if end and "details" in end and end["details"] is not None and _too_few_seats(end["details"], people):
            return 0
    return 1


def _too_few_seats(details: Any, people: Any) -> bool:
    load_limit, car_number = details.get("load_limit"), details.get("car_number")
    if load_limit is None or car_number is None:
        return False
    seats, cars = float(load_limit) - 1, float(car_number)
    return bool(seats and cars and seats * cars < people)


def accommodation_satisfaction(itinerary: Any, query: Mapping[str, Any], features: Mapping[str, str]) -> int:
    """`features`: hotel name -> featurehoteltype (first row of each name); empty for an unknown city."""
    wanted = query.get("accommodations", {})
    preferences, constraints = wanted.get("preferences", []), wanted.get("constraints", [])
    last_day = itinerary.get("summary").get("total_days", 0)
    name = itinerary.get("accommodation").get("hotel_name", "")
    nights: float = 0
    rooms = 0
    for room in itinerary["accommodation"].get("room_type"):
        nights += int(room.get("nights", 0))
        rooms += 1
    if nights / rooms != last_day - 1:
        return 0
    if not features:
        return 0
    feature = features.get(name, "") if isinstance(name, str) else ""
    if preferences:
        return int(feature in preferences)
    return int(feature not in constraints) if constraints else 1


def transportation_satisfaction(itinerary: Any, query: Mapping[str, Any], *, fixed: bool = False) -> int:
    wanted = query.get("transportation", {})
    preferences, constraints = wanted.get("preferences", []), wanted.get("constraints", [])
    if not preferences and not constraints:
        return 1
    verdict = False
    for leg in itinerary.get("intercity_transport", []).get("transport_type"):
        kind = leg.get("transportation_to")
        if preferences and kind not in preferences:
            return 0
        verdict = kind not in constraints
        if fixed and not verdict:
            return 0
    return int(verdict)


def diet_preference_satisfaction(schedules: Mapping[Any, Any], query: Mapping[str, Any],
                                 cuisines: Mapping[str, str], *, fixed: bool = False) -> int:
    """`cuisines`: restaurant name -> cuisine (first row of each name); empty for an unknown city."""
    wanted = query.get("diet", {})
    pending, constraints = wanted.get("preferences", []), wanted.get("constraints", [])
    if not cuisines:
        return 0
    cuisine = ""
    for activities in schedules.values():
        for activity in [act for act in activities if act and act.get("type") == "meal"]:
            name = activity.get("location_name")
            found = cuisines.get(name) if isinstance(name, str) else None
            if found is not None:
                cuisine = found
            elif fixed:
                cuisine = ""
            if pending:
                pending = [item for item in pending if item != cuisine]
                if fixed and cuisine in constraints:
                    return 0
            elif cuisine in constraints:
                return 0
    return int(not pending)


def travel_time_satisfaction(schedules: Mapping[Any, Any], dates: Any, attractions: Mapping[str, Attraction], *,
                             queue: bool = True) -> int:
    if not attractions:
        return 1
    for _, _, row, effective in visited_attractions(schedules, dates, attractions, queue=queue):
        if effective < row.recommendmintime or effective > row.recommendmaxtime:
            return 0
    return 1
