"""What the team database could not take while it was away: kept on the run's disk until it can.

A call answered during an outage longer than `[team] outage_s` cannot reach the team's cache; dropped, it would be
paid again by the same command's resume. Its settlement cannot reach the budget either; dropped, its worst case would
hold the cap until the worker is declared dead. The spool keeps both in one SQLite file in the run directory (entries
as the team's cache stores them, settlements as charge and cost) and hands them to the database at the next chance
(the next read of the cache, the next session's start): nothing paid is lost to an outage.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

Row = tuple[str, bytes, float | None]
"""A cache row as `tb_cache` stores it: key, compressed entry, cost."""
Settlement = tuple[int, Decimal | None]
"""A team charge and what it cost (None: it may have been billed, no answer seen: orphan it)."""


class Spool:
    """Rows waiting for the team database.

    Args:
        path: The spool's SQLite file (made on the first row kept).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # kept from the gateway's writer thread, handed over from the loop's
        self._connection: sqlite3.Connection | None = None
        self.pending = path.is_file() and bool(self.rows())
        """Whether cache entries wait."""

    def _connected(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._connection.execute("CREATE TABLE IF NOT EXISTS unwritten "
                                     "(key TEXT PRIMARY KEY, entry BLOB NOT NULL, cost_usd REAL)")
            self._connection.execute("CREATE TABLE IF NOT EXISTS unsettled (charge INTEGER PRIMARY KEY, cost TEXT)")
        return self._connection

    def keep(self, rows: Sequence[Row]) -> None:
        """Keeps rows the database could not take (a key kept already keeps its first answer)."""
        with self._lock:
            self._connected().executemany("INSERT OR IGNORE INTO unwritten VALUES (?, ?, ?)", rows)
            self.pending = True

    def rows(self) -> list[Row]:
        """Every row kept."""
        with self._lock:
            return [(str(key), bytes(entry), cost) for key, entry, cost in
                    self._connected().execute("SELECT key, entry, cost_usd FROM unwritten ORDER BY key")]

    def written(self, keys: Sequence[str]) -> None:
        """Forgets rows the database took."""
        with self._lock:
            self._connected().executemany("DELETE FROM unwritten WHERE key = ?", [(key,) for key in keys])
            left = self._connected().execute("SELECT count(*) FROM unwritten").fetchone()[0]
            self.pending = bool(left)

    def keep_settlements(self, settlements: Sequence[Settlement]) -> None:
        """Keeps settlements the database could not take."""
        with self._lock:
            rows = [(charge, None if cost is None else str(cost)) for charge, cost in settlements]
            self._connected().executemany("INSERT OR REPLACE INTO unsettled VALUES (?, ?)", rows)

    def settlements(self) -> list[Settlement]:
        """Every settlement kept (none when the file was never made)."""
        if not self.path.is_file():
            return []
        with self._lock:
            return [(int(charge), None if cost is None else Decimal(cost))
                    for charge, cost in self._connected().execute("SELECT charge, cost FROM unsettled ORDER BY 1")]

    def settled(self, charges: Sequence[int]) -> None:
        """Forgets settlements the database took."""
        with self._lock:
            self._connected().executemany("DELETE FROM unsettled WHERE charge = ?", [(c,) for c in charges])

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
