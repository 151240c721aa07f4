"""The machinery every benchmark's SQLite index is built and opened with: an atomic build stamped with its schema
version, and the check of that version when an index is opened.

A build writes a temporary file beside the destination (same file system, so the final rename is atomic), with no
journal and no fsync (a crash loses only that file), in one transaction; only a build that finished is stamped with
its schema version (`PRAGMA user_version`) and renamed over the destination, so a failed or interrupted build leaves
the old index, or none, and no partial file. Readers open indexes read-only (`connections.ThreadConnections`).
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_build(dest: Path, version: int, *, cache_mib: int = 0) -> Iterator[sqlite3.Connection]:
    """A connection to a new index inside one transaction: on a clean exit it is stamped with `version`, committed,
    and renamed over `dest`; on an exception the temporary file is removed and `dest` is left as it was.

    Args:
        dest: The index file to create or replace (its folder is created).
        version: The schema version readers check (`stored_version`); never 0, which marks a file we did not build.
        cache_mib: SQLite's page cache for the build, in MiB (0: SQLite's default), for builds of millions of rows.
    """
    if version <= 0:
        raise ValueError(f"schema version {version}: versions start at 1 (0 is SQLite's default)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    temp = dest.parent / f".{dest.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        conn = sqlite3.connect(temp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            if cache_mib:
                conn.execute(f"PRAGMA cache_size=-{cache_mib * 1024}")
            conn.execute("BEGIN")
            yield conn
            conn.execute(f"PRAGMA user_version={int(version)}")
            conn.execute("COMMIT")
        finally:
            conn.close()
        os.replace(temp, dest)
    finally:
        temp.unlink(missing_ok=True)


def stored_version(path: Path) -> int | None:
    """The schema version an index file was stamped with, read-only; 0 for a SQLite file no build stamped, None for
    a file that is not SQLite (or is damaged).

    Raises:
        OSError: the file cannot be read.
    """
    try:
        probe = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return int(probe.execute("PRAGMA user_version").fetchone()[0])
        finally:
            probe.close()
    except sqlite3.DatabaseError:
        return None
