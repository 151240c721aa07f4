"""The evaluator's database lookups (spec §2, §7), cached for the duration of one plan.

A plan names the same restaurant, hotel or leg several times (sandbox check, cost, cuisine, room rules), so
each distinct lookup reaches the sandbox once per plan. Rows come back in file order; "first row wins"
(spec §12.1) is `[0]` of the tuples below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from benchmarks.travelplanner.tools import distance_for_evaluation

if TYPE_CHECKING:
    from sandbox_index import Frame


class EvaluationSandbox(Protocol):
    """What the evaluator needs from `sandbox_index.Sandbox` (a subset of its public methods)."""

    def match_restaurants(self, name: str, city: str, *, exact: bool = False) -> Frame: ...
    def match_attractions(self, name: str, city: str, *, exact: bool = False) -> Frame: ...
    def match_accommodations(self, name: str, city: str, *, exact: bool = False) -> Frame: ...
    def flights_by_number(self, number: str) -> Frame: ...
    def city_states(self) -> dict[str, str]: ...


@dataclass(frozen=True, slots=True)
class Restaurant:
    average_cost: float
    cuisines: str


@dataclass(frozen=True, slots=True)
class Accommodation:
    price: float
    room_type: str
    house_rules: str
    minimum_nights: float
    maximum_occupancy: int


@dataclass(frozen=True, slots=True)
class Flight:
    price: float
    origin: str
    destination: str


def _records(frame: Frame, wanted: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """The `wanted` columns of every row, by official column name."""
    positions = [frame.columns.index(column) for column in wanted]
    return [tuple(row[p] for p in positions) for row in frame.rows]


class PlanLookups:
    """Memoised lookups for one plan.

    Args:
        sandbox: an open TravelPlanner sandbox.
        exact_names: False for the official substring name match (spec §2), True for strict mode's whole name.
    """

    def __init__(self, sandbox: EvaluationSandbox, *, exact_names: bool) -> None:
        self._sandbox = sandbox
        self._exact = exact_names
        self._restaurants: dict[tuple[str, str], tuple[Restaurant, ...]] = {}
        self._attractions: dict[tuple[str, str], bool] = {}
        self._accommodations: dict[tuple[str, str], tuple[Accommodation, ...]] = {}
        self._flights: dict[str, tuple[Flight, ...]] = {}
        self._distances: dict[tuple[str, str, str], int | float | None] = {}

    def _matches(self, method: Callable[..., Frame], name_column: str, name: str, city: str,
                 wanted: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """The `wanted` columns of the rows matching (name, city), file order.

        Strict mode wants the whole name, ignoring surrounding spaces: the database has names such as
        `"Peaceful, beautiful home away "`, which no plan line can reproduce after the official parsing.
        """
        rows = _records(method(name, city, exact=False), (name_column, *wanted))
        if self._exact:
            rows = [row for row in rows if str(row[0]).strip() == name.strip()]
        return [row[1:] for row in rows]

    def restaurants(self, name: str, city: str) -> tuple[Restaurant, ...]:
        """Restaurants whose Name matches `name` in `city`, file order."""
        key = (name, city)
        if key not in self._restaurants:
            rows = self._matches(self._sandbox.match_restaurants, "Name", name, city, ("Average Cost", "Cuisines"))
            self._restaurants[key] = tuple(Restaurant(*values) for values in rows)
        return self._restaurants[key]

    def attraction_exists(self, name: str, city: str) -> bool:
        """Whether some attraction's Name matches `name` in `city`."""
        key = (name, city)
        if key not in self._attractions:
            self._attractions[key] = bool(self._matches(self._sandbox.match_attractions, "Name", name, city, ()))
        return self._attractions[key]

    def accommodations(self, name: str, city: str) -> tuple[Accommodation, ...]:
        """Accommodations whose NAME matches `name` in `city`, file order."""
        key = (name, city)
        if key not in self._accommodations:
            columns = ("price", "room type", "house_rules", "minimum nights", "maximum occupancy")
            rows = self._matches(self._sandbox.match_accommodations, "NAME", name, city, columns)
            self._accommodations[key] = tuple(Accommodation(*values) for values in rows)
        return self._accommodations[key]

    def flights(self, number: str) -> tuple[Flight, ...]:
        """Every row with this Flight Number, file order (origin, destination and date not filtered)."""
        if number not in self._flights:
            frame = self._sandbox.flights_by_number(number)
            columns = ("Price", "OriginCityName", "DestCityName")
            self._flights[number] = tuple(Flight(*values) for values in _records(frame, columns))
        return self._flights[number]

    def leg_cost(self, origin: str, destination: str, mode: str) -> int | float | None:
        """Per-vehicle cost of a road leg (`run_for_evaluation`, spec §3.2); None means "not valid"."""
        key = (origin, destination, mode)
        if key not in self._distances:
            self._distances[key] = distance_for_evaluation(self._sandbox, origin, destination, mode).cost
        return self._distances[key]

    def city_states(self) -> dict[str, str]:
        """city -> state, from `citySet_with_states.txt`."""
        return self._sandbox.city_states()
