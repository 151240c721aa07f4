"""The evaluator's database lookups (docs/fidelity/travelplanner.md §2, §7), cached for the duration of one plan.

The official evaluator finds a restaurant, attraction or hotel by a case-sensitive substring of its name
(`Name.str.contains(re.escape(name))`) plus the exact city, and takes the first row in file order. A plan
names a handful of places in two or three cities, several times over (sandbox check, cost, cuisine, room
rules), so a city's table is read from the sandbox once and names are matched here in Python (`name in
row_name` is the same test as the escaped regex). Rows keep file order: "first row wins" is `[0]`.

City tables of the database's known cities are shared by all plans of one evaluator (`CityTables`): they
are read-only data, at most 3 x 312 small tables. Everything derived from plan text (matches, flights,
legs, tables of unknown cities) lives only as long as the plan's `PlanLookups`.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from benchmarks.travelplanner.plan_fields import get_valid_name_city
from benchmarks.travelplanner.tools import distance_for_evaluation

if TYPE_CHECKING:
    from sandbox_index import DistanceRow, Frame


class EvaluationSandbox(Protocol):
    """What the evaluator needs from `sandbox_index.Sandbox` (a subset of its public methods)."""

    def restaurants(self, city: str) -> Frame: ...
    def attractions(self, city: str) -> Frame: ...
    def accommodations(self, city: str) -> Frame: ...
    def flights_by_number(self, number: str) -> Frame: ...
    def distance(self, origin: str, destination: str) -> DistanceRow | None: ...
    def city_states(self) -> dict[str, str]: ...


@dataclass(frozen=True, slots=True)
class Restaurant:
    average_cost: float
    cuisines: str


@dataclass(frozen=True, slots=True)
class Accommodation:
    """One accommodation row (`ACCOMMODATION_COLUMNS`): what the evaluation checks and the offline planner picks."""

    name: str
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


CityTables = dict[tuple[str, str], list[tuple[Any, ...]]]
"""(table, city) -> the name and wanted columns of every row of that city, file order."""

RESTAURANT_COLUMNS = ("Name", "Average Cost", "Cuisines")
ACCOMMODATION_COLUMNS = ("NAME", "price", "room type", "house_rules", "minimum nights", "maximum occupancy")


class PlanLookups:
    """Memoised lookups for one plan.

    Args:
        sandbox: an open TravelPlanner sandbox.
        city_tables: the evaluator's cache of known cities' tables (filled here).
        known_cities: the cities whose tables may go into `city_tables`.
        exact_names: False for the official substring name match (docs/fidelity/travelplanner.md §2); True for strict
            mode's whole name, ignoring surrounding spaces (the database has names such as `"Peaceful, beautiful home
            away "`, which no plan line can reproduce once the official parser has stripped it).
    """

    def __init__(self, sandbox: EvaluationSandbox, city_tables: CityTables, known_cities: Container[str], *,
                 exact_names: bool) -> None:
        self._sandbox = sandbox
        self._exact = exact_names
        self._shared, self._known = city_tables, known_cities
        self._tables: CityTables = {}
        self._found: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {}
        self._names: dict[str, tuple[str, str]] = {}
        self._flights: dict[str, tuple[Flight, ...]] = {}
        self._distances: dict[tuple[str, str, str], int | float | None] = {}

    def name_city(self, text: str) -> tuple[str, str]:
        """`get_valid_name_city(text)`, memoised: a plan parses each place text in several checks."""
        if text not in self._names:
            self._names[text] = get_valid_name_city(text)
        return self._names[text]

    def _matches(self, table: str, name: str, city: str) -> list[tuple[Any, ...]]:
        """Rows of `table` in `city` whose name matches `name` (name first, then the wanted columns)."""
        found = self._found.get((table, name, city))
        if found is not None:
            return found
        rows = self._shared.get((table, city))
        if rows is None:
            rows = self._tables.get((table, city))
        if rows is None:
            fetch: Callable[[str], Frame] = getattr(self._sandbox, table)
            columns = {"restaurants": RESTAURANT_COLUMNS, "attractions": ("Name",),
                       "accommodations": ACCOMMODATION_COLUMNS}[table]
            rows = _records(fetch(city), columns)
            (self._shared if city in self._known else self._tables)[table, city] = rows
        if self._exact:
            wanted = name.strip()
            found = [row for row in rows if str(row[0]).strip() == wanted]
        else:
            found = [row for row in rows if name in str(row[0])]
        self._found[table, name, city] = found
        return found

    def restaurants(self, place: str) -> list[Restaurant]:
        """Restaurants matching a `"Name, City"` text, file order."""
        return [Restaurant(*row[1:]) for row in self._matches("restaurants", *self.name_city(place))]

    def attraction_exists(self, place: str) -> bool:
        """Whether some attraction matches a `"Name, City"` text."""
        return bool(self._matches("attractions", *self.name_city(place)))

    def accommodations(self, place: str) -> list[Accommodation]:
        """Accommodations matching a `"Name, City"` text, file order."""
        return [Accommodation(*row) for row in self._matches("accommodations", *self.name_city(place))]

    def flights(self, number: str) -> tuple[Flight, ...]:
        """Every row with this Flight Number, file order (origin, destination and date not filtered)."""
        if number not in self._flights:
            frame = self._sandbox.flights_by_number(number)
            columns = ("Price", "OriginCityName", "DestCityName")
            self._flights[number] = tuple(Flight(*values) for values in _records(frame, columns))
        return self._flights[number]

    def leg_cost(self, origin: str, destination: str, mode: str) -> int | float | None:
        """Per-vehicle cost of a road leg (`run_for_evaluation`, docs/fidelity/travelplanner.md §3.2); None means "not
        valid"."""
        key = (origin, destination, mode)
        if key not in self._distances:
            leg = distance_for_evaluation(self._sandbox, origin, destination, mode)  # type: ignore[arg-type]
            self._distances[key] = leg.cost
        return self._distances[key]
