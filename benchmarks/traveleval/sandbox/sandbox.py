"""The read-only TravelEval sandbox: typed rows over a built index (`build.py`), safe from several threads.

Values are what the official loader reads (pandas `read_csv` for the CSV files, `json.load` for the rest), with
one difference of representation: a missing number, which pandas reads as NaN, is None here. In the staged data
that is `star` of three attractions (chengdu 天然图画, chongqing 芙蓉江, guangzhou 空中缆车); every other field of
every row is present. Rows come in file order; where a name occurs twice in a city (hotels, e.g. 96 in shenzhen)
the single-row lookups return the first, as `df[df.name == name].iloc[0]` does.

Every `city` argument takes the Chinese name or the pinyin folder name (`city_dir`). Arguments are untrusted
model text: they are bound, never formatted into SQL, and one that cannot be bound (not a str, a lone surrogate)
finds nothing.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from benchmarks.traveleval.sandbox import cities
from benchmarks.traveleval.sandbox.build import SCHEMA_VERSION
from errors import DataError, MissingInput
from sandbox_index.atomic import stored_version
from sandbox_index.connections import IndexReader, bindable

ROOM_TYPES: Mapping[str, str] = {"单人房": "single_room", "大床房": "king_room", "双人房": "double_bed",
                                 "家庭房": "family_room"}
"""A plan's room type (the schema's enum) -> the accommodations.csv column prefix of its price and stock."""
ROOM_CAPACITY: Mapping[str, int] = {"单人房": 1, "大床房": 2, "双人房": 2, "家庭房": 3}
"""People per room, as the official people-accuracy check counts them."""


@dataclass(frozen=True, slots=True)
class Attraction:
    """A row of `attractions/<city>/attractions.csv`; times in `H:MM`, recommended visit times in hours."""

    city: str
    id: int
    name: str
    type: str
    """The categories as the file writes them: `{历史古迹;网红打卡点}` (see `types`)."""
    lat: float
    lon: float
    opentime: str
    endtime: str
    price: float
    recommendmintime: float
    recommendmaxtime: float
    star: float | None
    """None where the file leaves it empty (NaN in the official pandas read)."""

    @property
    def types(self) -> tuple[str, ...]:
        """The categories of `type`, e.g. ("历史古迹", "网红打卡点")."""
        return tuple(part for part in self.type.strip().strip("{}").split(";") if part)


@dataclass(frozen=True, slots=True)
class Room:
    """One room type of a hotel."""

    type: str
    """The plan schema's name: 单人房, 大床房, 双人房 or 家庭房."""
    column: str
    """The CSV column prefix: single_room, king_room, double_bed, family_room."""
    price: int
    stock: int


@dataclass(frozen=True, slots=True)
class Hotel:
    """A row of `accommodations/<city>/accommodations.csv`."""

    city: str
    id: int
    name: str
    hotelname_en: str
    featurehoteltype: str
    lat: float
    lon: float
    rooms: tuple[Room, ...]
    """The four room types, in `ROOM_TYPES` order."""

    def room(self, room_type: str) -> Room | None:
        """The room of a type, by its plan name (大床房) or column prefix (king_room)."""
        return next((room for room in self.rooms if room_type in (room.type, room.column)), None)


@dataclass(frozen=True, slots=True)
class Restaurant:
    """A row of `restaurants/<city>/restaurants_<city>.csv`; `price` is per person."""

    city: str
    id: int
    name: str
    lat: float
    lon: float
    price: float
    cuisine: str
    opentime: str
    endtime: str
    recommendedfood: str


@dataclass(frozen=True, slots=True)
class Train:
    """A record of `intercity_transport/train/from_<A>_to_<B>.json` (stations, `H:MM` times, hours, RMB)."""

    from_city: str
    """Chinese city names, from the file's name."""
    to_city: str
    train_id: str
    train_type: str
    from_station: str
    to_station: str
    begin_time: str
    end_time: str
    duration: float
    cost: float


@dataclass(frozen=True, slots=True)
class Flight:
    """A line of `intercity_transport/airplane.jsonl` (airports, `H:MM` times, hours, RMB)."""

    flight_id: str
    from_airport: str
    to_airport: str
    begin_time: str
    end_time: str
    duration: float
    cost: float


@dataclass(frozen=True, slots=True)
class Station:
    name: str
    lat: float
    lon: float
    """subways.json writes a position as the text "lon,lat"; here it is split and named."""


@dataclass(frozen=True, slots=True)
class SubwayLine:
    """A line of `transportation/subways.json` under its city, stations in line order."""

    city: str
    name: str
    stations: tuple[Station, ...]


_ATTRACTION = "city, id, name, type, lat, lon, opentime, endtime, price, recommendmintime, recommendmaxtime, star"
_HOTEL = ("city, id, name, hotelname_en, featurehoteltype, lat, lon, single_room_price, single_room_stock, "
          "king_room_price, king_room_stock, double_bed_price, double_bed_stock, family_room_price, family_room_stock")
