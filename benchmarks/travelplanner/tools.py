"""The TravelPlanner sandbox tools with the official observation texts (spec §3, §4.4-§4.6).

Each tool is a function of a `Sandbox` returning what the official `tools/*/apis.py` `run` returns: a
`Frame` (the DataFrame) or a message string. `execute_action` adds the two-stage agent's per-action handling
(`agents/tool_agents.py`, spec §4.5): argument splitting and validation, the observation text with its
stripping (spec §4.6), the json_log state and the failure counter. What depends on the agent's memory
(masking the scratchpad, counters, `current_data`, the notebook, early stops) stays with the agent; a
`ToolOutcome` tells it what the official code would do with each of them.

Arguments are untrusted model text: they reach the sandbox only as bound SQL parameters, and every odd
input ends in the official not-found or error observation, never an exception.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from benchmarks.travelplanner.render import to_string
from sandbox_index import DistanceRow, Frame, Sandbox

# json_log states (spec §4.8).
SUCCESSFUL = "Successful"
DATE_ERROR = "Illegal args. DateError"
CITY_ERROR = "Illegal args. City Error"
OTHER_ERROR = "Illegal args. Other Error"
INVALID_ACTION_STATE = "invalidAction"

# The observation of an unknown or unparsable action; the double spaces are the original's (spec §4.5).
INVALID_ACTION = (
    "Invalid Action. Valid Actions are  FlightSearch[Departure City, Destination City, Date] / "
    "AccommodationSearch[City] /  RestaurantSearch[City] / NotebookWrite[Short Description] / "
    "AttractionSearch[City] / CitySearch[State] / GoogleDistanceMatrix[Origin, Destination, Mode] and "
    "Planner[Query]."
)

# The failure counters of the agent (spec §4.7) and the key its early-stop check reads per action.
COUNTERS = (
    "notebook", "flights", "attractions", "accommodations", "restaurants", "googleDistanceMatrix",
    "planner", "cities", "invalidAction",
)  # fmt: skip
EARLY_STOP_KEYS = {
    "FlightSearch": "flights",
    "AttractionSearch": "attractions",
    "GoogleDistanceMatrix": "googleDistanceMatrix",
    # official quirk, spec §4.7: singular key, not a counter, so AccommodationSearch failures never stop
    # the run and the check falls back to the invalidAction counter.
    "AccommodationSearch": "accommodation",
    "RestaurantSearch": "restaurants",
    "Planner": "planner",
    "NotebookWrite": "notebook",
    "CitySearch": "cities",
}

_ACTION = re.compile(r"^(\w+)\[(.+)\]$")  # spec §4.4
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # validate_date_format
_ARGUMENT_SEPARATOR = ", "  # spec §4.4: the exact two characters


@dataclass(frozen=True, slots=True)
class DistanceInfo:
    """`GoogleDistanceMatrix.run_for_evaluation` (spec §3.2): cost None means "not a valid leg"."""

    origin: str
    destination: str
    cost: int | None
    duration: str | None
    distance: str | None


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one action does in the official two-stage agent (spec §4.5).

    Attributes:
        observation: the text appended to the scratchpad and logged, already stripped as spec §4.6.
        state: the json_log state (`Successful`, `Illegal args. ...`, `invalidAction`).
        data: the tool's result: a Frame, a message string, or the city list of CitySearch; None on failure.
        counter: the failure counter to increment, or None on success (the agent then resets all counters).
        stores_data: the agent sets `current_data = data` (searches and GoogleDistanceMatrix, not CitySearch).
        masks: the agent masks the previous data in the scratchpad before appending the observation.
    """

    observation: str
    state: str
    data: Frame | str | list[str] | None
    counter: str | None
    stores_data: bool = False
    masks: bool = False


def _parsing() -> ModuleType:
    """The spec §2 string helpers (`evaluation/field_parsing.py`), imported on first use: the evaluation
    package imports this module (`distance_for_evaluation`), so a top-level import would be circular."""
    from benchmarks.travelplanner.evaluation import field_parsing

    return field_parsing


# --- The tools (tools/*/apis.py) ------------------------------------------------------------------


