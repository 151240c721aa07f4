"""The tables of the demo world: cities in states, distances, flights, restaurants, accommodations, attractions.

Rows are kept in the official column order and serialised with the official headers (docs/fidelity/travelplanner.md
§1.1); see `world.py` for what the construction reproduces from the paper.
"""

from __future__ import annotations

import csv
import io
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CUISINES = ("Tea", "BBQ", "Seafood", "Cafe", "Desserts", "Pizza", "Fast Food", "Bakery", "Mediterranean", "French",
            "Mexican", "Chinese", "Indian", "Italian", "American")
"""The 15 restaurant cuisine labels of the official table (docs/fidelity/travelplanner.md §1.1)."""
QUERY_CUISINES = ("Chinese", "American", "Italian", "Mexican", "Indian", "Mediterranean", "French")
STATES: dict[str, tuple[tuple[float, float], tuple[str, ...]]] = {
    # state -> (centre in km on a flat map, cities in file order)
    "Marlow": ((0.0, 0.0), ("Ashford Bay", "Brennick", "Coldwater Springs", "Dunmore", "Elmsgate")),
    "New Tessin": ((950.0, 120.0), ("Fairhaven", "Glenrock", "Harlow City", "Ironvale", "St. Jorund")),
    "Carrow": ((300.0, 1000.0), ("Kestrel Falls", "Lanmouth", "Millbrook", "Northwick", "Oakridge")),
    "East Vantor": ((2500.0, 700.0), ("Port Alder", "Quarry Hill", "Redmont", "Silverlake", "Tamsworth")),
}
DAYS_CELLS = (3, 5, 7)
LEVELS = ("easy", "medium", "hard")

_ADJ = ("Golden", "Silver", "Rustic", "Little", "Blue", "Old", "Royal", "Green", "Sunny", "Copper", "Velvet", "Wild")
_NOUN = ("Lantern", "Spoon", "Harbor", "Oak", "Fig", "Kettle", "Anchor", "Orchard", "Ember", "Sparrow", "Basil", "Mill")
_PLACE = ("Kitchen", "Bistro", "Grill", "Diner", "House", "Table", "Cantina", "Brasserie")
_STAY = ("Cozy loft", "Sunny studio", "Quiet room", "Spacious home", "Charming flat", "Bright suite", "Garden cottage",
         "Modern apartment", "Shared bunk", "Historic townhouse")
_NEAR = ("near the river", "by the park", "off Main Street", "with a view", "close to downtown", "by the old mill")
_SIGHT = ("Museum of {}", "{} Botanical Garden", "{} Heritage Park", "Old {} Lighthouse", "{} Art Gallery",
          "{} Science Center", "{} Zoo", "{} Memorial Bridge")


Row = list[Any]
"""One table row in the official column order: each cell the type of its column (the headers name them)."""


@dataclass(slots=True)
class Tables:
    """The world's rows, in the official column order (before CSV serialisation)."""

    positions: dict[str, tuple[float, float]]
    flights: list[Row] = field(default_factory=list)
    accommodations: list[Row] = field(default_factory=list)
    restaurants: list[Row] = field(default_factory=list)
    attractions: list[Row] = field(default_factory=list)
    distances: list[Row] = field(default_factory=list)

    def state_cities(self) -> dict[str, tuple[str, ...]]:
        return {state: cities for state, (_, cities) in STATES.items()}

    def row_counts(self) -> dict[str, int]:
        return {"flights": len(self.flights), "accommodations": len(self.accommodations),
                "restaurants": len(self.restaurants), "attractions": len(self.attractions),
                "distance": len(self.distances)}

    def files(self) -> dict[str, str]:
        """Relative path -> file text, in the official layout and headers (docs/fidelity/travelplanner.md §1.1)."""
        cities = [c for _, names in STATES.values() for c in names]
        return {
            "flights/clean_Flights_2022.csv": _csv(["Flight Number", "Price", "DepTime", "ArrTime",
                                                    "ActualElapsedTime", "FlightDate", "OriginCityName",
                                                    "DestCityName", "Distance"], self.flights),
            "accommodations/clean_accommodations_2022.csv": _csv(
                ["", "NAME", "room type", "price", "minimum nights", "review rate number", "house_rules",
                 "maximum occupancy", "city"], [[i, *row] for i, row in enumerate(self.accommodations)]),
            "restaurants/clean_restaurant_2022.csv": _csv(
                ["", "Name", "City", "Cuisines", "Average Cost", "Aggregate Rating"],
                [[i, *row] for i, row in enumerate(self.restaurants)]),
            "attractions/attractions.csv": _csv(["Name", "Latitude", "Longitude", "Address", "Phone", "Website",
                                                 "City"], self.attractions),
            "googleDistanceMatrix/distance.csv": _csv(["origin", "destination", "cost", "duration", "distance"],
                                                      self.distances),
            "background/citySet.txt": "\n".join(cities) + "\n",
            # no trailing newline: the official file has none and the evaluator would crash on one
            # (docs/fidelity/travelplanner.md §1.1)
            "background/citySet_with_states.txt": "\n".join(
                f"{c}\t{state}" for state, (_, names) in STATES.items() for c in names),
            "background/stateSet.txt": "\n".join(STATES) + "\n",
        }