_RESTAURANT = "city, id, name, lat, lon, price, cuisine, opentime, endtime, recommendedfood"
_TRAIN = ("from_city, to_city, train_id, train_type, from_station, to_station, begin_time, end_time, duration, "
          "cost")
_FLIGHT = "flight_id, from_airport, to_airport, begin_time, end_time, duration, cost"

T = TypeVar("T")
DERIVED_KEPT = 512
"""Values built from the rows that a sandbox keeps (`Sandbox.derived`), at most: a few hundred cities and city pairs
in use, whatever the keys model text makes up."""
REBUILD = ("`tripbench data import DIR` (a folder holding the official data/ and database/) or `tripbench data "
           "fetch traveleval` rebuilds it")
"""The commands that (re)build an index, as printed in its errors (a test runs them)."""


def _hotel(row: tuple[Any, ...]) -> Hotel:
    city, hotel_id, name, name_en, feature, lat, lon, *prices = row
    rooms = tuple(Room(kind, column, prices[2 * i], prices[2 * i + 1])
                  for i, (kind, column) in enumerate(ROOM_TYPES.items()))
    return Hotel(city, hotel_id, name, name_en, feature, lat, lon, rooms)


def _subway_line(row: tuple[Any, ...]) -> SubwayLine:
    city, name, stations = row
    return SubwayLine(city, name, tuple(Station(*station) for station in json.loads(stations)))


