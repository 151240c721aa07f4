"""The search tools with the official observation texts (docs/fidelity/travelplanner.md §3): what `tools/*/apis.py`
`run` returns, a `Frame` (the DataFrame) or a message string, for a `Sandbox`.

Arguments are untrusted model text: they reach the sandbox only as bound SQL parameters, and every odd input ends
in the official not-found or error observation, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.travelplanner import plan_fields
from benchmarks.travelplanner.render import table_text
from sandbox_index import DistanceRow, Frame, Sandbox


@dataclass(frozen=True, slots=True)
class DistanceInfo:
    """`GoogleDistanceMatrix.run_for_evaluation` (docs/fidelity/travelplanner.md §3.2): cost None means "not a valid
    leg"."""

    origin: str
    destination: str
    cost: int | None
    duration: str | None
    distance: str | None


def flight_search(sandbox: Sandbox, origin: str, destination: str, date: str) -> Frame | str:
    """FlightSearch (docs/fidelity/travelplanner.md §3.1): exact origin, destination and date; no parenthesis
    stripping."""
    found = sandbox.flights(origin, destination, date)
    return found if found else f"There is no flight from {origin} to {destination} on {date}."


def accommodation_search(sandbox: Sandbox, city: str) -> Frame | str:
    """AccommodationSearch (docs/fidelity/travelplanner.md §3.3)."""
    found = sandbox.accommodations(city)
    # official quirk, docs/fidelity/travelplanner.md §3.3: the empty result names attractions (copy-paste in the
    # original).
    return found if found else "There is no attraction in this city."


def restaurant_search(sandbox: Sandbox, city: str) -> Frame | str:
    """RestaurantSearch (docs/fidelity/travelplanner.md §3.4)."""
    found = sandbox.restaurants(city)
    return found if found else "There is no restaurant in this city."


def attraction_search(sandbox: Sandbox, city: str) -> Frame | str:
    """AttractionSearch (docs/fidelity/travelplanner.md §3.5)."""
    found = sandbox.attractions(city)
    return found if found else "There is no attraction in this city."


def city_search(sandbox: Sandbox, state: str) -> list[str] | str:
    """CitySearch (docs/fidelity/travelplanner.md §3.6): the state's cities in file order, or `Invalid State`."""
    cities = sandbox.state_cities().get(state)
    # official quirk, docs/fidelity/travelplanner.md §3.6: an unknown state *returns* ValueError("Invalid State"), shown
    # as its text.
    return list(cities) if cities is not None else "Invalid State"


def _km(distance: str) -> float:
    # The official code `eval`s the text without "km" and ","; every distance.csv value is a decimal number
    # ("1,144 km", "98.6 km"), for which float() gives the same value without evaluating model-reachable text.
    return float(distance.replace("km", "").replace(",", ""))


def _cost(km: float, mode: str) -> int | None:
    """Per-vehicle cost of a leg (docs/fidelity/travelplanner.md §3.2 step 4): `driving` anywhere in the mode, or
    exactly `taxi`."""
    if "driving" in mode:
        return int(km * 0.05)
    if mode == "taxi":
        return int(km)
    return None


def _leg(sandbox: Sandbox, origin: str, destination: str) -> tuple[str, str, DistanceRow | None]:
    """Both cities without a `(State)` suffix, and their first distance.csv row."""
    origin = plan_fields.extract_before_parenthesis(origin)
    destination = plan_fields.extract_before_parenthesis(destination)
    return origin, destination, sandbox.distance(origin, destination)


def distance_matrix(sandbox: Sandbox, origin: str, destination: str, mode: str = "driving") -> str:
    """GoogleDistanceMatrix.run (docs/fidelity/travelplanner.md §3.2): the leg as text; mode is echoed verbatim.

    Raises:
        ValueError: the database's distance text is not a number (the official `eval` fails too).
    """
    origin, destination, row = _leg(sandbox, origin, destination)
    if row is None:
        return f"{mode}, from {origin} to {destination}, no valid information."
    # official quirk, docs/fidelity/travelplanner.md §3.2: a missing row and a row without values give two different
    # texts.
    if row.duration is None or row.distance is None:
        return "No valid information."
    cost = _cost(_km(row.distance), mode)
    if "day" in row.duration:
        return "No valid information."
    return f"{mode}, from {origin} to {destination}, duration: {row.duration}, distance: {row.distance}, cost: {cost}"


def distance_for_evaluation(sandbox: Sandbox, origin: str, destination: str, mode: str) -> DistanceInfo:
    """GoogleDistanceMatrix.run_for_evaluation (docs/fidelity/travelplanner.md §3.2), used by CostEnquiry and the
    evaluator.

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
    return table_text(data) if isinstance(data, Frame) else str(data)
