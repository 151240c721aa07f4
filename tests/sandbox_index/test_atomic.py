"""The index machinery every benchmark builds with: a build is all or nothing, and stamped with its version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sandbox_index.atomic import atomic_build, stored_version


def test_a_finished_build_replaces_the_index_and_carries_its_version(tmp_path: Path) -> None:
    dest = tmp_path / "deep" / "index.sqlite"
    for version, rows in ((1, 2), (3, 5)):
        with atomic_build(dest, version) as conn:
            conn.execute("CREATE TABLE t (x INTEGER)")
            conn.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(rows)])
        assert stored_version(dest) == version
        with sqlite3.connect(dest) as check:
            assert check.execute("SELECT COUNT(*) FROM t").fetchone() == (rows,)
        check.close()
    assert [path.name for path in dest.parent.iterdir()] == ["index.sqlite"]


def test_a_failed_build_leaves_the_old_index_and_no_partial_file(tmp_path: Path) -> None:
    dest = tmp_path / "index.sqlite"
    with atomic_build(dest, 1) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
    before = dest.read_bytes()
    with pytest.raises(RuntimeError), atomic_build(dest, 2) as conn:
        conn.execute("CREATE TABLE u (y INTEGER)")
        raise RuntimeError("a malformed row")
    assert dest.read_bytes() == before and stored_version(dest) == 1
    assert [path.name for path in tmp_path.iterdir()] == ["index.sqlite"]


def test_files_no_build_stamped(tmp_path: Path) -> None:
    (plain := tmp_path / "plain.sqlite")
    sqlite3.connect(plain).close()
    (text := tmp_path / "notes.txt").write_text("not a database, " * 100)
    assert stored_version(plain) == 0 and stored_version(text) is None
    with pytest.raises(ValueError), atomic_build(tmp_path / "x.sqlite", 0):
        pass