class Sandbox(IndexReader):
    """Lookups over a TravelEval index: one read-only (`immutable`) SQLite connection per thread; the lists (a
    city's attractions, a city pair's trains, ...), small and asked for again and again by agents and the
    evaluator, are kept once read."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._lists: dict[tuple[object, ...], tuple[Any, ...]] = {}
        self._derived: OrderedDict[tuple[object, ...], Any] = OrderedDict()
        self._derived_lock = threading.Lock()
        if (version := stored_version(path)) != SCHEMA_VERSION:
            self.close()
            raise DataError(f"{path}: index schema {version!r}, expected {SCHEMA_VERSION!r}: rebuild it (`tripbench "
                            "data import`)" if version else f"{path}: not a TravelEval sandbox index; `tripbench data "
                            "import` builds it")
        try:
            meta = dict(self._conn().execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.Error as exc:
            self.close()
            raise DataError(f"{path}: not a TravelEval sandbox index ({exc}); {REBUILD}")
        self._categories = {kind: tuple(values) for kind, values in json.loads(meta["categories"]).items()}
        self._counts: dict[str, int] = json.loads(meta["counts"])
        self._cities = tuple(row[0] for row in self._rows("SELECT DISTINCT city FROM attractions ORDER BY city"))

    @classmethod
    def open(cls, path: Path) -> Sandbox:
        """Open a built index (`build.build_index`, `build.ensure_index`).

        Raises:
            DataError: no file there, or not an index of this version.
        """
        if not Path(path).is_file():
            raise MissingInput(f"{path}: no TravelEval sandbox index; {REBUILD}")
        return cls(Path(path))

    def _rows(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        return self._conn().execute(sql, args).fetchall()

    def _list(self, kind: str, city: str, read: Callable[[str], tuple[T, ...]]) -> tuple[T, ...]:
        """A per-city list, by the city's folder name."""
        if not bindable(city):
            return ()
        folder = cities.city_dir(city)
        return self._kept((kind, folder), lambda: read(folder))

    def _kept(self, key: tuple[object, ...], read: Callable[[], tuple[T, ...]]) -> tuple[T, ...]:
        """`read()`, done once per key (a race reads it twice, harmlessly). Empty results are not kept: keys come
        from untrusted text, and an unknown city must not grow the sandbox."""
        found = self._lists.get(key)
        if found is None:
            found = read()
            if found:
                found = self._lists.setdefault(key, found)
        return found

    def derived(self, key: tuple[object, ...], make: Callable[[], T]) -> T:
        """`make()`, a value built from the sandbox's rows (a city's lookups for the evaluator, the planner's sights),
        kept with the sandbox by `key` (its first element names the kind): the `DERIVED_KEPT` most recently used, as
        keys may come from model text. Kept here, they live as long as the sandbox and no longer (`close`)."""
        with self._derived_lock:
            if key in self._derived:
                self._derived.move_to_end(key)
                return cast(T, self._derived[key])
        made = make()  # outside the lock: a race makes it twice, harmlessly
        with self._derived_lock:
            self._derived[key] = made
            while len(self._derived) > DERIVED_KEPT:
                self._derived.popitem(last=False)
        return made

    def close(self) -> None:
        """Closes every thread's connection and drops what was kept (the sandbox must not be used afterwards)."""
        super().close()
        self._lists.clear()
        with self._derived_lock:
            self._derived.clear()

    def _first(self, columns: str, table: str, city: str, name: str) -> tuple[Any, ...] | None:
        if not bindable(city, name):
            return None
        rows = self._rows(f"SELECT {columns} FROM {table} WHERE city = ? AND name = ? ORDER BY row LIMIT 1",
                          cities.city_dir(city), name)
        return rows[0] if rows else None

    # Cities and categories.
    def cities(self) -> tuple[str, ...]:
        """The cities of the database, as folder names (pinyin), sorted."""
        return self._cities

    @staticmethod
    def city_dir(city: str) -> str:
        """A city's folder name from its Chinese (北京 -> beijing) or pinyin name (the official mapping)."""
        return cities.city_dir(city)

    def categories(self) -> dict[str, tuple[str, ...]]:
        """categories.json: accommodations (hotel features), diet (cuisines), attractions (types), rhythm."""
        return dict(self._categories)

    def counts(self) -> dict[str, int]:
        """Rows per table, as imported."""
        return dict(self._counts)

    # Attractions, hotels, restaurants, POI coordinates.
    def attractions(self, city: str) -> tuple[Attraction, ...]:
        return self._list("attractions", city, lambda folder: tuple(
            Attraction(*row) for row in self._rows(
                f"SELECT {_ATTRACTION} FROM attractions WHERE city = ? ORDER BY row", folder)))

    def attraction(self, city: str, name: str) -> Attraction | None:
        """The attraction of that exact name in `city`, or None."""
        row = self._first(_ATTRACTION, "attractions", city, name)
        return None if row is None else Attraction(*row)

    def hotels(self, city: str) -> tuple[Hotel, ...]:
        return self._list("hotels", city, lambda folder: tuple(
            _hotel(row) for row in self._rows(f"SELECT {_HOTEL} FROM hotels WHERE city = ? ORDER BY row", folder)))

    def hotel(self, city: str, name: str) -> Hotel | None:
        """The first hotel of that exact name in `city`, or None."""
        row = self._first(_HOTEL, "hotels", city, name)
        return None if row is None else _hotel(row)

    def restaurants(self, city: str) -> tuple[Restaurant, ...]:
        return self._list("restaurants", city, lambda folder: tuple(
            Restaurant(*row) for row in self._rows(
                f"SELECT {_RESTAURANT} FROM restaurants WHERE city = ? ORDER BY row", folder)))

    def restaurant(self, city: str, name: str) -> Restaurant | None:
        """The restaurant of that exact name in `city`, or None."""
        row = self._first(_RESTAURANT, "restaurants", city, name)
        return None if row is None else Restaurant(*row)

    def poi_names(self, city: str) -> tuple[str, ...]:
        """The names of `poi/<city>/poi.json` (stations, airports, attractions, hotels, restaurants), file order."""
        return self._list("poi", city, lambda folder: tuple(
            row[0] for row in self._rows("SELECT name FROM poi WHERE city = ? ORDER BY row", folder)))

    def poi_position(self, city: str, name: str) -> tuple[float, float] | None:
        """(lat, lon) of the first poi.json entry of that exact name in `city`, or None."""
        row = self._first("lat, lon", "poi", city, name)
        return None if row is None else (row[0], row[1])

    # Intercity transport.
    def trains(self, from_city: str, to_city: str, *, both_ways: bool = False) -> tuple[Train, ...]:
        """The trains of `from_<from_city>_to_<to_city>.json`, file order.

        Args:
            both_ways: then the trains back after them, as the official `load_intercity_transport` concatenates
                the two files.
        """
        if not bindable(from_city, to_city):
            return ()
        pairs = [(cities.city_name(from_city), cities.city_name(to_city))]
        pairs += [pairs[0][::-1]] if both_ways else []
        return self._kept(("trains", *pairs), lambda: tuple(Train(*row) for pair in pairs for row in self._rows(
            f"SELECT {_TRAIN} FROM trains WHERE from_city = ? AND to_city = ? ORDER BY row", *pair)))

    def flights(self, from_city: str, to_city: str, *, both_ways: bool = False) -> tuple[Flight, ...]:
        """The flights between airports whose names start with the cities' Chinese names (the official match),
        file order.

        Args:
            both_ways: also the flights back, mixed in file order, as the official loader selects them.
        """
        if not bindable(from_city, to_city):
            return ()
        origin, destination = cities.city_name(from_city), cities.city_name(to_city)
        where = "from_city = ? AND to_city = ?"
        args: tuple[str, ...] = (origin, destination)
        if both_ways:
            where, args = f"({where}) OR ({where})", (*args, destination, origin)
        return self._kept(("flights", *args), lambda: tuple(Flight(*row) for row in self._rows(
            f"SELECT {_FLIGHT} FROM flights WHERE {where} ORDER BY row", *args)))

    def all_flights(self) -> tuple[Flight, ...]:
        """Every line of airplane.jsonl, file order (the official evaluator selects among them by airport prefix)."""
        return self._kept(("flights",), lambda: tuple(Flight(*row) for row in self._rows(
            f"SELECT {_FLIGHT} FROM flights ORDER BY row")))

    def subway_lines(self, city: str) -> tuple[SubwayLine, ...]:
        """The city's subway lines (subways.json is keyed by pinyin), file order."""
        return self._list("subway", city, lambda folder: tuple(
            _subway_line(row) for row in self._rows(
                "SELECT city, name, stations FROM subway_lines WHERE city = ? ORDER BY row", folder)))
