"""CostEnquiry, the sole-planning agents' tool (docs/fidelity/travelplanner.md §5): the cost of one day's sub-plan, or
the official reasons why it is not available.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from benchmarks.travelplanner import plan_fields
from benchmarks.travelplanner.tools.searches import distance_for_evaluation
from sandbox_index import Frame, Sandbox

MAX_FIELD_CHARS = 2000
"""Longest sub-plan field CostEnquiry parses: the official regexes are quadratic on long text (a field of real
plans is well under 300 characters; the evaluator uses the same bound)."""
COST_UNAVAILABLE = "Sorry, the cost of your plan is not available because of the following reasons:"
_MEAL_REASONS = {
    # official quirk, docs/fidelity/travelplanner.md §3.9: "breakfase" (sic).
    "breakfast": "The breakfase information is not valid, please check.",
    "lunch": "The lunch information is not valid, please check.",
    "dinner": "The dinner information is not valid, please check.",
}
# official quirk, docs/fidelity/travelplanner.md §3.9: the misspellings "filght" and "transporation" are the original's.
_FLIGHT_REASON = "The filght information is not valid"
_LEG_REASON = "The transporation information is not valid, please check."
_LEG_CITIES_REASON = (_LEG_REASON + " You have to make sure there are two cities (from A to B) in your "
                      "transportation plan.")


def _text(plan: Mapping[str, Any], key: str) -> str:
    """A field the official code parses with its regexes: KeyError when missing, TypeError when not text."""
    value = plan[key]
    if not isinstance(value, str):  # the official regexes raise TypeError on it
        raise TypeError(f"sub plan field {key!r} is not text: {type(value).__name__}")
    if len(value) > MAX_FIELD_CHARS:
        raise TypeError(f"sub plan field {key!r} is {len(value):,} characters long (limit {MAX_FIELD_CHARS:,})")
    return value


def _given(plan: Mapping[str, Any], key: str) -> bool:
    """The official "is filled" test: present, truthy and not `-` (and then it must be text)."""
    return key in plan and bool(plan[key]) and plan[key] != "-" and bool(_text(plan, key))


def _first(frame: Frame, column: str) -> Any:
    """`frame[column].values[0]`, typed as the pandas column (a float64 price stays a float)."""
    j = frame.columns.index(column)
    value = frame.rows[0][j]
    return float(value) if frame.dtypes[j] == "float" and isinstance(value, int | float) else value


def _leg_cost(sandbox: Sandbox, plan: Mapping[str, Any], people: Any, reflect: bool) -> tuple[float, str | None]:
    """Cost and error reason of the sub-plan's transportation (docs/fidelity/travelplanner.md §3.9).

    `people` is whatever the model wrote, priced with Python's arithmetic as the official code prices it: where
    that code catches every exception (the flight branch; the ground branch of the non-reflect environment) a
    `people_number` that is no number gives the branch's "not valid" reason; elsewhere the exception propagates.
    """
    value = plan["transportation"]
    origin, destination = plan_fields.extract_from_to(value)
    if origin is None or destination is None:
        origin, destination = plan_fields.extract_from_to(_text(plan, "current_city"))
    if reflect and (origin is None or destination is None):
        return 0, _LEG_REASON
    lowered = value.lower()
    if "flight number" in lowered:
        # official quirk, docs/fidelity/travelplanner.md §3.9: only the number is looked up; the flight's route is not
        # checked.
        number = plan_fields.flight_number(value)
        found = sandbox.flights_by_number(number) if number is not None else None
        if not found:
            return 0, _FLIGHT_REASON
        try:
            return 0 + _first(found, "Price") * people, None
        # official quirk, docs/fidelity/travelplanner.md §3.9: the official `except:` turns any failure into this reason
        except Exception:
            return 0, _FLIGHT_REASON
    if "self-driving" in lowered or "taxi" in lowered:
        mode, per_vehicle = ("self-driving", 5) if "self-driving" in lowered else ("taxi", 4)
        if reflect:  # ReactReflectEnv has no try here: only cities-less legs were turned away above
            cost = distance_for_evaluation(sandbox, origin, destination, mode).cost  # type: ignore[arg-type]
            return (0, _LEG_REASON) if cost is None else (0 + cost * math.ceil(people * 1.0 / per_vehicle), None)
        try:
            cost = distance_for_evaluation(sandbox, origin, destination, mode).cost  # type: ignore[arg-type]
            return (0, _LEG_REASON) if cost is None else (0 + cost * math.ceil(people * 1.0 / per_vehicle), None)
        except Exception:  # ReactEnv's `except:`: a leg without cities, or a people_number that is no number
            return 0, _LEG_CITIES_REASON
    return 0, None  # other transportation texts cost nothing and are not an error


def _named(plan: Mapping[str, Any], key: str, match: Callable[..., Frame]) -> Frame | None:
    """The rows named exactly by a "Name, City" field; None when the field is empty or unparsable."""
    if not _given(plan, key):
        return None
    name, city = plan_fields.get_valid_name_city(plan[key])
    if name == "-" or city == "-":  # official quirk, docs/fidelity/travelplanner.md §3.9: skipped silently, no error
        return None
    return match(name, city, exact=True)


def cost_enquiry(sandbox: Sandbox, sub_plan: Mapping[str, Any], *, reflect: bool = False) -> str:
    """The CostEnquiry text for a one-day sub-plan (`ReactEnv.run`; `ReactReflectEnv.run` with `reflect`).

    Restaurants and accommodations match name and city exactly; an unparsable "Name, City" is skipped.
    The reflect variant's retry counter is the agent's: every `COST_UNAVAILABLE` text counts as a failure.

    `people_number` is priced as the model wrote it, with the official code's arithmetic: `True` counts as 1, and a
    value that is no number fails only where the official code multiplies by it (a "not valid" reason where it
    catches that, an exception where it does not); fields that never reach it are priced as usual.

    Raises:
        KeyError: `people_number` (or a needed `current_city`) is missing.
        TypeError: a field is not text (or longer than `MAX_FIELD_CHARS`), or a meal, an accommodation (or, with
            `reflect`, a ground leg) is priced with a `people_number` that is no number.
        ArithmeticError, ValueError: the same with an infinite `people_number`.
            The official planner aborts the run on all of these (docs/fidelity/travelplanner.md §5), so the caller
            decides what that means.
    """
    people = sub_plan["people_number"]
    # Integers stay integers: the official total prints as `1335` unless a float (an accommodation price)
    # was added, then as numpy prints a float64 (`1335.0`).
    total: float = 0
    reasons = []
    if _given(sub_plan, "transportation"):
        cost, reason = _leg_cost(sandbox, sub_plan, people, reflect)
        total += cost
        reasons += [reason] if reason else []
    for meal, reason in _MEAL_REASONS.items():
        found = _named(sub_plan, meal, sandbox.match_restaurants)
        if found:
            total += _first(found, "Average Cost") * people
        elif found is not None:
            reasons.append(reason)
    found = _named(sub_plan, "accommodation", sandbox.match_accommodations)
    if found:
        total += _first(found, "price") * math.ceil(people * 1.0 / _first(found, "maximum occupancy"))
    elif found is not None:
        reasons.append("The accommodation information is not valid, please check.")
    if not reasons:
        return f"The cost of your plan is {total} dollars."
    return COST_UNAVAILABLE + "".join(f"{k}. {reason} \t" for k, reason in enumerate(reasons, start=1))
