"""The sole-planning `reference_information` of a route, rebuilt from the sandbox (docs/fidelity/travelplanner.md §1.2,
§5).

The dataset gives every query the official tool outputs for its route: per city `Attractions in X`,
`Restaurants in X`, `Accommodations in X`; per leg `Flight from A to B on D`, `Self-driving from A to B`,
`Taxi from A to B` (cities first, then the legs, as in every train query). Two forms exist: the dataset's
list of `{'Description', 'Content'}` with rendered tables (its Python repr is the dataset string), and
`database/*_ref_info.jsonl`, a description -> rows (or message string) object. Restaurant tables keep the
CSV row labels in the rendered form: they were made by a release of `Restaurants.run` that returned
`results.to_string()` (seen in one stored revision of `tools/restaurants/apis.py`); the other tables are
`to_string(index=False)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.travelplanner.render import records, to_string
from benchmarks.travelplanner.tools import (
    accommodation_search,
    attraction_search,
    distance_matrix,
    flight_search,
    restaurant_search,
)
from sandbox_index import Frame, Sandbox

_CITY = re.compile(r"Attractions in (.+)")
_FLIGHT_DATE = re.compile(r"Flight from .+ to .+ on (\d{4}-\d{2}-\d{2})")

# The modes of a leg's two ground-transport entries, as passed to the distance tool.
GROUND_MODES = ("self-driving", "taxi")


@dataclass(frozen=True, slots=True)
class Entry:
    """One reference-information item: its description and the tool result behind it."""

    description: str
    data: Frame | str
    index: bool = False  # render the row labels (restaurant tables)

    @property
    def content(self) -> str:
        """The rendered `Content` of the dataset form."""
        return to_string(self.data, index=self.index) if isinstance(self.data, Frame) else self.data

    @property
    def rows(self) -> list[dict[str, Any]] | str:
        """The `*_ref_info.jsonl` value: row dicts, or the message string."""
        return records(self.data) if isinstance(self.data, Frame) else self.data


@dataclass(frozen=True, slots=True)
class Route:
    """A trip: origin, the visited cities in order, and the date of each leg (one more than cities)."""

    origin: str
    cities: tuple[str, ...]
    leg_dates: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.leg_dates) != len(self.cities) + 1:
            raise ValueError(f"a route through {len(self.cities)} cities has {len(self.cities) + 1} legs, "
                             f"got {len(self.leg_dates)} dates")

    @classmethod
    def every_other_day(cls, origin: str, cities: tuple[str, ...], dates: tuple[str, ...]) -> Route:
        """The usual schedule: a leg on day 1, 3, 5, ... and the way home on the last day.

        44 of the 45 train queries follow it; the other one moves on days 1, 2, 3 and 7, so use the real
        leg dates where they are known.
        """
        legs = tuple(dates[min(2 * i, len(dates) - 1)] for i in range(len(cities))) + (dates[-1],)
        return cls(origin, tuple(cities), legs)

    def legs(self) -> list[tuple[str, str, str]]:
        """(from, to, date) of every leg, the way home last."""
        stops = (self.origin, *self.cities, self.origin)
        return [(stops[i], stops[i + 1], date) for i, date in enumerate(self.leg_dates)]


# Per city, in the dataset's order: the tool action, the description's first word, the search, row labels shown.
_CITY_TABLES = {
    "AttractionSearch": ("Attractions", attraction_search, False),
    # official quirk, docs/fidelity/travelplanner.md §1.2: only the restaurant tables show the CSV row labels (see the
    # module docstring).
    "RestaurantSearch": ("Restaurants", restaurant_search, True),
    "AccommodationSearch": ("Accommodations", accommodation_search, False),
}


def city_entry(sandbox: Sandbox, action_type: str, city: str) -> Entry:
    """`Attractions in X` (AttractionSearch), `Restaurants in X` or `Accommodations in X`."""
    word, search, index = _CITY_TABLES[action_type]
    return Entry(f"{word} in {city}", search(sandbox, city), index=index)


def city_entries(sandbox: Sandbox, city: str) -> list[Entry]:
    """`Attractions in`, `Restaurants in`, `Accommodations in` the city."""
    return [city_entry(sandbox, action_type, city) for action_type in _CITY_TABLES]


def flight_entry(sandbox: Sandbox, origin: str, destination: str, date: str) -> Entry:
    """`Flight from A to B on D`: the FlightSearch result."""
    return Entry(f"Flight from {origin} to {destination} on {date}", flight_search(sandbox, origin, destination, date))


def ground_entry(sandbox: Sandbox, origin: str, destination: str, mode: str) -> Entry:
    """`Self-driving from A to B` / `Taxi from A to B`: the GoogleDistanceMatrix text for that mode.

    Args:
        mode: the mode as the agent writes it (`self-driving`, `taxi`); the description capitalizes it.
    """
    return Entry(f"{mode[:1].upper()}{mode[1:]} from {origin} to {destination}",
                 distance_matrix(sandbox, origin, destination, mode))


def leg_entries(sandbox: Sandbox, origin: str, destination: str, date: str) -> list[Entry]:
    """The flight, self-driving and taxi entries of one leg."""
    return [flight_entry(sandbox, origin, destination, date)] + [
        ground_entry(sandbox, origin, destination, mode) for mode in GROUND_MODES
    ]


def route_entries(sandbox: Sandbox, route: Route) -> list[Entry]:
    """Every entry of the route, in the dataset's order: all cities, then all legs."""
    entries = [entry for city in route.cities for entry in city_entries(sandbox, city)]
    for origin, destination, date in route.legs():
        entries += leg_entries(sandbox, origin, destination, date)
    return entries


