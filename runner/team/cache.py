"""The LLM cache in the team database: the gateway's `CallCache`, keyed exactly as the disk cache (`cache.keys`).

An entry is the disk cache's JSON (`CacheEntry.stored()`), zlib-compressed, in `tb_cache`; every read is verified
as the disk cache's are: its fields must hash to the key it was found under, else it is a miss (said once, counted
in `refused`). The first writer wins (`ON CONFLICT DO NOTHING`), so two machines that made the same call keep one
answer; cache mode `refresh` overwrites instead. The gateway already writes in batches (`set_many`, all the entries
queued meanwhile, from a thread): one statement per batch here.

Reads run on the event loop's thread and writes in the gateway's writer thread, each on a connection of its own.
A database that cannot be reached while reading is a miss: the call then goes to the spend cap, which fails closed.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Mapping, Sequence

import orjson
import psycopg

from cache import CacheEntry, digest
from cache.refusals import Refusals
from runner.team.database import TeamUnavailable, connect, public

log = logging.getLogger(__name__)


class TeamCache:
    """The team's LLM cache.

    Args:
        url: The team database's connection string.
        overwrite: Replace entries already stored (cache mode `refresh`) instead of keeping the first.
    """

    def __init__(self, url: str, *, overwrite: bool = False) -> None:
        self.location = public(url)
        self._refuse = Refusals(self.location)
        self._url = url
        self._overwrite = overwrite
        self._reader: psycopg.Connection[tuple[object, ...]] | None = connect(url)
        self._writer: psycopg.Connection[tuple[object, ...]] | None = None
        self._unreadable = False
        self._lock = threading.Lock()  # the reader: `peek` from the loop, `get` from a dry run's thread

    def get(self, key: str) -> CacheEntry | None:
        return self.peek(key)

    def peek(self, key: str) -> CacheEntry | None:
        """The entry under `key`, verified, or None."""
        return self.get_many((key,)).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        """The entries found under `keys`, verified, in one query."""
        try:
            with self._lock:
                if self._reader is None or self._reader.closed:  # lost with the server: a new one once it is back
                    self._reader = connect(self._url)
                rows = self._reader.execute("SELECT key, entry FROM tb_cache WHERE key = ANY(%s)",
                                            (list(dict.fromkeys(keys)),)).fetchall()
        except (psycopg.Error, TeamUnavailable) as exc:
            if not self._unreadable:  # said once an outage, not once a call
                log.warning("%s: the cache cannot be read (%s): misses until it can", self.location,
                            str(exc).strip())
            self._unreadable = True
            return {}
        self._unreadable = False
        found = {}
        for key, stored in rows:
            assert isinstance(key, str) and isinstance(stored, bytes)  # the columns' types: text, bytea
            try:
                entry = CacheEntry.from_json(orjson.loads(zlib.decompress(stored)))
            except (zlib.error, orjson.JSONDecodeError, ValueError, TypeError) as exc:
                self._refuse(key, f"unreadable ({type(exc).__name__}: {exc})")
                continue
            if digest(entry.fields) != key:
                self._refuse(key, "the answer to another request (its fields hash to another key)")
                continue
            found[key] = entry
        return found

    @property
    def refused(self) -> int:
        """Entries not served: unreadable, or their fields hash to another key."""
        return self._refuse.count

    def set_many(self, entries: Mapping[str, CacheEntry]) -> None:
        """Stores the entries in one statement (the first writer of a key wins unless `overwrite`).

        Raises:
            TeamUnavailable: the database cannot be reached (the gateway says the entries were not written).
        """
        if not entries:
            return
        rows = [(key, zlib.compress(orjson.dumps(entry.stored()), 1), entry.cost_usd) for key, entry in entries.items()]
        conflict = ("DO UPDATE SET entry = excluded.entry, cost_usd = excluded.cost_usd, created = now()"
                    if self._overwrite else "DO NOTHING")
        for attempt in (1, 2):  # a connection the server dropped is found dead by using it: once more on a new one
            try:
                if self._writer is None or self._writer.closed:
                    self._writer = connect(self._url)
                with self._writer.transaction(), self._writer.cursor() as cursor:
                    cursor.executemany(f"INSERT INTO tb_cache (key, entry, cost_usd) VALUES (%s, %s, %s) "
                                       f"ON CONFLICT (key) {conflict}", rows)
                return
            except psycopg.Error as exc:
                if attempt == 2 or (self._writer is not None and not self._writer.closed):
                    raise TeamUnavailable(f"{self.location}: {str(exc).strip()}") from None

    def close(self) -> None:
        for connection in (self._reader, self._writer):
            if connection is not None:
                connection.close()
