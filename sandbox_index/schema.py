"""The TravelPlanner index: source files, SQL tables and the indexes named for the lookups they serve.

One table per source CSV. Data columns keep the official column names (quoted), in the order the tool
shows them (docs/fidelity/travelplanner.md §1.1), and hold typed values exactly as pandas reads them (`csv_semantics`);
`row_label` is the pandas row label (0-based data-row position in the CSV, before `dropna`) and the rowid, so rowid
order is file order. Rows with a missing field are not stored for the four tables the official code
`dropna()`s (docs/fidelity/travelplanner.md §12.1); they are counted in the metadata. The declared column types are
empty on
purpose: no type affinity, so SQLite returns each value exactly as stored.
"""

from __future__ import annotations

from dataclasses import dataclass

# Bump on any change to tables, columns or stored semantics: `open_sandbox` refuses other versions.
SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class SourceTable:
    """One source CSV and the table it becomes."""

    table: str
    file: str  # path relative to the database folder (official layout)
    columns: tuple[str, ...]  # the tool's column order (docs/fidelity/travelplanner.md §1.1 "Columns the tool keeps")
    dropna: bool  # rows with any missing field are invisible to tools and evaluator


FLIGHTS = SourceTable(
    "flights",
    "flights/clean_Flights_2022.csv",
    ("Flight Number", "Price", "DepTime", "ArrTime", "ActualElapsedTime", "FlightDate",
     "OriginCityName", "DestCityName", "Distance"),
    dropna=True,
)  # fmt: skip
ACCOMMODATIONS = SourceTable(
    "accommodations",
    "accommodations/clean_accommodations_2022.csv",
    ("NAME", "price", "room type", "house_rules", "minimum nights", "maximum occupancy",
     "review rate number", "city"),
    dropna=True,
)  # fmt: skip
RESTAURANTS = SourceTable(
    "restaurants",
    "restaurants/clean_restaurant_2022.csv",
    ("Name", "Average Cost", "Cuisines", "Aggregate Rating", "City"),
    dropna=True,
)
ATTRACTIONS = SourceTable(
    "attractions",
    "attractions/attractions.csv",
    ("Name", "Latitude", "Longitude", "Address", "Phone", "Website", "City"),
    dropna=True,
)
# DistanceMatrix keeps every row (no dropna) and only reads duration/distance as raw text
# (docs/fidelity/travelplanner.md §3.2).
DISTANCES = SourceTable(
    "distances",
    "googleDistanceMatrix/distance.csv",
    ("origin", "destination", "duration", "distance"),
    dropna=False,
)
CSV_TABLES = (FLIGHTS, ACCOMMODATIONS, RESTAURANTS, ATTRACTIONS, DISTANCES)

# one city per line: the agent's city validation (docs/fidelity/travelplanner.md §4.5)
CITY_SET = "background/citySet.txt"
CITY_STATES = "background/citySet_with_states.txt"  # `City<TAB>State` lines: CitySearch, evaluator
SOURCE_FILES = tuple(t.file for t in CSV_TABLES) + (CITY_SET, CITY_STATES)

SYNTHETIC_FLIGHTS = "synthetic_flights"  # same columns as flights; read only when asked for (docs/architecture.md §6)

# (table, name column, city column) of the tables the name lookups of CostEnquiry / the evaluator search.
NAME_COLUMNS = {
    "accommodations": ("NAME", "city"),
    "restaurants": ("Name", "City"),
    "attractions": ("Name", "City"),
}


def quote(column: str) -> str:
    """SQL identifier for an official column name (they contain spaces)."""
    return '"' + column.replace('"', '""') + '"'


def create_table(source: SourceTable, table: str | None = None) -> str:
    """`CREATE TABLE` for a source table (or a table of the same shape, such as synthetic flights)."""
    columns = ", ".join(quote(c) for c in source.columns)
    return f"CREATE TABLE {table or source.table} (row_label INTEGER PRIMARY KEY, {columns})"


CREATE_METADATA = "CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
# The pandas dtype of every tool column, so a Frame renders as pandas would (`131.0`, not `131`).
CREATE_COLUMN_DTYPES = (
    "CREATE TABLE column_dtypes (table_name TEXT NOT NULL, position INTEGER NOT NULL, "
    "name TEXT NOT NULL, dtype TEXT NOT NULL, PRIMARY KEY (table_name, position))"
)
CREATE_CITIES = "CREATE TABLE cities (position INTEGER PRIMARY KEY, city TEXT NOT NULL)"
CREATE_CITY_STATES = (
    "CREATE TABLE city_states (position INTEGER PRIMARY KEY, city TEXT NOT NULL, state TEXT NOT NULL)"
)

# Created after the bulk insert (faster than maintaining them row by row). The rowid is implicitly the
# last index column, so equal keys come out in file order without a sort.
CREATE_INDEXES = (
    'CREATE INDEX flights_by_route_date ON flights ("OriginCityName", "DestCityName", "FlightDate")',
    'CREATE INDEX flights_by_number ON flights ("Flight Number")',
    "CREATE INDEX accommodations_by_city ON accommodations (city)",
    'CREATE INDEX restaurants_by_city ON restaurants ("City")',
    'CREATE INDEX attractions_by_city ON attractions ("City")',
    "CREATE INDEX distances_by_route ON distances (origin, destination)",
)
CREATE_SYNTHETIC_INDEXES = (
    f"CREATE INDEX synthetic_flights_by_route_date ON {SYNTHETIC_FLIGHTS} "
    '("OriginCityName", "DestCityName", "FlightDate")',
    f'CREATE INDEX synthetic_flights_by_number ON {SYNTHETIC_FLIGHTS} ("Flight Number")',
)
