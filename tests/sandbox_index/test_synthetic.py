"""Synthetic flights (paper A.3): seeded, stored apart, invisible by default, never on real triples."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sandbox_index import build_travelplanner_index, open_sandbox

REAL_FLIGHTS = 4111
TOTAL = REAL_FLIGHTS + 3000


@pytest.fixture(scope="module")
def synthetic_index(travelplanner_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("synthetic") / "travelplanner.sqlite"
    summary = build_travelplanner_index(
        travelplanner_data / "database", dest, synthetic_flights=TOTAL, seed=7
    )
    assert summary.synthetic_flights == TOTAL - REAL_FLIGHTS
    return dest


def _rows(index: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(index) as conn:
        found = conn.execute(sql, params).fetchall()
    conn.close()
    return found


def test_synthetic_rows_only_on_triples_without_real_rows(synthetic_index: Path) -> None:
    shared = _rows(
        synthetic_index,
        'SELECT COUNT(*) FROM synthetic_flights s JOIN flights f ON s."OriginCityName" = f."OriginCityName" '
        'AND s."DestCityName" = f."DestCityName" AND s."FlightDate" = f."FlightDate"',
    )
    assert shared == [(0,)]
    collisions = _rows(
        synthetic_index,
        'SELECT COUNT(*) FROM synthetic_flights s JOIN flights f ON s."Flight Number" = f."Flight Number"',
    )
    assert collisions == [(0,)]
    assert _rows(synthetic_index, 'SELECT COUNT(DISTINCT "Flight Number") FROM synthetic_flights') == [
        (3000,)
    ]
    assert _rows(synthetic_index, "SELECT MIN(row_label) FROM synthetic_flights") == [(REAL_FLIGHTS,)]


def test_synthetic_rows_follow_the_recipe(synthetic_index: Path) -> None:
    rows = _rows(
        synthetic_index, 'SELECT "Price", "Distance", "FlightDate", "DepTime" FROM synthetic_flights'
    )
    assert all(0.2 * distance - 1 <= price <= 0.5 * distance for price, distance, _, _ in rows)
    assert {date for _, _, date, _ in rows} <= {f"2022-03-{d:02d}" for d in range(1, 32)} | {"2022-04-01"}
    assert all(isinstance(price, int) and isinstance(distance, float) for price, distance, _, _ in rows)
    # Each synthetic route's distance is the distance table's km figure in miles.
    origin, dest, miles = _rows(
        synthetic_index, 'SELECT "OriginCityName", "DestCityName", "Distance" FROM synthetic_flights LIMIT 1'
    )[0]
    (km_text,) = _rows(
        synthetic_index,
        "SELECT distance FROM distances WHERE origin = ? AND destination = ? ORDER BY row_label LIMIT 1",
        (origin, dest),
    )[0]
    assert miles == round(float(km_text.removesuffix(" km").replace(",", "")) / 1.609344)


def test_invisible_unless_asked_for(synthetic_index: Path) -> None:
    origin, dest, date, number = _rows(
        synthetic_index,
        'SELECT "OriginCityName", "DestCityName", "FlightDate", "Flight Number" '
        "FROM synthetic_flights LIMIT 1",
    )[0]
    with open_sandbox(synthetic_index) as plain, open_sandbox(synthetic_index, synthetic=True) as full:
        assert len(plain.flights(origin, dest, date)) == 0
        assert len(plain.flights_by_number(number)) == 0
        assert len(full.flights(origin, dest, date)) > 0
        assert len(full.flights_by_number(number)) == 1
        # Real rows look the same either way.
        real = plain.flights("St. Petersburg", "Rockford", "2022-03-16")
        assert full.flights("St. Petersburg", "Rockford", "2022-03-16") == real
        assert plain.metadata()["synthetic_flights"] == "3000"


def test_seeded(synthetic_index: Path, travelplanner_data: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.sqlite"
    build_travelplanner_index(travelplanner_data / "database", again, synthetic_flights=TOTAL, seed=7)
    other = tmp_path / "other.sqlite"
    build_travelplanner_index(travelplanner_data / "database", other, synthetic_flights=TOTAL, seed=8)
    sql = "SELECT * FROM synthetic_flights ORDER BY row_label"
    assert _rows(again, sql) == _rows(synthetic_index, sql)
    assert _rows(other, sql) != _rows(synthetic_index, sql)


def test_a_total_at_or_below_the_real_rows_adds_nothing(travelplanner_data: Path, tmp_path: Path) -> None:
    dest = tmp_path / "travelplanner.sqlite"
    summary = build_travelplanner_index(travelplanner_data / "database", dest, synthetic_flights=REAL_FLIGHTS)
    assert summary.synthetic_flights == 0
    assert _rows(dest, "SELECT COUNT(*) FROM synthetic_flights") == [(0,)]