def reference_information(sandbox: Sandbox, route: Route) -> list[dict[str, str]]:
    """The dataset form: `[{'Description': ..., 'Content': ...}]`; `repr()` of it is the dataset string."""
    return [{"Description": entry.description, "Content": entry.content} for entry in route_entries(sandbox, route)]


def route_of(origin: str, descriptions: Iterable[str]) -> Route:
    """The route behind a reference-information list: its cities and the dates of its flight entries."""
    cities, dates = [], []
    for description in descriptions:
        if city := _CITY.fullmatch(description):
            cities.append(city.group(1))
        elif date := _FLIGHT_DATE.fullmatch(description):
            dates.append(date.group(1))
    return Route(origin, tuple(cities), tuple(dates))


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One reference entry where the sandbox's rebuild differs from the given one."""

    description: str
    form: str  # "order" (descriptions), "content" (rendered text) or "rows" (ref_info.jsonl values)
    ours: Any
    given: Any


def compare_reference(
    sandbox: Sandbox,
    origin: str,
    given: Sequence[Mapping[str, str]],
    given_rows: Mapping[str, Any] | None = None,
) -> tuple[int, list[Mismatch]]:
    """Rebuild a query's reference information and compare it with the dataset's.

    Args:
        sandbox: the lookups to rebuild with.
        origin: the query's `org`.
        given: the dataset's list of `{'Description', 'Content'}` (text compared byte for byte).
        given_rows: the query's `*_ref_info.jsonl` object (values compared value for value, types included).

    Returns:
        The number of entries compared and the mismatches.
    """
    entries = route_entries(sandbox, route_of(origin, (item["Description"] for item in given)))
    descriptions = [entry.description for entry in entries]
    if descriptions != [item["Description"] for item in given]:
        return len(given), [Mismatch("(all)", "order", descriptions, [item["Description"] for item in given])]
    mismatches = []
    for entry, item in zip(entries, given, strict=True):
        if entry.content != item["Content"]:
            mismatches.append(Mismatch(entry.description, "content", entry.content, item["Content"]))
        if given_rows is not None and not _same_values(entry.rows, given_rows.get(entry.description)):
            mismatches.append(Mismatch(entry.description, "rows", entry.rows, given_rows.get(entry.description)))
    return len(entries), mismatches


def _same_values(ours: Any, given: Any) -> bool:
    """Equal, with the same types (so `1030.0` never passes for `1030`) and the same key order."""
    if isinstance(ours, dict) and isinstance(given, dict):
        return list(ours) == list(given) and all(_same_values(ours[k], given[k]) for k in ours)
    if isinstance(ours, list) and isinstance(given, list):
        return len(ours) == len(given) and all(map(_same_values, ours, given))
    return type(ours) is type(given) and ours == given


def entry_for_action(sandbox: Sandbox, action_type: str | None, argument: str | None) -> Entry:
    """The reference-information entry of the same lookup as an agent action (e.g. `RestaurantSearch[X]`).

    Raises:
        ValueError: the action has no reference form (CitySearch, the agent's own actions, unknown or
            unparsable actions) or too few `", "`-separated arguments.
    """
    if argument is not None and action_type in _CITY_TABLES:
        return city_entry(sandbox, action_type, argument)
    parts = (argument or "").split(", ")
    if action_type in ("FlightSearch", "GoogleDistanceMatrix") and len(parts) >= 3:
        builder = flight_entry if action_type == "FlightSearch" else ground_entry
        return builder(sandbox, *parts[:3])
    raise ValueError(f"no reference_information entry for {action_type}[{argument}]: expected "
                     "FlightSearch[From, To, YYYY-MM-DD], GoogleDistanceMatrix[From, To, Mode], "
                     "AttractionSearch[City], RestaurantSearch[City] or AccommodationSearch[City]")
