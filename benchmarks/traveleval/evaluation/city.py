"""What the evaluator needs of one city of the sandbox, read once per (sandbox, city) and kept by the sandbox
(`Sandbox.derived`: closed with it, never by the process).

The official evaluator reads the city's CSV files with pandas and builds its lookups row by row: the attraction
lookups (`attractions`) keep the LAST row of a name (dict assignment), the hotel and restaurant lookups the FIRST
(`break` on the first match). An unknown city (no folder of that name) has empty lookups, which the metrics treat
as the official code treats an empty DataFrame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.traveleval.evaluation.accuracy import Option
from benchmarks.traveleval.evaluation.distance import LatLon
from benchmarks.traveleval.sandbox.cities import CITY_DIRS
from benchmarks.traveleval.sandbox.sandbox import Attraction, Sandbox


@dataclass(frozen=True)
class CityFacts:
    sandbox: Sandbox
    folder: str
    attractions: Mapping[str, Attraction]
    hotel_features: Mapping[str, str]
    cuisines: Mapping[str, str]
    poi_rank: Mapping[str, int]
    """poi.json name -> position in the file (first occurrence)."""

    @property
    def opening_hours(self) -> dict[str, tuple[str, str]]:
        return {name: (row.opentime, row.endtime) for name, row in self.attractions.items()}

    def locate(self, names: Sequence[Any]) -> dict[str, LatLon]:
        """(lat, lon) of the names poi.json holds, in poi.json order (the order the official lookup returns)."""
        found = sorted({name for name in names if isinstance(name, str) and name in self.poi_rank},
                       key=self.poi_rank.__getitem__)
        places: dict[str, LatLon] = {}
        for name in found:
            position = self.sandbox.poi_position(self.folder, name)
            if position is not None:
                places[name] = position
        return places


def city_facts(sandbox: Sandbox, city: str) -> CityFacts:
    """The lookups of `city` (Chinese or pinyin name, mapped as the official loader maps it)."""
    return sandbox.derived(("city facts", city), lambda: _city_facts(sandbox, city))


def _city_facts(sandbox: Sandbox, city: str) -> CityFacts:
    folder = sandbox.city_dir(city)
    hotels: dict[str, str] = {}
    for hotel in sandbox.hotels(folder):
        hotels.setdefault(hotel.name, hotel.featurehoteltype)
    cuisines: dict[str, str] = {}
    for restaurant in sandbox.restaurants(folder):
        cuisines.setdefault(restaurant.name, restaurant.cuisine)
    rank: dict[str, int] = {}
    for index, name in enumerate(sandbox.poi_names(folder)):
        rank.setdefault(name, index)
    return CityFacts(sandbox, folder, {row.name: row for row in sandbox.attractions(folder)}, hotels, cuisines, rank)


Options = tuple[tuple[Option, ...], tuple[Option, ...]]


def intercity_options(sandbox: Sandbox, departure: Any, destination: Any) -> Options:
    """(trains, flights) between two places, both directions, in the official loader's order: the trains of
    from_<departure>_to_<destination>.json then of the way back (only two of the ten cities' Chinese names name
    such files), and every flight of airplane.jsonl, in file order, whose airports start with the two texts either
    way: any text, so an empty departure takes every flight to or from the destination's airports."""
    return sandbox.derived(("intercity options", departure, destination),
                           lambda: _intercity_options(sandbox, departure, destination))


def _intercity_options(sandbox: Sandbox, departure: Any, destination: Any) -> Options:
    trains = () if departure == destination or departure not in CITY_DIRS or destination not in CITY_DIRS else tuple(
        Option(train.to_station, train.train_type, train.begin_time, train.end_time, train.duration)
        for train in sandbox.trains(departure, destination, both_ways=True))
    if not isinstance(departure, str) or not isinstance(destination, str):
        return trains, ()  # the official str.startswith fails on the first line: no flight
    return trains, tuple(Option(flight.to_airport, None, flight.begin_time, flight.end_time, flight.duration)
                         for flight in sandbox.all_flights()
                         if flight.from_airport.startswith(departure) and flight.to_airport.startswith(destination)
                         or flight.to_airport.startswith(departure) and flight.from_airport.startswith(destination))
