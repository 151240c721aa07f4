"""Import a TravelPlanner database folder (official layout) into one SQLite index file, atomically."""

from __future__ import annotations

import gc
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from errors import DataError
from sandbox_index import schema
from sandbox_index.atomic import atomic_build
from sandbox_index.csv_semantics import CsvScan, read_lines, scan_csv, typed_rows
from sandbox_index.schema import SourceTable
from sandbox_index.synthetic import insert_synthetic_flights


@dataclass(frozen=True, slots=True)
class BuildSummary:
    """What an import produced."""

    path: Path
    rows: dict[str, int]  # rows stored (visible to the tools) per table
    dropped: dict[str, int]  # rows dropped for a missing field (official `dropna()`) per table
    synthetic_flights: int
    seconds: float
    metadata: dict[str, str] = field(default_factory=dict)


def build_travelplanner_index(
    source_dir: str | os.PathLike[str], dest: str | os.PathLike[str], *, synthetic_flights: int | None = None,
    seed: int = 0,
) -> BuildSummary:
    """Build the TravelPlanner index from a database folder in the official layout.

    The index is built atomically (`atomic.atomic_build`): a failure (bad input, interruption) leaves `dest` as it
    was and no partial file behind.

    Args:
        source_dir: folder holding `flights/clean_Flights_2022.csv`, `accommodations/…`, `attractions/…`,
            `restaurants/…`, `googleDistanceMatrix/distance.csv` and `background/citySet*.txt`.
        dest: the index file to create or replace (`str`s from a notebook work as well as `Path`s, here and in
            `source_dir`).
        synthetic_flights: total flight rows to reach by adding synthetic rows (paper Appendix A.3);
            None or a total at or below the real row count adds none.
        seed: seed of the synthetic rows.

    Returns:
        Row counts, dropped-row counts, synthetic rows added, build time and the stored metadata.

    Raises:
        DataError: a missing file, a bad header, a malformed or undecodable row (naming file and line).
    """
    started = time.perf_counter()
    source_dir, dest = Path(source_dir), Path(dest)
    paths = {name: source_dir / name for name in schema.SOURCE_FILES}
    for path in paths.values():
        if not path.is_file():
            layout = ", ".join(schema.SOURCE_FILES)
            raise DataError(f"{path}: missing file (a TravelPlanner database folder holds {layout})")
    with atomic_build(dest, schema.SCHEMA_VERSION, cache_mib=256) as conn:  # 256 MiB for the index builds
        with _gc_paused():
            rows, dropped = _import_sources(conn, paths)
        conn.execute(schema.create_table(schema.FLIGHTS, schema.SYNTHETIC_FLIGHTS))
        added = _add_synthetic(conn, rows["flights"], synthetic_flights, seed)
        for ddl in schema.CREATE_INDEXES + schema.CREATE_SYNTHETIC_INDEXES:
            conn.execute(ddl)
        conn.execute("PRAGMA analysis_limit=1000")  # sampled statistics: seconds faster on 3.8M rows
        conn.execute("ANALYZE")
        seconds = time.perf_counter() - started
        metadata = _metadata(source_dir, paths, rows, dropped, added, seed, seconds)
        conn.executemany("INSERT INTO metadata VALUES (?, ?)", sorted(metadata.items()))
    return BuildSummary(dest, rows, dropped, added, seconds, metadata)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: the import allocates millions of short-lived lists and tuples
    (no cycles among them), and collections triggered by those allocations would double its time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _import_sources(
    conn: sqlite3.Connection, paths: dict[str, Path]
) -> tuple[dict[str, int], dict[str, int]]:
    """Create and fill every source table; return rows kept and rows dropped per table."""
    for ddl in (schema.CREATE_METADATA, schema.CREATE_COLUMN_DTYPES, schema.CREATE_CITIES,
                schema.CREATE_CITY_STATES):  # fmt: skip
        conn.execute(ddl)
    rows: dict[str, int] = {}
    dropped: dict[str, int] = {}
    for source in schema.CSV_TABLES:
        conn.execute(schema.create_table(source))
        scan = scan_csv(paths[source.file], source.columns)
        dtypes = [scan.dtypes[scan.position(c)] for c in source.columns]
        conn.executemany(
            "INSERT INTO column_dtypes VALUES (?, ?, ?, ?)",
            [(source.table, i, c, d) for i, (c, d) in enumerate(zip(source.columns, dtypes, strict=True))],
        )
        rows[source.table] = _insert(conn, source, scan)
        dropped[source.table] = scan.rows - rows[source.table]
    _import_background(conn, paths)
    return rows, dropped


def _metadata(
    source_dir: Path,
    paths: dict[str, Path],
    rows: dict[str, int],
    dropped: dict[str, int],
    synthetic: int,
    seed: int,
    seconds: float,
) -> dict[str, str]:
    metadata = {
        "schema_version": str(schema.SCHEMA_VERSION),
        "tripbench_version": _tripbench_version(),
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "build_seconds": f"{seconds:.2f}",
        "source_dir": str(source_dir.resolve()),
        "synthetic_flights": str(synthetic),
        "synthetic_seed": str(seed),
    }
    for name, path in paths.items():
        size, digest = _file_digest(path)  # a second read, but of files the OS has just cached
        metadata[f"source.{name}.bytes"] = str(size)
        metadata[f"source.{name}.sha256"] = digest
    for table, count in rows.items():
        metadata[f"rows.{table}"] = str(count)
        metadata[f"dropped.{table}"] = str(dropped[table])
    return metadata


def _insert(conn: sqlite3.Connection, source: SourceTable, scan: CsvScan) -> int:
    """Insert the rows a tool sees; return how many."""
    sql = f"INSERT INTO {source.table} VALUES ({', '.join('?' * (len(source.columns) + 1))})"
    before = conn.total_changes
    for batch in typed_rows(scan, source.columns, dropna=source.dropna):
        conn.executemany(sql, batch)
    return conn.total_changes - before


def _import_background(conn: sqlite3.Connection, paths: dict[str, Path]) -> None:
    cities = read_lines(paths[schema.CITY_SET])
    conn.executemany("INSERT INTO cities VALUES (?, ?)", enumerate(cities))
    pairs = []
    path = paths[schema.CITY_STATES]
    for number, line in enumerate(read_lines(path), start=1):
        parts = line.split("\t")
        if len(parts) != 2:  # the evaluator unpacks every line into (city, state), docs/fidelity/travelplanner.md §1.1
            raise DataError(f"{path}: line {number}: expected 'City<TAB>State', got {line!r}")
        pairs.append((number - 1, parts[0], parts[1]))
    conn.executemany("INSERT INTO city_states VALUES (?, ?, ?)", pairs)


def _add_synthetic(conn: sqlite3.Connection, real_rows: int, total: int | None, seed: int) -> int:
    if not total or total <= real_rows:
        return 0
    return insert_synthetic_flights(conn, total - real_rows, seed=seed)


def _file_digest(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            size += len(chunk)
            digest.update(chunk)
    return size, digest.hexdigest()


def _tripbench_version() -> str:
    # Imported here, like numpy in `synthetic`: a sandbox user never needs it, and it costs ~20 ms.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tripbench")
    except PackageNotFoundError:
        return "unknown"
