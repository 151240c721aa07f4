"""The LLM cache in the team database: the gateway's `CallCache`, keyed exactly as the disk cache (`cache.keys`).

An entry is the disk cache's JSON (`CacheEntry.stored()`), zlib-compressed, in `tb_cache`; every read is verified
as the disk cache's are: its fields must hash to the key it was found under, else it is a miss (said once, counted
in `refused`). The first writer wins (`ON CONFLICT DO NOTHING`), so two machines that made the same call keep one
answer; cache mode `refresh` overwrites instead. The gateway already writes in batches (`set_many`, all the entries
queued meanwhile, from a thread): one statement per batch here.

Reads run on the event loop's thread and writes in the gateway's writer thread, each on a connection of its own.
A read that cannot reach the database is never a miss (a miss is a call paid): it raises `TeamUnavailable` with the
pause before trying again, which the gateway's reads wait out (`runner.ladder.cache_reads`) until the outage passes
its limit. A write waits the outage out in its thread; the answer's caller waits for it; past the limit the entries
are kept in the run's spool (`runner.team.spool`) and written at the next chance, so nothing paid is paid again.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson
import psycopg

from cache import CacheEntry, digest
from cache.refusals import Refusals
from runner.team.database import TeamUnavailable, connect, public
from runner.team.link import Outage, lost_connection
from runner.team.spool import Row, Spool

log = logging.getLogger(__name__)


class TeamCache:
    """The team's LLM cache.

    Args:
        url: The team database's connection string.
        overwrite: Replace entries already stored (cache mode `refresh`) instead of keeping the first.
        outage_s: How long an unreachable database is waited for (unless `outage` is given).
        outage: The process's outage, shared with its team (`Team.outage`), so that closing stops every wait.
        spool: Where entries the database could not take are kept until it can (None: they are lost, and said so).
    """

    def __init__(self, url: str, *, overwrite: bool = False, outage_s: float | None = None,
                 outage: Outage | None = None, spool: Path | None = None) -> None:
        self.location = public(url)
        self._refuse = Refusals(self.location)
        self._url = url
        self._overwrite = overwrite
        self._outage = outage or (Outage(url) if outage_s is None else Outage(url, outage_s))
        self._reader: psycopg.Connection[tuple[object, ...]] | None = connect(url)
        self._writer: psycopg.Connection[tuple[object, ...]] | None = None
        self._failed_reads = 0  # in a row: the backoff of the next pause
        self._lock = threading.Lock()  # the reader: `peek` from the loop, `get` from a dry run's thread
        self._spool = Spool(spool) if spool is not None else None
        if self._spool is not None and self._spool.pending:  # an earlier session's, kept through an outage
            with self._lock:
                self._hand_over(self._reader)

    def get(self, key: str) -> CacheEntry | None:
        return self.peek(key)

    def peek(self, key: str) -> CacheEntry | None:
        """The entry under `key`, verified, or None."""
        return self.get_many((key,)).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        """The entries found under `keys`, verified, in one query.

        Raises:
            TeamUnavailable: the database cannot be reached; `retry_after_s` says when to try again (None: the
                outage passed its limit).
        """
        for fresh in (False, True):  # a connection the server dropped is found dead by using it: once more anew
            try:
                with self._lock:
                    if fresh or self._reader is None or self._reader.closed or self._reader.broken:
                        if self._reader is not None:
                            self._reader.close()
                        self._reader = None
                        self._reader = connect(self._url)
                    if self._spool is not None and self._spool.pending:
                        self._hand_over(self._reader)
                    rows = self._reader.execute("SELECT key, entry FROM tb_cache WHERE key = ANY(%s)",
                                                (list(dict.fromkeys(keys)),)).fetchall()
                break
            except (psycopg.Error, TeamUnavailable) as exc:
                if not lost_connection(exc):
                    raise TeamUnavailable(f"{self.location}: the cache cannot be read ({str(exc).strip()})") from None
                if fresh:
                    self._failed_reads += 1
                    raise self._outage.unavailable(exc, self._failed_reads - 1) from None
        self._failed_reads = 0
        self._outage.over()
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
            TeamUnavailable: the database stayed unreachable past the outage limit (the gateway says the entries
                were not written).
        """
        if not entries:
            return
        rows = [(key, zlib.compress(orjson.dumps(entry.stored()), 1), entry.cost_usd) for key, entry in entries.items()]
        attempt = 0
        while True:  # in the gateway's writer thread: waiting here holds back only the answers being written
            try:
                if self._writer is None or self._writer.closed or self._writer.broken:
                    if self._writer is not None:
                        self._writer.close()
                    self._writer = None
                    self._writer = connect(self._url)
                self._insert(self._writer, rows)
                return
            except (psycopg.Error, TeamUnavailable) as exc:
                if not lost_connection(exc):
                    raise TeamUnavailable(f"{self.location}: {str(exc).strip()}") from None
                unavailable = self._outage.unavailable(exc, attempt)
                if unavailable.retry_after_s is None:
                    if self._spool is None:
                        raise unavailable from None
                    self._spool.keep(rows)
                    log.warning("%s: %d new entries kept in %s until the database is back (%s)", self.location,
                                len(rows), self._spool.path, unavailable)
                    return
                time.sleep(unavailable.retry_after_s)
                attempt += 1

    def _insert(self, connection: psycopg.Connection[tuple[object, ...]], rows: Sequence[Row]) -> None:
        conflict = ("DO UPDATE SET entry = excluded.entry, cost_usd = excluded.cost_usd, created = now()"
                    if self._overwrite else "DO NOTHING")
        with connection.transaction(), connection.cursor() as cursor:
            cursor.executemany(f"INSERT INTO tb_cache (key, entry, cost_usd) VALUES (%s, %s, %s) "
                               f"ON CONFLICT (key) {conflict}", rows)

    def _hand_over(self, connection: psycopg.Connection[tuple[object, ...]] | None) -> None:
        """Writes the spool's entries to the database (raising what the connection raises), then forgets them."""
        assert self._spool is not None and connection is not None
        rows = self._spool.rows()
        self._insert(connection, rows)
        self._spool.written([key for key, _, _ in rows])
        log.warning("%s: %d entries kept through an outage were written", self.location, len(rows))

    def close(self) -> None:
        for connection in (self._reader, self._writer):
            if connection is not None:
                connection.close()
        if self._spool is not None:
            self._spool.close()