def flight_search(sandbox: Sandbox, origin: str, destination: str, date: str) -> Frame | str:
    """FlightSearch (spec §3.1): exact origin, destination and date; no parenthesis stripping."""
    found = sandbox.flights(origin, destination, date)
    return found if found else f"There is no flight from {origin} to {destination} on {date}."


def accommodation_search(sandbox: Sandbox, city: str) -> Frame | str:
    """AccommodationSearch (spec §3.3)."""
    found = sandbox.accommodations(city)
    # official quirk, spec §3.3: the empty result names attractions (copy-paste in the original).
    return found if found else "There is no attraction in this city."


def restaurant_search(sandbox: Sandbox, city: str) -> Frame | str:
    """RestaurantSearch (spec §3.4)."""
    found = sandbox.restaurants(city)
    return found if found else "There is no restaurant in this city."


def attraction_search(sandbox: Sandbox, city: str) -> Frame | str:
    """AttractionSearch (spec §3.5)."""
    found = sandbox.attractions(city)
    return found if found else "There is no attraction in this city."


def city_search(sandbox: Sandbox, state: str) -> list[str] | str:
    """CitySearch (spec §3.6): the state's cities in file order, or `Invalid State`."""
    cities = sandbox.state_cities().get(state)
    # official quirk, spec §3.6: an unknown state *returns* ValueError("Invalid State"), shown as its text.
    return list(cities) if cities is not None else "Invalid State"


def _km(distance: str) -> float:
    # The official code `eval`s the text without "km" and ","; every distance.csv value is a decimal number
    # ("1,144 km", "98.6 km"), for which float() gives the same value without evaluating model-reachable text.
    return float(distance.replace("km", "").replace(",", ""))


def _cost(km: float, mode: str) -> int | None:
    """Per-vehicle cost of a leg (spec §3.2 step 4): `driving` anywhere in the mode, or exactly `taxi`."""
    if "driving" in mode:
        return int(km * 0.05)
    if mode == "taxi":
        return int(km)
    return None


def _leg(sandbox: Sandbox, origin: str, destination: str) -> tuple[str, str, DistanceRow | None]:
    """Both cities without a `(State)` suffix, and their first distance.csv row."""
    parsing = _parsing()
    origin, destination = parsing.extract_before_parenthesis(origin), parsing.extract_before_parenthesis(destination)
    return origin, destination, sandbox.distance(origin, destination)


def distance_matrix(sandbox: Sandbox, origin: str, destination: str, mode: str = "driving") -> str:
    """GoogleDistanceMatrix.run (spec §3.2): the leg as text; mode is echoed verbatim.

    Raises:
        ValueError: the database's distance text is not a number (the official `eval` fails too).
    """
    origin, destination, row = _leg(sandbox, origin, destination)
    if row is None:
        return f"{mode}, from {origin} to {destination}, no valid information."
    # official quirk, spec §3.2: a missing row and a row without values give two different texts.
    if row.duration is None or row.distance is None:
        return "No valid information."
    cost = _cost(_km(row.distance), mode)
    if "day" in row.duration:
        return "No valid information."
    return f"{mode}, from {origin} to {destination}, duration: {row.duration}, distance: {row.distance}, cost: {cost}"


def distance_for_evaluation(sandbox: Sandbox, origin: str, destination: str, mode: str) -> DistanceInfo:
    """GoogleDistanceMatrix.run_for_evaluation (spec §3.2), used by CostEnquiry and the evaluator.

    Raises:
        TypeError: `origin` or `destination` is not a string (the official regex fails alike).
        ValueError: the database's distance text is not a number.
    """
    origin, destination, row = _leg(sandbox, origin, destination)
    if row is None or row.duration is None or row.distance is None:
        return DistanceInfo(origin, destination, None, None, None)
    # A duration of a day or more makes the leg invalid: cost stays None.
    cost = None if "day" in row.duration else _cost(_km(row.distance), mode)
    return DistanceInfo(origin, destination, cost, row.duration, row.distance)


# --- The notebook (tools/notebook/apis.py) --------------------------------------------------------


