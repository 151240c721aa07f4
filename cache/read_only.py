"""Reading a cache whose directory cannot be written (a read-only mount, a CI artifact): `cache = "replay"` there.

diskcache opens every cache by writing its settings, which a read-only file system refuses; and SQLite cannot open a
WAL database read-only without writing its `-shm` file. `ReadOnlyDiskCache` is diskcache's own read path over a
connection opened `immutable=1` (nothing can change a file nobody can write), so hits are read exactly as diskcache
reads them, from the database and its value files.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import diskcache


def connect_immutable(path: Path) -> sqlite3.Connection:
    """A read-only connection to an SQLite file that cannot change while it is open."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, isolation_level=None,
                           check_same_thread=False)


def writable(directory: Path) -> bool:
    """Whether the cache's directory and database can be written (`os.access` says no on a read-only mount, even
    to root)."""
    database = directory / diskcache.core.DBNAME
    return os.access(directory, os.W_OK) and (not database.exists() or os.access(database, os.W_OK))


class ReadOnlyDiskCache(diskcache.Cache):  # type: ignore[misc]  # diskcache is untyped
    """A `diskcache.Cache` that only reads: `get`, `in` and `iterkeys` work, anything that writes fails.

    2026-11-25 (issue 22): built on diskcache 5.6.3's internals (`_directory`, `_local`, `_disk`, the `_con`
    property, the `statistics` and `eviction_policy` settings `get` reads):
    `tests/runner/cli/test_file_faults_cli.py` reads a read-only cache through it.
    """

    def __init__(self, directory: Path, disk: type[diskcache.Disk]) -> None:  # no super(): it would write
        self._directory = str(directory)
        self._timeout = 0
        self._local = threading.local()
        self._txn_id = None
        self._disk = disk(self._directory)
        self.statistics = 0
        self.eviction_policy = "none"
        self._connection = connect_immutable(directory / diskcache.core.DBNAME)

    @property
    def _con(self) -> sqlite3.Connection:
        return self._connection

    def close(self) -> None:
        self._connection.close()
