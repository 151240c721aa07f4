"""Seeded synthetic flights by the paper's recipe (Appendix A.3), to reach full scale for performance work.

The staged flights table is partial (4,111 of 3,827,361 rows). Synthetic rows follow the recipe the paper
gives for the real table: real city pairs (here: pairs of the distance table with a parseable distance),
dates 2022-03-01 to 2022-04-01, price = distance x U(0.2, 0.5). They are stored in their own table,
invisible unless the sandbox is opened with `synthetic=True`, never on an (origin, destination, date)
that has a real row, with flight numbers above every real one and row labels after every real row.

Speed (3.8M rows in seconds): numpy draws every random number at once and packs each row's numbers into
one integer; SQLite receives a chunk as one JSON array and builds the text columns itself in C
(`json_each` and joins on small lookup tables), so no Python code runs per row.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import date, timedelta

import orjson

from sandbox_index import schema

FIRST_DATE = date(2022, 3, 1)
DATES = tuple((FIRST_DATE + timedelta(days=i)).isoformat() for i in range(32))  # to 2022-04-01
# distance.csv is in km, the flights' Distance column in miles (docs/fidelity/travelplanner.md §1.1)
KM_PER_MILE = 1.609344
MIN_MILES = 100  # the shortest real flight is 106 miles
FIRST_NUMBER = 5_000_000  # real flight numbers stay below F4,100,000; synthetic ones never collide
_KM = re.compile(r"([\d,]+(?:\.\d+)?) km")
_CHUNK = 500_000
# A row packs into code = ((slot * DAY + departure) * DAY + elapsed) * PRICES + price.
_DAY = 1440  # minutes: departure and elapsed time
_PRICES = 1 << 16

# Unpacks a chunk of codes and writes rows in the flights column order. CROSS JOIN keeps the JSON array as
# the outer loop (one pass, in order); clock texts come from a 1,440-row table (faster than printf).
_INSERT = f"""
WITH drawn AS (
    SELECT key, value / {_PRICES} / {_DAY} / {_DAY} AS slot, value / {_PRICES} / {_DAY} % {_DAY} AS departure,
           value / {_PRICES} % {_DAY} AS elapsed, value % {_PRICES} AS price
    FROM json_each(:codes)
)
INSERT INTO {schema.SYNTHETIC_FLIGHTS}
SELECT :first_label + key, 'F' || (:first_number + key), {{price}}, dep.hhmm, arr.hhmm, span.span,
       synthetic_dates.date, synthetic_pairs.origin, synthetic_pairs.destination, synthetic_pairs.miles
