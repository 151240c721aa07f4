"""Building the TravelEval index: bad rows are DataErrors naming file and line, nothing partial is left, and
`ensure_index` rebuilds only when a source changed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchmarks.traveleval import paths
from benchmarks.traveleval.sandbox.build import build_index, ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from errors import DataError


@pytest.fixture
def database(traveleval_data: Path, tmp_path: Path) -> Path:
    """A writable copy of the staged database (in the test's tmp folder)."""
    return Path(shutil.copytree(traveleval_data / "database", tmp_path / "traveleval" / "database"))


def _replace_line(path: Path, line: int, old: str, new: str) -> None:
    lines = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize(("relative", "line", "old", "new", "message"), [
    ("attractions/beijing/attractions.csv", 3, ",8:30,", ",8h30,",
     "line 3: opentime: expected a time H:MM, got '8h30'"),
    ("attractions/beijing/attractions.csv", 2, ",503,", ",free,", "line 2: price: expected a number, got 'free'"),
    ("accommodations/wuhan/accommodations.csv", 1, "king_room_stock", "king_stock", "no column 'king_room_stock'"),
    ("restaurants/beijing/restaurants_beijing.csv", 2, "401.0,", "", "line 2: 8 fields, expected 9"),
    ("intercity_transport/airplane.jsonl", 2, '"Cost": 740.0', '"Cost": "740"', "line 2: Cost: expected a number"),
    ("intercity_transport/airplane.jsonl", 3, "{", "[", "line 3: not valid JSON"),
    ("poi/beijing/poi.json", 5, "39.902895", '"north"', "entry 1: position: expected [lat, lon]"),
    ("intercity_transport/train/from_北京_to_上海.json", 7, '"06:10"', '"6 am"', "entry 1: BeginTime: expected a time"),
])
def test_a_bad_row_names_file_and_line(database: Path, tmp_path: Path, relative: str, line: int, old: str, new: str,
                                       message: str) -> None:
    _replace_line(database / relative, line, old, new)
    dest = tmp_path / "index.sqlite"
    with pytest.raises(DataError) as raised:
        build_index(database, dest)
    assert str(database / relative) in str(raised.value) and message in str(raised.value)
    assert list(tmp_path.glob("*.sqlite*")) == [] and list(tmp_path.glob(".index*")) == []


def test_categories_must_be_lists_of_text(database: Path, tmp_path: Path) -> None:
    (database / "categories.json").write_text('{"diet": "川菜"}', encoding="utf-8")
    with pytest.raises(DataError, match=r"categories\.json: expected an object of lists of text"):
        build_index(database, tmp_path / "index.sqlite")


def test_a_missing_file_is_named(database: Path, tmp_path: Path) -> None:
    (database / "poi" / "wuhan" / "poi.json").unlink()
    with pytest.raises(DataError, match=r"poi/wuhan/poi\.json: missing file"):
        build_index(database, tmp_path / "index.sqlite")
    with pytest.raises(DataError, match="not a TravelEval database folder"):
        build_index(tmp_path, tmp_path / "index.sqlite")


def test_a_failed_rebuild_keeps_the_previous_index(database: Path, tmp_path: Path) -> None:
    dest = tmp_path / "index.sqlite"
    build_index(database, dest)
    before = dest.read_bytes()
    _replace_line(database / "attractions" / "beijing" / "attractions.csv", 2, ",503,", ",x,")
    with pytest.raises(DataError):
        build_index(database, dest)
    assert dest.read_bytes() == before


def test_ensure_index_builds_once_and_again_after_a_source_changes(database: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder with no index of its own (a shared copy) is never written to: its index is built in the data home;
    a folder holding one (the data home's) keeps it up to date in place."""
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home"))
    folder = database.parent
    before = sorted(folder.rglob("*"))
    index = ensure_index(folder)
    assert index.parent == tmp_path / "home" / "indexes" and sorted(folder.rglob("*")) == before
    stamp = index.stat().st_mtime_ns
    assert ensure_index(folder) == index and index.stat().st_mtime_ns == stamp  # found again, not rebuilt
    build_index(database, paths.index_path(folder))  # as `data import` leaves the data home
    index = ensure_index(folder)
    assert index == paths.index_path(folder)
    built = index.stat().st_mtime_ns
    assert ensure_index(folder).stat().st_mtime_ns == built
    newer = index.stat().st_mtime + 10
    os.utime(database / "categories.json", (newer, newer))
    assert ensure_index(folder).stat().st_mtime_ns != built


def test_ensure_index_without_a_database_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no TravelEval database \\(run `tripbench data fetch traveleval`"):
        ensure_index(tmp_path)


def test_opening_something_else_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no TravelEval sandbox index"):
        Sandbox.open(tmp_path / "absent.sqlite")
    (tmp_path / "text.sqlite").write_text("not a database", encoding="utf-8")
    with pytest.raises(DataError, match="not a TravelEval sandbox index"):
        Sandbox.open(tmp_path / "text.sqlite")
