"""The read-only TravelPlanner sandbox: typed lookups over a built index, safe from several threads."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from datahome import in_home
from errors import DataError, MissingInput
from sandbox_index import queries, schema
from sandbox_index.atomic import stored_version
from sandbox_index.connections import IndexReader, bindable

_MMAP_BYTES = 1 << 32  # an upper bound: SQLite maps at most the file's size
FRAMES_KEPT = 2048
"""Lookup results a sandbox keeps (the oldest go first), Frames and distances each: every sample of a query searches
the same cities, and a replay from the cache does little else. A restaurant table of a city is a few kilobytes."""
_REIMPORT = "run `tripbench data import DIR` (or `tripbench data fetch`) to build it"


@dataclass(frozen=True, slots=True)
class Frame:
    """A query result with what it takes to render it as pandas would (`DataFrame.to_string`).

    Attributes:
        columns: official column names in the tool's column order (docs/fidelity/travelplanner.md §1.1).
        dtypes: `'int'`, `'float'` or `'str'` per column: what pandas infers for the full CSV column.
        index: pandas row label of each row (0-based data-row position in the CSV, before dropna).
        rows: typed values (int / float / str) per row, file order.
    """

    columns: tuple[str, ...]
    dtypes: tuple[str, ...]
    index: tuple[int, ...]
    rows: tuple[tuple[object, ...], ...]
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)
    """The hash, computed once: a rendered table is looked up by its Frame at every search and every mask."""

    def __len__(self) -> int:
        return len(self.rows)

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash((self.columns, self.dtypes, self.index, self.rows)))
        assert self._hash is not None
        return self._hash


class DistanceRow(NamedTuple):
    """Raw `duration` / `distance` texts of a distance.csv row; None where the field is missing."""

    duration: str | None
    distance: str | None


class Sandbox(IndexReader):
    """Lookups over a TravelPlanner index (see `open_sandbox`).

    Read-only, one SQLite connection per thread (opened `immutable=1`); every lookup binds its arguments,
    compares case-sensitively, keeps file order and never raises on odd text: it returns an empty Frame
    or None. The index never changes while open, so a Frame (immutable) is looked up once and kept
    (`FRAMES_KEPT`).
    """

    def __init__(self, path: Path, *, synthetic: bool = False) -> None:
        super().__init__(path, _map_pages)
        self.synthetic = synthetic
        conn = self._conn()
        # table -> (column names, dtypes), shared by every Frame of that table.
        self._shapes = {
            table: (tuple(name for name, _ in columns), tuple(dtype for _, dtype in columns))
            for table, columns in queries.column_dtypes(conn).items()
        }
        self._cities = tuple(queries.cities(conn))
        self._city_states = tuple(queries.city_states(conn))
        self._frames: dict[tuple[object, ...], Frame] = {}
        self._distances: dict[tuple[str, str], DistanceRow | None] = {}  # kept as the Frames are
        self._frames_lock = threading.Lock()

    def _frame(
        self, table: str, texts: tuple[str, ...], lookup: Callable[[sqlite3.Connection], list[queries.Row]],
        *, kind: object = None,
    ) -> Frame:
        """Run `lookup` unless one of its untrusted `texts` cannot be bound; wrap the rows in a Frame.

        `(table, kind, texts)` names the lookup: its Frame is kept (`FRAMES_KEPT`) and returned again. Threads may
        look the same key up at once: each gets an equal Frame."""
        columns, dtypes = self._shapes[table]
        if not bindable(*texts):
            return Frame(columns=columns, dtypes=dtypes, index=(), rows=())
        key = (table, kind, *texts)
        if (frame := self._frames.get(key)) is not None:
            return frame
        found = lookup(self._conn())
        frame = Frame(
            columns=columns,
            dtypes=dtypes,
            index=tuple(row[0] for row in found),  # type: ignore[misc]
            rows=tuple(tuple(row[1:]) for row in found),
        )
        with self._frames_lock:
            if len(self._frames) >= FRAMES_KEPT:
                del self._frames[next(iter(self._frames))]  # the oldest
            self._frames[key] = frame
        return frame

    # Tool lookups (docs/fidelity/travelplanner.md §3).
    def flights(self, origin: str, destination: str, date: str) -> Frame:
        """FlightSearch: flights from `origin` to `destination` on `date` (YYYY-MM-DD)."""
        return self._frame(
            "flights",
            (origin, destination, date),
            lambda conn: queries.flights(conn, origin, destination, date, self.synthetic),
        )

    def accommodations(self, city: str) -> Frame:
        """AccommodationSearch: accommodations in `city`."""
        return self._frame(
            "accommodations", (city,), lambda conn: queries.by_city(conn, "accommodations", city)
        )

    def restaurants(self, city: str) -> Frame:
        """RestaurantSearch: restaurants in `city`."""
        return self._frame("restaurants", (city,), lambda conn: queries.by_city(conn, "restaurants", city))

    def attractions(self, city: str) -> Frame:
        """AttractionSearch: attractions in `city`."""
        return self._frame("attractions", (city,), lambda conn: queries.by_city(conn, "attractions", city))

    def distance(self, origin: str, destination: str) -> DistanceRow | None:
        """The first distance.csv row from `origin` to `destination` (no dropna), or None."""
        if not bindable(origin, destination):
            return None
        if (origin, destination) in self._distances:
            return self._distances[origin, destination]
        row = queries.distance(self._conn(), origin, destination)
        found = None if row is None else DistanceRow(*row)  # type: ignore[arg-type]
        with self._frames_lock:
            if len(self._distances) >= FRAMES_KEPT:
                del self._distances[next(iter(self._distances))]  # the oldest
            self._distances[origin, destination] = found
        return found

    def cities(self) -> tuple[str, ...]:
        """citySet.txt: the cities the agent may name, file order."""
        return self._cities

    def state_cities(self) -> dict[str, tuple[str, ...]]:
        """citySet_with_states.txt: state -> its cities, file order (CitySearch, docs/fidelity/travelplanner.md
        §3.6)."""
        grouped: dict[str, list[str]] = {}
        for city, state in self._city_states:
            grouped.setdefault(state, []).append(city)
        return {state: tuple(cities) for state, cities in grouped.items()}

    def city_states(self) -> dict[str, str]:
        """citySet_with_states.txt: city -> state (the evaluator's city map)."""
        return dict(self._city_states)

    # Evaluator / CostEnquiry lookups (docs/fidelity/travelplanner.md §2): substring name unless exact, exact city.
    def _match(self, table: str, name: str, city: str, exact: bool) -> Frame:
        return self._frame(table, (name, city), lambda conn: queries.by_name(conn, table, name, city, exact),
                           kind=("name", exact))

    def match_restaurants(self, name: str, city: str, *, exact: bool = False) -> Frame:
        """Restaurants in `city` whose Name contains (or, with `exact`, equals) `name`."""
        return self._match("restaurants", name, city, exact)

    def match_attractions(self, name: str, city: str, *, exact: bool = False) -> Frame:
        """Attractions in `city` whose Name contains (or, with `exact`, equals) `name`."""
        return self._match("attractions", name, city, exact)

    def match_accommodations(self, name: str, city: str, *, exact: bool = False) -> Frame:
        """Accommodations in `city` whose NAME contains (or, with `exact`, equals) `name`."""
        return self._match("accommodations", name, city, exact)

    def flights_by_number(self, number: str) -> Frame:
        """Every flight with that Flight Number, file order."""
        return self._frame(
            "flights", (number,), lambda conn: queries.flights_by_number(conn, number, self.synthetic),
            kind="number",
        )

    def metadata(self) -> dict[str, str]:
        """The index's metadata: schema version, source sizes and sha256, row counts, build time."""
        return queries.metadata(self._conn())


TRAVELPLANNER_INDEX = "travelplanner.sqlite"


def travelplanner_index_path(home: str | os.PathLike[str] | None = None) -> Path:
    """The TravelPlanner index file: `<home>/travelplanner.sqlite`.

    Args:
        home: The data home (a `str` from a notebook works as well as a `Path`); defaults to `default_home()`.
    """
    return in_home(TRAVELPLANNER_INDEX, home)


def open_sandbox(path: str | os.PathLike[str] | None = None, *, synthetic: bool = False) -> Sandbox:
    """Open a TravelPlanner index read-only.

    Args:
        path: the index file (a `str` from a notebook works as well as a `Path`); defaults to
            `travelplanner_index_path()` in the data home.
        synthetic: include synthetic flight rows (performance work and demos only, never scoring).

    Raises:
        DataError: the index is missing, not an index, or built by another schema version.
    """
    path = Path(path) if path is not None else travelplanner_index_path()
    if not path.is_file():
        raise MissingInput(f"{path}: no TravelPlanner index: {_REIMPORT}")
    found = stored_version(path)
    if found is None:
        raise DataError(f"{path}: not a TravelPlanner index (not SQLite, or damaged): {_REIMPORT}")
    if found == 0:  # a SQLite file tripbench did not build (every index sets user_version)
        raise DataError(f"{path}: not a TravelPlanner index (no schema version): {_REIMPORT}")
    if found != schema.SCHEMA_VERSION:
        raise DataError(
            f"{path}: index schema version {found}, this tripbench reads version {schema.SCHEMA_VERSION}: "
            "run `tripbench data import DIR` again to rebuild it"
        )
    try:
        return Sandbox(path, synthetic=synthetic)
    except sqlite3.DatabaseError as exc:
        raise DataError(f"{path}: damaged TravelPlanner index ({exc}): {_REIMPORT}") from exc


def _map_pages(conn: sqlite3.Connection) -> None:
    # Read pages through the OS page cache without a copy or a syscall per page: the p99 of
    # cold-ish random lookups on the 3.8M-row table drops by an order of magnitude (perf/).
    conn.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")


def index_fingerprints(path: Path) -> dict[str, str]:
    """What an index was built from, for a run's data fingerprints: `database/NAME` -> the sha256 its build recorded
    of each source table (the index file itself holds its build time, so its own bytes differ on every machine), and
    `index schema version`. Empty when there is no index yet (the run's own start names it missing)."""
    if not path.is_file():
        return {}
    try:
        with contextlib.closing(sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)) as conn:
            found = queries.metadata(conn)
    except sqlite3.DatabaseError as exc:
        raise DataError(f"{path}: damaged TravelPlanner index ({exc}): {_REIMPORT}") from exc
    digests = {f"database/{key.removeprefix('source.').removesuffix('.sha256')}": value for key, value in found.items()
               if key.startswith("source.") and key.endswith(".sha256")}
    return {**digests, "index schema version": found.get("schema_version", str(stored_version(path)))}
