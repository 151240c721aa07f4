"""Import a TravelEval database folder (the official `environment/database/` layout) into one SQLite file.

Every row is checked as it is read: a missing column, a value that is not a number or an `H:MM` time, a malformed
JSON record is a `DataError` naming the file and line. Rows keep their file position (`row`), so a lookup returns
them in the order the official pandas/JSON reads list them. The index is built atomically and stamped with its schema
version (`sandbox_index.atomic`): a failed build leaves no partial file.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.traveleval import paths
from benchmarks.traveleval.sandbox.cities import CITY_DIRS
from datahome import in_home
from errors import DataError, MissingInput
from sandbox_index.atomic import atomic_build, stored_version

SCHEMA_VERSION = 2
"""Stamped on the index (`sandbox_index.atomic`); `ensure_index` rebuilds an index of another version (version 1
kept it in the `meta` table)."""

_TABLES = {
    "attractions": "city TEXT, row INTEGER, id INTEGER, name TEXT, type TEXT, lat REAL, lon REAL, opentime TEXT, "
                   "endtime TEXT, price REAL, recommendmintime REAL, recommendmaxtime REAL, star REAL",
    "hotels": "city TEXT, row INTEGER, id INTEGER, name TEXT, hotelname_en TEXT, featurehoteltype TEXT, lat REAL, "
              "lon REAL, single_room_price INTEGER, single_room_stock INTEGER, king_room_price INTEGER, "
              "king_room_stock INTEGER, double_bed_price INTEGER, double_bed_stock INTEGER, "
              "family_room_price INTEGER, family_room_stock INTEGER",
    "restaurants": "city TEXT, row INTEGER, id INTEGER, name TEXT, lat REAL, lon REAL, price REAL, cuisine TEXT, "
                   "opentime TEXT, endtime TEXT, recommendedfood TEXT",
    "poi": "city TEXT, row INTEGER, name TEXT, lat REAL, lon REAL",
    "trains": "from_city TEXT, to_city TEXT, row INTEGER, train_id TEXT, train_type TEXT, from_station TEXT, "
              "to_station TEXT, begin_time TEXT, end_time TEXT, duration REAL, cost REAL",
    "flights": "row INTEGER, flight_id TEXT, from_airport TEXT, to_airport TEXT, from_city TEXT, to_city TEXT, "
               "begin_time TEXT, end_time TEXT, duration REAL, cost REAL",
    "subway_lines": "city TEXT, row INTEGER, name TEXT, stations TEXT",
    "meta": "key TEXT PRIMARY KEY, value TEXT",
}
_INDEXES = (
    "CREATE INDEX attractions_name ON attractions (city, name, row)",
    "CREATE INDEX attractions_city ON attractions (city, row)",
    "CREATE INDEX hotels_name ON hotels (city, name, row)",
    "CREATE INDEX hotels_city ON hotels (city, row)",
    "CREATE INDEX restaurants_name ON restaurants (city, name, row)",
    "CREATE INDEX restaurants_city ON restaurants (city, row)",
    "CREATE INDEX poi_name ON poi (city, name, row)",
    "CREATE INDEX trains_pair ON trains (from_city, to_city, row)",
    "CREATE INDEX flights_pair ON flights (from_city, to_city, row)",
    "CREATE INDEX subway_city ON subway_lines (city, row)",
)

# Column kinds of the CSV files: how each value is checked and stored.
_INT, _FLOAT, _FLOAT_OR_NONE, _TIME, _TEXT = "int", "float", "float?", "time", "text"
_ROOM_COLUMNS = tuple(f"{room}_{what}" for room in ("single_room", "king_room", "double_bed", "family_room")
                      for what in ("price", "stock"))
_CSV_COLUMNS: Mapping[str, Mapping[str, str]] = {
    "attractions": {"id": _INT, "name": _TEXT, "type": _TEXT, "lat": _FLOAT, "lon": _FLOAT, "opentime": _TIME,
                    "endtime": _TIME, "price": _FLOAT, "recommendmintime": _FLOAT, "recommendmaxtime": _FLOAT,
                    "star": _FLOAT_OR_NONE},
    "hotels": {"id": _INT, "name": _TEXT, "hotelname_en": _TEXT, "featurehoteltype": _TEXT, "lat": _FLOAT,
               "lon": _FLOAT, **dict.fromkeys(_ROOM_COLUMNS, _INT)},
    "restaurants": {"id": _INT, "name": _TEXT, "lat": _FLOAT, "lon": _FLOAT, "price": _FLOAT, "cuisine": _TEXT,
                    "opentime": _TIME, "endtime": _TIME, "recommendedfood": _TEXT},
}
_TIME_PATTERN = re.compile(r"\d{1,2}:\d{2}")
_TRAIN_FILE = re.compile(r"from_(.+)_to_(.+)\.json")
_TRAIN_KEYS = ("TrainID", "TrainType", "From", "To", "BeginTime", "EndTime", "Duration", "Cost")
_FLIGHT_KEYS = ("FlightID", "From", "To", "BeginTime", "EndTime", "Duration", "Cost")


def city_files(database_dir: Path, city: str) -> dict[str, Path]:
    """The four per-city files of `city` (a pinyin directory name), by table."""
    return {"attractions": database_dir / "attractions" / city / "attractions.csv",
            "hotels": database_dir / "accommodations" / city / "accommodations.csv",
            "restaurants": database_dir / "restaurants" / city / f"restaurants_{city}.csv",
            "poi": database_dir / "poi" / city / "poi.json"}


def source_files(database_dir: Path) -> list[Path]:
    """Every file the index is built from (a city is a folder under `attractions/`).

    Raises:
        DataError: the folder is not in the official layout (names the first missing file).
    """
    attractions = database_dir / "attractions"
    if not attractions.is_dir():
        raise DataError(f"{database_dir}: not a TravelEval database folder (no attractions/ folder)")
    files = [path for city in sorted(p.name for p in attractions.iterdir() if p.is_dir())
             for path in city_files(database_dir, city).values()]
    files += [database_dir / "intercity_transport" / "airplane.jsonl",
              database_dir / "transportation" / "subways.json", database_dir / "categories.json"]
    for path in files:
        if not path.is_file():
            raise DataError(f"{path}: missing file (a TravelEval database folder has the official layout)")
    trains = sorted((database_dir / "intercity_transport" / "train").glob("from_*_to_*.json"))
    if not trains:
        raise DataError(f"{database_dir / 'intercity_transport' / 'train'}: no from_<city>_to_<city>.json file")
    return files + trains


def build_index(database_dir: Path, dest: Path) -> dict[str, int]:
    """Build the sandbox index `dest` from `database_dir` (replacing it atomically); returns rows per table.

    Raises:
        DataError: a missing file or a malformed row (names the file and line).
    """
    files = source_files(database_dir)
    with atomic_build(dest, SCHEMA_VERSION) as conn:
        for table, columns in _TABLES.items():
            conn.execute(f"CREATE TABLE {table} ({columns})")
        counts = _import(conn, database_dir, files)
        for statement in _INDEXES:
            conn.execute(statement)
        categories = _read_json(database_dir / "categories.json")
        if not isinstance(categories, dict) or not all(
                isinstance(values, list) and all(isinstance(value, str) for value in values)
                for values in categories.values()):
            raise DataError(f"{database_dir / 'categories.json'}: expected an object of lists of text")
        meta = {"categories": json.dumps(categories, ensure_ascii=False), "counts": json.dumps(counts)}
        conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    return counts


def ensure_index(data_dir: Path) -> Path:
    """The index of a TravelEval folder (`paths` layout), built when missing, older than a source file, or of
    another schema version.

    The data home's folder has its index beside its database (`data fetch` and `data import` build it there). Any
    other folder (a shared, read-only copy, a colleague's) is never written to: its index is built in the data home,
    under `indexes/`, named by the folder's path.

    Raises:
        DataError: the database is missing or malformed.
    """
    index, database = _index_of(data_dir), paths.database_dir(data_dir)
    if not database.is_dir():
        raise MissingInput(f"{database}: no TravelEval database (run `tripbench data fetch traveleval`, or `tripbench "
                        "data import DIR` for a folder holding the official data/ and database/)")
    newest = max(path.stat().st_mtime for path in source_files(database))
    if not index.is_file() or index.stat().st_mtime < newest or stored_version(index) != SCHEMA_VERSION:
        build_index(database, index)  # a file that is no index, or a damaged one, too
    return index


def _index_of(data_dir: Path) -> Path:
    beside = paths.index_path(data_dir)
    if beside.is_file():
        return beside
    folder = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return in_home("indexes") / f"traveleval-{folder}.sqlite"


def _import(conn: sqlite3.Connection, database_dir: Path, files: Sequence[Path]) -> dict[str, int]:
    counts = dict.fromkeys(("attractions", "hotels", "restaurants", "poi", "trains", "flights", "subway_lines"), 0)
    cities = sorted(p.name for p in (database_dir / "attractions").iterdir() if p.is_dir())
    for city in cities:
        found = city_files(database_dir, city)
        for table in ("attractions", "hotels", "restaurants"):
            counts[table] += _insert(conn, table, ((city, row, *values)
                                                   for row, values in enumerate(_csv_rows(found[table], table))))
        counts["poi"] += _insert(conn, "poi", ((city, row, *values)
                                               for row, values in enumerate(_poi_rows(found["poi"]))))
    for path in files:
        if match := _TRAIN_FILE.fullmatch(path.name):
            counts["trains"] += _insert(conn, "trains", ((*match.groups(), row, *values)
                                                         for row, values in enumerate(_train_rows(path))))
    flights = database_dir / "intercity_transport" / "airplane.jsonl"
    counts["flights"] += _insert(conn, "flights", ((row, *values) for row, values in enumerate(_flight_rows(flights))))
    subways = database_dir / "transportation" / "subways.json"
    counts["subway_lines"] += _insert(conn, "subway_lines", _subway_rows(subways))
    return counts


def _insert(conn: sqlite3.Connection, table: str, rows: Iterator[tuple[Any, ...]]) -> int:
    before = conn.total_changes
    width = len(_TABLES[table].split(","))
    conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * width)})", rows)
    return conn.total_changes - before


def _csv_rows(path: Path, table: str) -> Iterator[tuple[Any, ...]]:
    """The typed values of each row, in `_CSV_COLUMNS[table]` order."""
    columns = _CSV_COLUMNS[table]
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:  # the accommodations files start with a BOM
            reader = csv.reader(handle)
            header = next(reader, [])
            missing = [name for name in columns if name not in header]
            if missing:
                raise DataError(f"{path}: line 1: no column {missing[0]!r} (expected {', '.join(columns)})")
            positions = [header.index(name) for name in columns]
            for record in reader:
                if not record:
                    continue
                if len(record) != len(header):
                    raise DataError(f"{path}: line {reader.line_num}: {len(record)} fields, expected {len(header)}")
                yield tuple(_typed(record[i], kind, path, reader.line_num, name)
                            for i, (name, kind) in zip(positions, columns.items(), strict=True))
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text: {exc}") from None


def _typed(value: str, kind: str, path: Path, line: int, column: str) -> Any:
    """A CSV field as pandas reads it: a number, None for an empty float (NaN), or the text."""
    if kind == _TEXT:
        return value
    if kind == _TIME:
        if not _TIME_PATTERN.fullmatch(value):
            raise DataError(f"{path}: line {line}: {column}: expected a time H:MM, got {value!r}")
        return value
    if kind == _FLOAT_OR_NONE and not value.strip():
        return None
    try:
        return int(value) if kind == _INT else float(value)
    except ValueError:
        expected = "an integer" if kind == _INT else "a number"
        raise DataError(f"{path}: line {line}: {column}: expected {expected}, got {value!r}") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not valid JSON: {exc}") from None


def _records(path: Path, data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise DataError(f"{path}: expected a JSON list of objects")
    return data


def _number(record: Mapping[str, Any], key: str, where: str) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataError(f"{where}: {key}: expected a number, got {value!r}")
    return float(value)


def _fields(record: Mapping[str, Any], keys: Sequence[str], where: str,
            numbers: Sequence[str] = ("Duration", "Cost")) -> tuple[Any, ...]:
    """`keys` of a JSON record: numbers as floats, `...Time` keys checked as H:MM, the rest as text."""
    values: list[Any] = []
    for key in keys:
        if key in numbers:
            values.append(_number(record, key, where))
            continue
        value = record.get(key)
        if not isinstance(value, str) or (key.endswith("Time") and not _TIME_PATTERN.fullmatch(value)):
            expected = "a time H:MM" if key.endswith("Time") else "text"
            raise DataError(f"{where}: {key}: expected {expected}, got {value!r}")
        values.append(value)
    return tuple(values)


def _poi_rows(path: Path) -> Iterator[tuple[Any, ...]]:
    for number, record in enumerate(_records(path, _read_json(path)), 1):
        where = f"{path}: entry {number}"
        name, position = record.get("name"), record.get("position")
        if not isinstance(name, str):
            raise DataError(f"{where}: name: expected text, got {name!r}")
        if (not isinstance(position, list) or len(position) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in position)):
            raise DataError(f"{where}: position: expected [lat, lon], got {position!r}")
        yield name, float(position[0]), float(position[1])


def _train_rows(path: Path) -> Iterator[tuple[Any, ...]]:
    for number, record in enumerate(_records(path, _read_json(path)), 1):
        yield _fields(record, _TRAIN_KEYS, f"{path}: entry {number}")


def _flight_rows(path: Path) -> Iterator[tuple[Any, ...]]:
    cities = tuple(CITY_DIRS)
    try:
        lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines(): JSON strings may hold U+2028
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: not valid JSON: {exc}") from None
        if not isinstance(record, dict):
            raise DataError(f"{where}: expected a JSON object")
        flight_id, origin, destination, *times = _fields(record, _FLIGHT_KEYS, where)
        yield (flight_id, origin, destination, _city_of(origin, cities), _city_of(destination, cities), *times)


def _city_of(airport: str, cities: Sequence[str]) -> str | None:
    """The city an airport serves: the one its name starts with (the official loader matches by prefix)."""
    return next((city for city in cities if airport.startswith(city)), None)


def _subway_rows(path: Path) -> Iterator[tuple[Any, ...]]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected an object of city -> lines")
    for city, lines in data.items():
        for row, line in enumerate(_records(path, lines)):
            where = f"{path}: {city}[{row}]"
            name, stations = line.get("name"), line.get("stations")
            if not isinstance(name, str) or not isinstance(stations, list):
                raise DataError(f"{where}: expected {{name, stations: [...]}}")
            yield city, row, name, json.dumps([_station(station, f"{where}.stations") for station in stations],
                                              ensure_ascii=False)


def _station(station: Any, where: str) -> tuple[str, float, float]:
    """A subway station as (name, lat, lon); the file writes its position as the text "lon,lat"."""
    name = station.get("name") if isinstance(station, dict) else None
    position = station.get("position") if isinstance(station, dict) else None
    try:
        lon, lat = (float(part) for part in str(position).split(","))
    except ValueError:
        raise DataError(f"{where}: {name!r}: position: expected \"lon,lat\", got {position!r}") from None
    if not isinstance(name, str):
        raise DataError(f"{where}: name: expected text, got {name!r}")
    return name, lat, lon

