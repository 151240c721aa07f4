"""Read tool outputs back from text: the tables and distance lines an agent saw, as the offline models need them.

Tables are pandas `to_string` renderings (docs/fidelity/travelplanner.md §3): every cell right-aligned under a
right-aligned header, so a column ends where its header name ends. The agent's observations strip the header line's
leading spaces (docs/fidelity/travelplanner.md §4.6); the header is re-aligned with the data lines, which all have the
table's full width. Restaurant tables in sole-planning reference information keep the row labels
(docs/fidelity/travelplanner.md §1.2); a leading label column is skipped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.travelplanner.evaluation.lookups import Accommodation
from benchmarks.travelplanner.offline.plan_search import CityOptions, Drive, Eatery, FlightOption

COLUMNS = {
    "flights": ("Flight Number", "Price", "DepTime", "ArrTime", "ActualElapsedTime", "FlightDate", "OriginCityName",
                "DestCityName", "Distance"),
    "accommodations": ("NAME", "price", "room type", "house_rules", "minimum nights", "maximum occupancy",
                       "review rate number", "city"),
    "restaurants": ("Name", "Average Cost", "Cuisines", "Aggregate Rating", "City"),
    "attractions": ("Name", "Latitude", "Longitude", "Address", "Phone", "Website", "City"),
}
"""The tools' column orders (docs/fidelity/travelplanner.md §1.1), identified by the first header that only that table
has."""
_MARKERS = {"flights": "Flight Number", "accommodations": "room type", "restaurants": "Cuisines",
            "attractions": "Latitude"}
_DRIVE = re.compile(r"^(?P<mode>self-driving|taxi|[\w-]+), from (?P<a>.+?) to (?P<b>.+?), duration: (?P<dur>.+?), "
                    r"distance: (?P<dist>.+?), cost: (?P<cost>\d+)$", re.I)


def _name(item: Accommodation | Eatery | str) -> str:
    return item if isinstance(item, str) else item.name


def table_kind(text: str) -> str | None:
    """Which tool's table `text` is, or None when it is not a table (a message such as `There is no ...`)."""
    header = text.lstrip("\n").split("\n", 1)[0]
    return next((kind for kind, marker in _MARKERS.items() if marker in header), None)


def read_table(text: str) -> list[dict[str, str]]:
    """The rows of a rendered table as {column: cell text}; [] when `text` is not one of the tool tables."""
    kind = table_kind(text)
    if kind is None:
        return []
    lines = [line for line in text.strip("\n").split("\n") if line.strip()]
    header, data = lines[0], lines[1:]
    if not data:
        return []
    width = max(len(line) for line in data)
    header = header.rjust(width)  # undo the observation strip (docs/fidelity/travelplanner.md §4.6)
    edges, start = [], 0
    for name in COLUMNS[kind]:
        at = header.find(name, start)
        if at < 0:
            return []
        start = at + len(name)
        edges.append(start)
    rows = []
    for line in data:
        line = line.ljust(width)
        cells, left = {}, 0
        for name, right in zip(COLUMNS[kind], edges):
            cells[name] = line[left:right].strip()
            left = right
        rows.append(cells)
    first = COLUMNS[kind][0]
    if all(re.match(r"^\d+\s+\S", r[first]) for r in rows):  # row labels of an indexed rendering
        for r in rows:
            r[first] = r[first].split(None, 1)[1]
    return rows


@dataclass(slots=True)
class Collected:
    """Everything found in a notebook or a reference-information text, by city and by leg."""

    flights: list[tuple[str, str, str, FlightOption]] = field(default_factory=list)
    """(origin, destination, date, flight)."""
    drives: dict[tuple[str, str, str], Drive] = field(default_factory=dict)
    """(origin, destination, mode) -> the distance-matrix answer."""
    parts: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    """City -> {"stays", "eateries", "attractions"}, cities in the order they first appear."""
    named: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    """(city, part) -> the names `parts` holds there."""

    def add(self, city: str, part: str, items: Iterable[Accommodation | Eatery | str]) -> None:
        """Adds a city's options, skipping the ones no plan can name as the evaluator reads them: a name shown with an
        escaped line break (the database's name holds a real one), and a name seen before in the city (the evaluator
        charges and checks the first row of a name: a cheaper namesake further down is not what it would count)."""
        listed = self.parts.setdefault(city, {"stays": [], "eateries": [], "attractions": []})[part]
        seen = self.named.setdefault((city, part), set())
        for item in items:
            if "\\n" not in (name := _name(item)) and name not in seen:
                seen.add(name)
                listed.append(item)

    def cities(self) -> dict[str, CityOptions]:
        return {city: CityOptions(city, tuple(p["stays"]), tuple(p["eateries"]), tuple(p["attractions"]))
                for city, p in self.parts.items()}

    def flights_for(self, origin: str, destination: str, date: str | None) -> tuple[FlightOption, ...]:
        return tuple(f for a, b, day, f in self.flights
                     if a == origin and b == destination and (date is None or day == date))


def collect(contents: Iterable[str]) -> Collected:
    """Sort tool outputs (table texts and distance lines) into flights, drives and per-city options."""
    found = Collected()
    for content in contents:
        drive = _DRIVE.match(content.strip())
        if drive:
            found.drives[(drive["a"], drive["b"], drive["mode"].lower())] = Drive(
                int(drive["cost"]), drive["dur"], drive["dist"])
            continue
        kind, rows = table_kind(content), read_table(content)
        if kind == "flights":
            found.flights += [(r["OriginCityName"], r["DestCityName"], r["FlightDate"],
                               FlightOption(r["Flight Number"], _int(r["Price"]), r["DepTime"], r["ArrTime"]))
                              for r in rows]
        for r in rows if kind == "accommodations" else ():
            found.add(r["city"], "stays", [Accommodation(r["NAME"], _float(r["price"]), r["room type"],
                                                         r["house_rules"], _float(r["minimum nights"]),
                                                         _int(r["maximum occupancy"]))])
        for r in rows if kind == "restaurants" else ():
            found.add(r["City"], "eateries", [Eatery(r["Name"], _int(r["Average Cost"]), r["Cuisines"])])
        for r in rows if kind == "attractions" else ():
            found.add(r["City"], "attractions", [r["Name"]])
    return found


def notebook_contents(text: str) -> list[str]:
    """The `Content` strings of a notebook (`str(notebook.list_all())`, docs/fidelity/travelplanner.md §3.7) or of
    reference information
    (`[{'Description': ..., 'Content': ...}]`, docs/fidelity/travelplanner.md §1.2); [] when `text` is neither."""
    try:
        entries = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return []
    if not isinstance(entries, list):
        return []
    return [e["Content"] for e in entries if isinstance(e, dict) and isinstance(e.get("Content"), str)]


def _int(cell: str) -> int:
    try:
        return int(float(cell))
    except ValueError:
        return 0


def _float(cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        return 0.0