def data_text(data: Frame | str | list[str] | None) -> str:
    """The agent's `to_string(data)`: a Frame as `to_string(index=False)`, anything else `str()`, incl. None."""
    return to_string(data) if isinstance(data, Frame) else str(data)


class Notebook:
    """What NotebookWrite stores and the Planner reads (spec §3.7); one per query (`reset`)."""

    def __init__(self) -> None:
        self._entries: list[tuple[str, Frame | str | list[str] | None]] = []

    def write(self, data: Frame | str | list[str] | None, short_description: str) -> str:
        """Record `data` (the agent's current_data, possibly None); returns the official observation."""
        self._entries.append((short_description, data))
        return f"The information has been recorded in Notebook, and its index is {len(self._entries) - 1}."

    def list_all(self) -> list[dict[str, Any]]:
        """Every entry as `{index, Short Description, Content}`; a Frame's content is rendered as text."""
        return [
            {"index": i, "Short Description": description,
             "Content": to_string(data) if isinstance(data, Frame) else data}  # None and strings as they are
            for i, (description, data) in enumerate(self._entries)
        ]

    def reset(self) -> None:
        """Forget every entry (the agent does this at the start of each query)."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


# --- The agent's per-action handling (agents/tool_agents.py, spec §4.4-§4.6) ----------------------


def parse_action(action: str) -> tuple[str | None, str | None]:
    """`Type[argument]` -> (type, argument); (None, None) when the action does not have that shape."""
    match = _ACTION.match(action) if isinstance(action, str) else None
    return (match.group(1), match.group(2)) if match else (None, None)


def _failure(observation: str, state: str, counter: str, *, masks: bool = False) -> ToolOutcome:
    return ToolOutcome(observation, state, None, counter, masks=masks)


def _found(observation: str, data: Frame | str) -> ToolOutcome:
    return ToolOutcome(observation, SUCCESSFUL, data, None, stores_data=True, masks=True)


def _city_error(sandbox: Sandbox, city: str, counter: str) -> ToolOutcome | None:
    """validate_city_format: the whole argument must be a citySet.txt name."""
    # official quirk, spec §4.7: the agent's list has 311 cities, without the evaluator's `Jackson`.
    cities = sandbox.cities()
    if city in cities:
        return None
    return _failure(f"{city} is not valid city in {list(cities)!s}.", CITY_ERROR, counter)


def _flight(sandbox: Sandbox, argument: str) -> ToolOutcome:
    parts = argument.split(_ARGUMENT_SEPARATOR)
    if len(parts) < 3:  # IndexError in the original, before any validation
        return _failure("Illegal Flight Search. Please try again.", OTHER_ERROR, "flights")
    origin, destination, date = parts[:3]  # extra pieces are ignored
    if not _DATE.match(date):  # the date is checked first, then origin, then destination
        return _failure(f"'{date}' is not in the format YYYY-MM-DD", DATE_ERROR, "flights")
    error = _city_error(sandbox, origin, "flights") or _city_error(sandbox, destination, "flights")
    if error:
        return error
    result = flight_search(sandbox, origin, destination, date)
    return _found(data_text(result), result)  # spec §4.6: not stripped


def _city_table(sandbox: Sandbox, action_type: str, city: str) -> ToolOutcome:
    search, counter = _CITY_TABLES[action_type]
    error = _city_error(sandbox, city, counter)
    if error:
        return error
    result = search(sandbox, city)
    text = data_text(result)
    # spec §4.6: restaurants are `.strip()`ed, attractions and accommodations `.strip('\n').strip()`.
    return _found(text.strip() if action_type == "RestaurantSearch" else text.strip("\n").strip(), result)


_CITY_TABLES = {
    "AttractionSearch": (attraction_search, "attractions"),
    "AccommodationSearch": (accommodation_search, "accommodations"),
    "RestaurantSearch": (restaurant_search, "restaurants"),
}


def _distance(sandbox: Sandbox, argument: str) -> ToolOutcome:
    # official quirk, spec §4.5: the original masks before splitting its arguments, so a failing call masks too.
    failure = _failure("Illegal GoogleDistanceMatrix. Please try again.", OTHER_ERROR, "googleDistanceMatrix",
                       masks=True)
    parts = argument.split(_ARGUMENT_SEPARATOR)
    if len(parts) < 3:  # IndexError in the original
        return failure
    try:
        result = distance_matrix(sandbox, *parts[:3])
    except ValueError:  # an unreadable distance text in the database: the original's `eval` fails too
        return failure
    return _found(result, result)


def execute_action(sandbox: Sandbox, action_type: str | None, argument: str | None) -> ToolOutcome:
    """Run one parsed action as the official two-stage agent does (spec §4.5).

    Args:
        sandbox: the lookups.
        action_type: the parsed type (None for an unparsable action: Invalid Action).
        argument: the text between the brackets.

    Returns:
        The observation, state, data and counter of the step. Unknown types give the Invalid Action outcome.

    Raises:
        ValueError: `NotebookWrite` or `Planner`: they act on the agent's own state, not the sandbox.
    """
    if action_type in ("NotebookWrite", "Planner"):
        raise ValueError(f"{action_type} is handled by the agent, not by execute_action")
    if argument is None or action_type is None:
        return _failure(INVALID_ACTION, INVALID_ACTION_STATE, "invalidAction")
    if action_type == "FlightSearch":
        return _flight(sandbox, argument)
    if action_type in _CITY_TABLES:
        return _city_table(sandbox, action_type, argument)
    if action_type == "GoogleDistanceMatrix":
        return _distance(sandbox, argument)
    if action_type == "CitySearch":
        result = city_search(sandbox, argument)
        # Masks, but leaves current_data as it was: NotebookWrite after CitySearch stores the previous search.
        return ToolOutcome(str(result).strip(), SUCCESSFUL, result, None, stores_data=False, masks=True)
    return _failure(INVALID_ACTION, INVALID_ACTION_STATE, "invalidAction")


# --- CostEnquiry (tools/planner/env.py, spec §3.9) ------------------------------------------------

MAX_FIELD_CHARS = 2000
"""Longest sub-plan field CostEnquiry parses: the official regexes are quadratic on long text (a field of real
plans is well under 300 characters; the evaluator uses the same bound)."""
COST_UNAVAILABLE = "Sorry, the cost of your plan is not available because of the following reasons:"
_MEAL_REASONS = {
    # official quirk, spec §3.9: "breakfase" (sic).
    "breakfast": "The breakfase information is not valid, please check.",
    "lunch": "The lunch information is not valid, please check.",
    "dinner": "The dinner information is not valid, please check.",
}
# official quirk, spec §3.9: the misspellings "filght" and "transporation" are the original's.
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
    return float(value) if frame.dtypes[j] == "float" else value


def _leg_cost(sandbox: Sandbox, plan: Mapping[str, Any], people: Any, reflect: bool) -> tuple[float, str | None]:
    """Cost and error reason of the sub-plan's transportation (spec §3.9).

    `people` is whatever the model wrote, priced with Python's arithmetic as the official code prices it: where
    that code catches every exception (the flight branch; the ground branch of the non-reflect environment) a
    `people_number` that is no number gives the branch's "not valid" reason; elsewhere the exception propagates.
    """
    parsing = _parsing()
    value = plan["transportation"]
    origin, destination = parsing.extract_from_to(value)
    if origin is None or destination is None:
        origin, destination = parsing.extract_from_to(_text(plan, "current_city"))
    if reflect and (origin is None or destination is None):
        return 0, _LEG_REASON
    lowered = value.lower()
    if "flight number" in lowered:
        # official quirk, spec §3.9: only the number is looked up; the flight's route is not checked.
        number = parsing.flight_number(value)
        found = sandbox.flights_by_number(number) if number is not None else None
        if not found:
            return 0, _FLIGHT_REASON
        try:
            return 0 + _first(found, "Price") * people, None
        except Exception:  # official quirk, spec §3.9: the official `except:` turns any failure into this reason
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
    name, city = _parsing().get_valid_name_city(plan[key])
    if name == "-" or city == "-":  # official quirk, spec §3.9: skipped silently, no error
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
            The official planner aborts the run on all of these (spec §5), so the caller decides what that means.
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
