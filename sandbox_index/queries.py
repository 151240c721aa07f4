"""One function per lookup: a function of a connection, bound parameters only, rows in file order.

Every filter is exact, case-sensitive equality (SQLite's BINARY collation), as the official tools compare
strings (docs/fidelity/travelplanner.md §3). Substring name matching uses `instr()`, never LIKE, so `%` and `_` in a
name are plain characters, as in the evaluator's `str.contains(re.escape(name))` (docs/fidelity/travelplanner.md §2).
Each function returns `(row_label, *tool columns)` tuples.
"""

from __future__ import annotations

import sqlite3

from sandbox_index import schema
from sandbox_index.schema import SourceTable

Row = tuple[object, ...]


def _select(source: SourceTable, table: str | None = None) -> str:
    columns = ", ".join(schema.quote(c) for c in source.columns)
    return f"SELECT row_label, {columns} FROM {table or source.table}"


_FLIGHT_ROUTE = ' WHERE "OriginCityName" = ? AND "DestCityName" = ? AND "FlightDate" = ?'
_FLIGHT_NUMBER = ' WHERE "Flight Number" = ?'


def _flights_sql(where: str, synthetic: bool) -> str:
    # Synthetic rows carry row labels above every real one (synthetic.py): appending keeps file order.
    sql = _select(schema.FLIGHTS) + where
    if synthetic:
        sql += " UNION ALL " + _select(schema.FLIGHTS, schema.SYNTHETIC_FLIGHTS) + where
    return sql + " ORDER BY row_label"


_FLIGHTS_SQL = {
    (where, synthetic): _flights_sql(where, synthetic)
    for where in (_FLIGHT_ROUTE, _FLIGHT_NUMBER)
    for synthetic in (False, True)
}


def flights(conn: sqlite3.Connection, origin: str, dest: str, date: str, synthetic: bool) -> list[Row]:
    """FlightSearch rows (docs/fidelity/travelplanner.md §3.1)."""
    params = (origin, dest, date) * (2 if synthetic else 1)
    return conn.execute(_FLIGHTS_SQL[(_FLIGHT_ROUTE, synthetic)], params).fetchall()


def flights_by_number(conn: sqlite3.Connection, number: str, synthetic: bool) -> list[Row]:
    """Every row with that `Flight Number` (CostEnquiry and the evaluator, docs/fidelity/travelplanner.md §3.9, §7)."""
    params = (number,) * (2 if synthetic else 1)
    return conn.execute(_FLIGHTS_SQL[(_FLIGHT_NUMBER, synthetic)], params).fetchall()


_BY_CITY = {
    source.table: f"{_select(source)} WHERE {schema.quote(schema.NAME_COLUMNS[source.table][1])} = ? "
    "ORDER BY row_label"
    for source in (schema.ACCOMMODATIONS, schema.RESTAURANTS, schema.ATTRACTIONS)
}


def by_city(conn: sqlite3.Connection, table: str, city: str) -> list[Row]:
    """Accommodation / Restaurant / AttractionSearch rows (docs/fidelity/travelplanner.md §3.3-§3.5)."""
    return conn.execute(_BY_CITY[table], (city,)).fetchall()


def _by_name_sql(source: SourceTable, exact: bool) -> str:
    name, city = (schema.quote(c) for c in schema.NAME_COLUMNS[source.table])
    test = f"{name} = ?" if exact else f"instr({name}, ?) > 0"
    return f"{_select(source)} WHERE {city} = ? AND {test} ORDER BY row_label"


_BY_NAME = {
    (source.table, exact): _by_name_sql(source, exact)
    for source in (schema.ACCOMMODATIONS, schema.RESTAURANTS, schema.ATTRACTIONS)
    for exact in (False, True)
}


def by_name(conn: sqlite3.Connection, table: str, name: str, city: str, exact: bool) -> list[Row]:
    """Rows of `table` in `city` whose name equals (exact) or contains `name` (docs/fidelity/travelplanner.md §2)."""
    return conn.execute(_BY_NAME[(table, exact)], (city, name)).fetchall()


_DISTANCE = (
    "SELECT duration, distance FROM distances WHERE origin = ? AND destination = ? ORDER BY row_label LIMIT 1"
)


def distance(conn: sqlite3.Connection, origin: str, dest: str) -> Row | None:
    """`(duration, distance)` texts of the first matching distance row (docs/fidelity/travelplanner.md §3.2), or
    None."""
    row: Row | None = conn.execute(_DISTANCE, (origin, dest)).fetchone()
    return row


def cities(conn: sqlite3.Connection) -> list[str]:
    """citySet.txt lines, file order."""
    return [city for (city,) in conn.execute("SELECT city FROM cities ORDER BY position")]


def city_states(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """citySet_with_states.txt `(city, state)` pairs, file order."""
    return conn.execute("SELECT city, state FROM city_states ORDER BY position").fetchall()


def column_dtypes(conn: sqlite3.Connection) -> dict[str, tuple[tuple[str, str], ...]]:
    """table -> ((column, dtype), ...) in the tool's column order."""
    found: dict[str, list[tuple[str, str]]] = {}
    for table, name, dtype in conn.execute(
        "SELECT table_name, name, dtype FROM column_dtypes ORDER BY table_name, position"
    ):
        found.setdefault(table, []).append((name, dtype))
    return {table: tuple(columns) for table, columns in found.items()}


def metadata(conn: sqlite3.Connection) -> dict[str, str]:
    """The metadata table as a dict."""
    return dict(conn.execute("SELECT key, value FROM metadata ORDER BY key").fetchall())