def _csv(header: list[str], rows: list[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def build_tables(rng: random.Random) -> Tables:
    positions = {}
    for (cx, cy), cities in STATES.values():
        for city in cities:
            positions[city] = (cx + rng.uniform(-220, 220), cy + rng.uniform(-220, 220))
    tables = Tables(positions)
    _add_distances(tables, rng)
    _add_flights(tables, rng)
    for city in positions:
        _add_city_places(tables, city, rng)
    return tables


def km_between(tables: Tables, a: str, b: str) -> float:
    (ax, ay), (bx, by) = tables.positions[a], tables.positions[b]
    return math.hypot(ax - bx, ay - by)


def _add_distances(tables: Tables, rng: random.Random) -> None:
    for a in tables.positions:
        for b in tables.positions:
            if a == b:
                continue
            roll = rng.random()
            if roll < 0.02:
                # pair absent: "{mode}, from A to B, no valid information." (docs/fidelity/travelplanner.md §3.2 step 2)
                continue
            km = km_between(tables, a, b) * 1.25
            if roll < 0.05:
                tables.distances.append([a, b, "", "", ""])  # empty row: "No valid information."
                continue
            minutes = int(km / 80 * 60)
            hours, mins = divmod(minutes, 60)
            duration = f"{hours // 24} day {hours % 24} hours" if hours >= 24 else f"{hours} hours {mins} mins"
            distance = f"{km:,.0f} km" if km >= 100 else f"{km:.1f} km"
            tables.distances.append([a, b, "", duration, distance])


def _add_flights(tables: Tables, rng: random.Random) -> None:
    number = 7_100_000 + rng.randrange(100_000)
    same_state = {c: s for s, (_, cities) in STATES.items() for c in cities}
    for day in range(1, 32):
        date = f"2022-03-{day:02d}"
        for a in tables.positions:
            for b in tables.positions:
                if a == b or rng.random() > (0.25 if same_state[a] == same_state[b] else 0.75):
                    continue
                miles = round(km_between(tables, a, b) / 1.609)
                for _ in range(rng.choice((1, 2, 2, 3))):
                    number += 1 + rng.randrange(40)
                    minutes = int(miles / 500 * 60) + 40
                    dep = rng.randrange(5 * 60, 22 * 60)
                    arr = (dep + minutes) % (24 * 60)
                    tables.flights.append([
                        f"F{number:07d}", int(miles * rng.uniform(0.2, 0.5)), _clock(dep), _clock(arr),
                        f"{minutes // 60} hours {minutes % 60} minutes", date, a, b, float(miles)])


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _unique_names(make: Callable[[random.Random], str], count: int, rng: random.Random) -> list[str]:
    """`count` names, none a substring of another (the evaluator matches names by substring,
    docs/fidelity/travelplanner.md §2)."""
    names: list[str] = []
    while len(names) < count:
        name = make(rng)
        if all(name not in other and other not in name for other in names):
            names.append(name)
    return names


def _add_city_places(tables: Tables, city: str, rng: random.Random) -> None:
    x, y = tables.positions[city]
    for name in _unique_names(lambda r: f"{r.choice(_ADJ)} {r.choice(_NOUN)} {r.choice(_PLACE)}", 12, rng):
        cuisines = ", ".join(rng.sample(CUISINES, rng.randint(1, 4)))
        tables.restaurants.append([name, city, cuisines, rng.randint(10, 100), round(rng.uniform(0, 5), 1)])
    for name in _unique_names(lambda r: f"{r.choice(_STAY)} {r.choice(_NEAR)}", 16, rng):
        room = rng.choice(("Entire home/apt", "Entire home/apt", "Private room", "Private room", "Shared room"))
        low, high, occupancy = {"Entire home/apt": (150, 900, (2, 8)), "Private room": (50, 400, (1, 3)),
                                "Shared room": (20, 150, (1, 2))}[room]
        rules = "" if rng.random() < 0.1 else " & ".join(
            sorted(rng.sample(["No parties", "No smoking", "No children under 10", "No visitors", "No pets"],
                              rng.randint(1, 2))))
        tables.accommodations.append([
            name, room, float(rng.randint(low, high)), float(rng.choice((1, 1, 1, 2, 2, 3, 5, 10))),
            float(rng.randint(1, 5)), rules, rng.randint(*occupancy), city])
    for i, name in enumerate(_unique_names(lambda r: r.choice(_SIGHT).format(r.choice(_NOUN)), 6, rng)):
        phone = "Unknown" if rng.random() < 0.2 else f"(555) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}"
        site = "Unknown" if rng.random() < 0.3 else f"https://example.org/{city.lower().replace(' ', '-')}/{i}"
        tables.attractions.append([
            name, round(35 + (y + i) / 111, 7),
            round(-95 + (x + i) / 90, 7), f"{rng.randint(1, 999)} Main St, {city}, USA", phone, site, city])
