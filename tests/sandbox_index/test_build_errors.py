"""Bad input gives a DataError naming file and line, and never leaves a half-built index behind."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from errors import DataError
from sandbox_index import build_travelplanner_index, open_sandbox, schema

ACCOMMODATIONS = "accommodations/clean_accommodations_2022.csv"


@pytest.fixture
def database(travelplanner_data: Path, tmp_path: Path) -> Path:
    """A writable copy of the staged database folder."""
    copy = tmp_path / "database"
    shutil.copytree(
        travelplanner_data / "database", copy, ignore=shutil.ignore_patterns("*.jsonl", "sources")
    )
    for path in copy.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


def _edit(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))


def _build_fails(database: Path, tmp_path: Path, *fragments: str) -> None:
    out = tmp_path / "home"
    out.mkdir()
    with pytest.raises(DataError) as caught:
        build_travelplanner_index(database, out / "travelplanner.sqlite")
    for fragment in fragments:
        assert fragment in str(caught.value)
    assert list(out.iterdir()) == []  # no index, no temp file


def test_missing_file(database: Path, tmp_path: Path) -> None:
    (database / "attractions" / "attractions.csv").rename(database / "attractions" / "attraction.csv")
    _build_fails(database, tmp_path, "attractions/attractions.csv", "missing file")


def test_bad_header(database: Path, tmp_path: Path) -> None:
    _edit(database / ACCOMMODATIONS, b",NAME,room type,", b",Name,room type,")
    _build_fails(database, tmp_path, ACCOMMODATIONS, "line 1", "missing column 'NAME'")


def test_wrong_field_count_names_the_line(database: Path, tmp_path: Path) -> None:
    # Line 3 of the restaurants file gets an extra field.
    _edit(database / "restaurants/clean_restaurant_2022.csv", b",66,4.5\n", b",66,4.5,extra\n")
    _build_fails(database, tmp_path, "clean_restaurant_2022.csv", "line 3", "expected 6 fields, saw 7")


def test_undecodable_csv_names_the_line(database: Path, tmp_path: Path) -> None:
    _edit(database / "googleDistanceMatrix/distance.csv", b"Norfolk,Detroit", b"Norf\xffolk,Detroit")
    _build_fails(database, tmp_path, "distance.csv", "line 3", "not valid UTF-8")


def test_unreadable_and_empty_files(database: Path, tmp_path: Path) -> None:
    (database / ACCOMMODATIONS).write_bytes(b"")
    _build_fails(database, tmp_path, ACCOMMODATIONS, "empty file")


def test_bad_city_state_line(database: Path, tmp_path: Path) -> None:
    _edit(database / schema.CITY_STATES, b"\tMichigan\n", b" Michigan\n")
    _build_fails(database, tmp_path, "citySet_with_states.txt", "line 2")


def test_failed_rebuild_keeps_the_previous_index(database: Path, tmp_path: Path) -> None:
    dest = tmp_path / "home" / "travelplanner.sqlite"
    build_travelplanner_index(database, dest)
    before = dest.read_bytes()
    _edit(database / "flights/clean_Flights_2022.csv", b"F3487786,68,", b"F3487786,68,,,")
    with pytest.raises(DataError, match="line 3"):
        build_travelplanner_index(database, dest)
    assert dest.read_bytes() == before
    assert [p.name for p in dest.parent.iterdir()] == ["travelplanner.sqlite"]


def test_other_schema_version_asks_to_reimport(travelplanner_index: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    shutil.copy(travelplanner_index, old)
    with sqlite3.connect(old) as conn:
        conn.execute(f"PRAGMA user_version={schema.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(DataError, match="run `tripbench data import DIR` again"):
        open_sandbox(old)


def test_missing_or_foreign_index(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no TravelPlanner index"):
        open_sandbox(tmp_path / "absent.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(DataError, match="not a TravelPlanner index"):
        open_sandbox(junk)


def test_foreign_sqlite_file_is_not_an_index(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(DataError, match="not a TravelPlanner index"):
        open_sandbox(other)
