"""Seeded synthetic flights by the paper's recipe (Appendix A.3), to reach full scale for performance work.

The staged flights table is partial (4,111 of 3,827,361 rows). Synthetic rows follow the recipe the paper
gives for the real table: real city pairs (here: pairs of the distance table with a parseable distance),
dates 2022-03-01 to 2022-04-01, price = distance x U(0.2, 0.5). They are stored in their own table,
invisible unless the sandbox is opened with `synthetic=True`, never on an (origin, destination, date)
that has a real row, with flight numbers above every real one and row labels after every real row.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from datetime import date, timedelta

import numpy as np

from sandbox_index import schema

FIRST_DATE = date(2022, 3, 1)
DATES = tuple((FIRST_DATE + timedelta(days=i)).isoformat() for i in range(32))  # to 2022-04-01
KM_PER_MILE = 1.609344  # distance.csv is in km, the flights' Distance column in miles (spec §1.1)
MIN_MILES = 100  # the shortest real flight is 106 miles
FIRST_NUMBER = 5_000_000  # real flight numbers stay below F4,100,000; synthetic ones never collide
_CHUNK = 250_000
_KM = re.compile(r"([\d,]+(?:\.\d+)?) km")
_CLOCK = np.array([f"{m // 60:02d}:{m % 60:02d}" for m in range(1440)], dtype=object)


def _elapsed_text(minutes: int) -> str:
    return f"{minutes // 60} hours {minutes % 60} minutes"  # the real table's format, "1 hours" included


def _city_pairs(conn: sqlite3.Connection) -> tuple[list[str], list[str], np.ndarray]:
    """Distinct (origin, destination) pairs, first distance row wins, with their distance in miles."""
    seen: dict[tuple[str, str], float] = {}
    for origin, dest, text in conn.execute(
        "SELECT origin, destination, distance FROM distances WHERE distance IS NOT NULL ORDER BY row_label"
    ):
        match = _KM.fullmatch(text)
        if origin == dest or (origin, dest) in seen or not match:
            continue
        seen[(origin, dest)] = round(float(match[1].replace(",", "")) / KM_PER_MILE)
    pairs = [(pair, miles) for pair, miles in seen.items() if miles >= MIN_MILES]
    return [p[0] for p, _ in pairs], [p[1] for p, _ in pairs], np.array([m for _, m in pairs], dtype=np.float64)


def insert_synthetic_flights(conn: sqlite3.Connection, count: int, *, seed: int = 0) -> int:
    """Insert `count` seeded synthetic flights into the synthetic table; return how many were inserted.

    Rows are grouped by (origin, destination, date), so each lookup reads neighbouring pages.
    """
    origins, dests, miles = _city_pairs(conn)
    real = set(conn.execute('SELECT DISTINCT "OriginCityName", "DestCityName", "FlightDate" FROM flights'))
    free = np.array(
        [
            pair * len(DATES) + day
            for pair in range(len(origins))
            for day, when in enumerate(DATES)
            if (origins[pair], dests[pair], when) not in real
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
    first_label = conn.execute("SELECT COALESCE(MAX(row_label), -1) + 1 FROM flights").fetchone()[0]
    max_real = conn.execute(
        "SELECT MAX(CAST(substr(\"Flight Number\", 2) AS INTEGER)) FROM flights "
        "WHERE \"Flight Number\" GLOB 'F[0-9]*'"
    ).fetchone()[0]
    first_number = max(FIRST_NUMBER, (max_real or 0) + 1)
    # Values take the dtypes pandas gave the real columns, so a Frame mixing both renders alike.
    dtypes = dict(conn.execute("SELECT name, dtype FROM column_dtypes WHERE table_name = 'flights'").fetchall())
    numeric = (float if dtypes["Price"] == "float" else int, int if dtypes["Distance"] == "int" else float)
    sql = f"INSERT INTO {schema.SYNTHETIC_FLIGHTS} VALUES ({', '.join('?' * 10)})"
    conn.executemany(sql, _rows(rng, slot, departure, miles, (origins, dests), first_label, first_number, numeric))
    return count


def _rows(
    rng: np.random.Generator,
    slot: np.ndarray,
    departure: np.ndarray,
    miles: np.ndarray,
    cities: tuple[list[str], list[str]],
    first_label: int,
    first_number: int,
    numeric: tuple[type, type],
) -> Iterator[tuple[object, ...]]:
    """Rows in the flights column order, built a chunk at a time with vectorised numpy."""
    origin_names, dest_names = (np.array(names, dtype=object) for names in cities)
    as_price, as_distance = numeric
    date_names = np.array(DATES, dtype=object)
    for start in range(0, slot.size, _CHUNK):
        pair, day = np.divmod(slot[start : start + _CHUNK], len(DATES))
        size = pair.size
        distance = miles[pair]
        price = np.maximum(1, (distance * rng.uniform(0.2, 0.5, size)).astype(np.int64))
        # Roughly the real table's fit: 51 min + 0.11 min per mile, with some spread.
        elapsed = (40 + 0.11 * distance + rng.integers(0, 25, size)).astype(np.int64)
        dep = departure[start : start + _CHUNK]
        yield from zip(
            range(first_label + start, first_label + start + size),
            (f"F{n}" for n in range(first_number + start, first_number + start + size)),
            map(as_price, price.tolist()),
            _CLOCK[dep],
            _CLOCK[(dep + elapsed) % 1440],
            (_elapsed_text(m) for m in elapsed.tolist()),
            date_names[day],
            origin_names[pair],
            dest_names[pair],
            map(as_distance, distance.tolist()),
            strict=True,
        )
