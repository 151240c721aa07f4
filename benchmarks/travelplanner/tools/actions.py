"""The two-stage agent's per-action handling (`agents/tool_agents.py`, docs/fidelity/travelplanner.md §4.4-§4.6):
parsing `Type[argument]`, argument splitting and validation, the observation text with its stripping
(docs/fidelity/travelplanner.md §4.6), the json_log state and the failure counter. What depends on the agent's memory
(masking the scratchpad, counters, `current_data`, the notebook, early stops) stays with the agent; a `ToolOutcome`
tells it what the official code would do with each of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchmarks.travelplanner.tools.searches import (
    accommodation_search,
    attraction_search,
    city_search,
    data_text,
    distance_matrix,
    flight_search,
    restaurant_search,
)
from sandbox_index import Frame, Sandbox

SUCCESSFUL = "Successful"
DATE_ERROR = "Illegal args. DateError"
CITY_ERROR = "Illegal args. City Error"
OTHER_ERROR = "Illegal args. Other Error"
INVALID_ACTION_STATE = "invalidAction"

# The observation of an unknown or unparsable action; the double spaces are the original's
# (docs/fidelity/travelplanner.md §4.5).
INVALID_ACTION = (
    "Invalid Action. Valid Actions are  FlightSearch[Departure City, Destination City, Date] / "
    "AccommodationSearch[City] /  RestaurantSearch[City] / NotebookWrite[Short Description] / "
    "AttractionSearch[City] / CitySearch[State] / GoogleDistanceMatrix[Origin, Destination, Mode] and "
    "Planner[Query]."
)

# The failure counters of the agent (docs/fidelity/travelplanner.md §4.7) and the key its early-stop check reads per
# action.
COUNTERS = (
    "notebook", "flights", "attractions", "accommodations", "restaurants", "googleDistanceMatrix",
    "planner", "cities", "invalidAction",
)  # fmt: skip
EARLY_STOP_KEYS = {
    "FlightSearch": "flights",
    "AttractionSearch": "attractions",
    "GoogleDistanceMatrix": "googleDistanceMatrix",
    # official quirk, docs/fidelity/travelplanner.md §4.7: singular key, not a counter, so AccommodationSearch failures
    # never stop the run and the check falls back to the invalidAction counter.
    "AccommodationSearch": "accommodation",
    "RestaurantSearch": "restaurants",
    "Planner": "planner",
    "NotebookWrite": "notebook",
    "CitySearch": "cities",
}

_ACTION = re.compile(r"^(\w+)\[(.+)\]$")  # docs/fidelity/travelplanner.md §4.4
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # validate_date_format
_ARGUMENT_SEPARATOR = ", "  # docs/fidelity/travelplanner.md §4.4: the exact two characters


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one action does in the official two-stage agent (docs/fidelity/travelplanner.md §4.5).

    Attributes:
        observation: the text appended to the scratchpad and logged, already stripped as docs/fidelity/travelplanner.md
        §4.6.
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
    # official quirk, docs/fidelity/travelplanner.md §4.7: the agent's list has 311 cities, without the evaluator's
    # `Jackson`.
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
    return _found(data_text(result), result)  # docs/fidelity/travelplanner.md §4.6: not stripped


def _city_table(sandbox: Sandbox, action_type: str, city: str) -> ToolOutcome:
    search, counter = _CITY_TABLES[action_type]
    error = _city_error(sandbox, city, counter)
    if error:
        return error
    result = search(sandbox, city)
    text = data_text(result)
    # docs/fidelity/travelplanner.md §4.6: restaurants are `.strip()`ed, attractions and accommodations
    # `.strip('\n').strip()`.
    return _found(text.strip() if action_type == "RestaurantSearch" else text.strip("\n").strip(), result)


_CITY_TABLES = {
    "AttractionSearch": (attraction_search, "attractions"),
    "AccommodationSearch": (accommodation_search, "accommodations"),
    "RestaurantSearch": (restaurant_search, "restaurants"),
}


def _distance(sandbox: Sandbox, argument: str) -> ToolOutcome:
    # official quirk, docs/fidelity/travelplanner.md §4.5: the original masks before splitting its arguments, so a
    # failing call masks too.
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
    """Run one parsed action as the official two-stage agent does (docs/fidelity/travelplanner.md §4.5).

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


# --- CostEnquiry (tools/planner/env.py, docs/fidelity/travelplanner.md §3.9)
# ------------------------------------------------