FROM drawn
CROSS JOIN synthetic_clock AS dep ON dep.minute = drawn.departure
CROSS JOIN synthetic_clock AS arr ON arr.minute = (drawn.departure + drawn.elapsed) % {_DAY}
CROSS JOIN synthetic_clock AS span ON span.minute = drawn.elapsed
CROSS JOIN synthetic_pairs ON synthetic_pairs.pair = drawn.slot / {len(DATES)}
CROSS JOIN synthetic_dates ON synthetic_dates.day = drawn.slot % {len(DATES)}
"""


def _city_pairs(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """Distinct (origin, destination, miles), first distance row wins, sorted like the route index."""
    seen: dict[tuple[str, str], int] = {}
    for origin, dest, text in conn.execute(
        "SELECT origin, destination, distance FROM distances WHERE distance IS NOT NULL ORDER BY row_label"
    ):
        match = _KM.fullmatch(text)
        if origin == dest or (origin, dest) in seen or not match:
            continue
        seen[(origin, dest)] = round(float(match[1].replace(",", "")) / KM_PER_MILE)
    return sorted((o, d, miles) for (o, d), miles in seen.items() if miles >= MIN_MILES)


def insert_synthetic_flights(conn: sqlite3.Connection, count: int, *, seed: int = 0) -> int:
    """Insert `count` seeded synthetic flights into the synthetic table; return how many were inserted.

    Rows come grouped by (origin, destination, date) and sorted by departure inside a group, so a
    lookup reads neighbouring pages.
    """
    # Imported here: numpy takes longer to import than a cold open and first query of the sandbox take in
    # all, and every process that opens a sandbox imports this module.
    import numpy as np

    pairs = _city_pairs(conn)
    real = set(conn.execute('SELECT DISTINCT "OriginCityName", "DestCityName", "FlightDate" FROM flights'))
    free = np.array(
        [
            pair * len(DATES) + day
            for pair, (origin, dest, _) in enumerate(pairs)
            for day, when in enumerate(DATES)
            if (origin, dest, when) not in real
        ],
        dtype=np.int64,
    )
    if count <= 0 or free.size == 0:
        return 0
    rng = np.random.default_rng(seed)
    slot = free[rng.integers(0, free.size, count)]
    departure = rng.integers(5 * 60, 23 * 60, count)
    order = np.lexsort((departure, slot))
    slot, departure = slot[order], departure[order]
    miles = np.array([m for _, _, m in pairs], dtype=np.float64)[slot // len(DATES)]
    price = np.maximum(1, (miles * rng.uniform(0.2, 0.5, count)).astype(np.int64))
    # Roughly the real table's fit (51 min + 0.11 min per mile), with some spread.
    elapsed = (40 + 0.11 * miles + rng.integers(0, 25, count)).astype(np.int64)
    assert price.max() < _PRICES and elapsed.max() < _DAY
    codes = ((slot * _DAY + departure) * _DAY + elapsed) * _PRICES + price

    # Values take the dtypes pandas gave the real columns, so a Frame mixing both renders alike.
    dtypes = dict(
        conn.execute("SELECT name, dtype FROM column_dtypes WHERE table_name = 'flights'").fetchall()
    )
    conn.execute("CREATE TEMP TABLE synthetic_pairs (pair INTEGER PRIMARY KEY, origin, destination, miles)")
    as_distance = int if dtypes["Distance"] == "int" else float
    conn.executemany(
        "INSERT INTO synthetic_pairs VALUES (?, ?, ?, ?)",
        [(i, o, d, as_distance(m)) for i, (o, d, m) in enumerate(pairs)],
    )
    conn.execute("CREATE TEMP TABLE synthetic_dates (day INTEGER PRIMARY KEY, date TEXT)")
    conn.executemany("INSERT INTO synthetic_dates VALUES (?, ?)", enumerate(DATES))
    # Arrival times wrap around midnight; the elapsed text keeps the real format, "1 hours" included.
    conn.execute("CREATE TEMP TABLE synthetic_clock (minute INTEGER PRIMARY KEY, hhmm TEXT, span TEXT)")
    conn.executemany(
        "INSERT INTO synthetic_clock VALUES (?, ?, ?)",
        [(m, f"{m // 60:02d}:{m % 60:02d}", f"{m // 60} hours {m % 60} minutes") for m in range(_DAY)],
    )
    first_label = conn.execute("SELECT COALESCE(MAX(row_label), -1) + 1 FROM flights").fetchone()[0]
    max_real = conn.execute(
        'SELECT MAX(CAST(substr("Flight Number", 2) AS INTEGER)) FROM flights '
        "WHERE \"Flight Number\" GLOB 'F[0-9]*'"
    ).fetchone()[0]
    first_number = max(FIRST_NUMBER, (max_real or 0) + 1)
    insert = _INSERT.format(price="CAST(price AS REAL)" if dtypes["Price"] == "float" else "price")
    for start in range(0, count, _CHUNK):
        chunk = orjson.dumps(codes[start : start + _CHUNK], option=orjson.OPT_SERIALIZE_NUMPY).decode()
        conn.execute(
            insert, {"codes": chunk, "first_label": first_label + start, "first_number": first_number + start}
        )
    for table in ("synthetic_pairs", "synthetic_dates", "synthetic_clock"):
        conn.execute(f"DROP TABLE {table}")
    return count
