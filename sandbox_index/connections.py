"""One read-only SQLite connection per thread over an immutable index file, all closed together.

The sandboxes are shared by every rollout of a run and read from worker threads; a `sqlite3.Connection` must not be
used by two threads at once, so each thread opens its own the first time it reads.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Self


def bindable(*args: object) -> bool:
    """True when every argument can be bound as SQLite text: a str encodable as UTF-8.

    Lookup arguments are untrusted model text; a lone surrogate (e.g. `'\\ud800'`) cannot be encoded, and such a
    value can equal nothing in an index, so the lookup is simply empty.
    """
    for arg in args:
        if not isinstance(arg, str):
            return False
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True

class ThreadConnections:
    """The connections of one index file, one per thread, opened `immutable=1` (never written while open)."""

    def __init__(self, path: Path, setup: Callable[[sqlite3.Connection], None] | None = None) -> None:
        self._uri = f"{path.resolve().as_uri()}?immutable=1"
        self._setup = setup
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: list[sqlite3.Connection] = []

    def get(self) -> sqlite3.Connection:
        """This thread's connection, opened (and set up) on its first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self._uri, uri=True, check_same_thread=False)
            if self._setup is not None:
                self._setup(conn)
            self._local.conn = conn
            with self._lock:
                self._opened.append(conn)
        return conn

    def close(self) -> None:
        """Close every thread's connection; a later `get` opens a new one."""
        with self._lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()
        self._local = threading.local()


class IndexReader:
    """What every benchmark's sandbox is over its index file: the path, a connection per thread, `close` (or `with`)."""

    def __init__(self, path: Path, setup: Callable[[sqlite3.Connection], None] | None = None) -> None:
        self.path = path
        self._connections = ThreadConnections(path, setup)

    def _conn(self) -> sqlite3.Connection:
        return self._connections.get()

    def close(self) -> None:
        """Close every thread's connection (the sandbox must not be used afterwards)."""
        self._connections.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
