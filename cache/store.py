"""The on-disk cache of LLM calls: a typed wrapper over `diskcache.Cache` holding JSON bytes, never pickles.

One entry per cache key: the response, the key's fields (what `cache explain` diffs) and what the call cost (what a
hit saves), stored compact (`cache.compact`: prompts in shared chunks, zlib); whole entries of earlier versions are
still read. Like diskcache's persisted settings, the directory records the key scheme it was written with, and a
tripbench using another scheme refuses it rather than silently missing on every call. Hit and miss counters and the
dollars saved are kept in memory and added to the directory's totals on `flush()`/`close()`, so a hit costs one
SQLite read and no write.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import diskcache
import orjson
from diskcache.core import MODE_BINARY, MODE_RAW

from cache import compact
from cache.keys import KEY_SCHEME, digest
from cache.read_only import ReadOnlyDiskCache, connect_immutable, writable
from cache.refusals import Refusals
from errors import DataError
from providers.interface import ChatResponse, Usage

log = logging.getLogger(__name__)

_META_SCHEME = "meta:scheme"
_META_HITS = "meta:hits"
_META_MISSES = "meta:misses"
_META_SAVED = "meta:saved_microusd"  # an integer, so diskcache's atomic `incr` can add to it across processes
_META_KEYS = (_META_SCHEME, _META_HITS, _META_MISSES, _META_SAVED)
DB_FILE = "cache.db"
"""diskcache's database file in the directory."""
_KEYS_PER_QUERY = 500
"""Keys one read statement asks for (SQLite allows 999 parameters in older builds)."""


class CorruptEntry(ValueError):
    """A stored value that is not one of our entries (bad JSON, wrong shape, or a pickle)."""


class _BytesDisk(diskcache.Disk):
    """diskcache's `Disk`, refusing to write or read anything but bytes and integers: no pickle, either way."""

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
        if type(value) not in (bytes, int):
            raise TypeError(f"the LLM cache stores bytes and integers only, not {type(value).__name__}")
        return super().store(value, read, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode not in (MODE_RAW, MODE_BINARY):
            raise CorruptEntry(f"entry stored in diskcache mode {mode}, not bytes")
        return super().fetch(mode, filename, value, read)


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One stored call."""

    fields: dict[str, Any]
    """The key's fields (`cache.keys.key_fields`): what made the key, for `cache explain`."""
    response: ChatResponse
    cost_usd: float | None
    """What the original provider call cost (None: no price known); each hit saves it again."""
    created: float
    """Unix time the entry was written."""

    def stored(self) -> dict[str, Any]:
        """The entry as JSON-ready values (orjson writes the nested `ChatResponse` and `Usage` dataclasses)."""
        return {"fields": self.fields, "response": self.response, "cost_usd": self.cost_usd, "created": self.created}

    @classmethod
    def from_json(cls, raw: Any) -> CacheEntry:
        """An entry from its stored JSON; raises `CorruptEntry` for anything that is not one."""
        try:
            response = dict(raw["response"])
            usage = Usage(**response.pop("usage"))
            cost = raw["cost_usd"]
            entry = cls(
                fields=dict(raw["fields"]),
                response=ChatResponse(**response, usage=usage),
                cost_usd=None if cost is None else float(cost),
                created=float(raw["created"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptEntry(str(exc)) from exc
        if not isinstance(entry.response.text, str):
            raise CorruptEntry("response.text is not a string")
        return entry


@dataclass(frozen=True, slots=True)
class CacheStats:
    """What `tripbench cache stats` prints."""

    entries: int
    size_bytes: int
    hits: int
    misses: int
    saved_usd: float


class WrongKey(Exception):
    """A compact entry found under a key other than the one it was written under."""


class CacheDamaged(DataError):
    """The cache's database cannot be read (a truncated or overwritten file)."""

    def __init__(self, directory: Path, error: sqlite3.DatabaseError) -> None:
        super().__init__(f"{directory / DB_FILE}: the cache database is damaged ({error}); `tripbench cache verify "
                         f"--repair --cache-dir {directory}` moves it aside and starts a fresh one")
        self.error = str(error)
        """What SQLite said of it."""


class CacheUnavailable(DataError):
    """The cache's database cannot be used now (locked by another process past diskcache's 60 s wait, a full disk,
    an I/O error): nothing was changed in it."""


_CORRUPTION = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def corrupt(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file itself is bad (malformed pages, not a database), not that it cannot be used now
    (locked, full, an I/O error, read-only), which another try or more space cures."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _CORRUPTION


@dataclass(frozen=True, slots=True)
class BadEntry:
    """An entry `verify` found wrong: `unreadable` (not one of our entries, a value file missing or cut short) or
    `mismatched` (a well-formed entry whose fields hash to another key: it would answer the wrong request)."""

    key: str
    reason: str
    detail: str


def move_aside(directory: Path) -> Path:
    """Renames a damaged cache database (and its WAL files) out of the way, so the next `CacheStore` of `directory`
    starts a fresh one; returns its new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved, copies = directory / f"{DB_FILE}.damaged-{stamp}", 1
    while moved.exists():  # moved aside once already this second: never over an earlier copy
        copies += 1
        moved = directory / f"{DB_FILE}.damaged-{stamp}-{copies}"
    for suffix in ("", "-wal", "-shm"):
        source = directory / f"{DB_FILE}{suffix}"
        if source.exists():
            source.rename(moved.with_name(moved.name + suffix))
    return moved


class CacheStore:
    """A directory of cached calls; thread- and process-safe (diskcache), usable as a context manager.

    Every entry read is verified: its stored fields must hash to the key it was found under, else it is a miss.
    Damage found while running (a page of the database unreadable, a value file gone) is said once, with the path,
    and the cache then serves misses and stores nothing more: calls are paid again, never answered wrongly.

    Args:
        directory: Where the cache lives; created if missing.
        repair: A database that cannot be opened is moved aside (`cache.db.damaged-<time>`, said once) and a fresh
            one started; False raises `CacheDamaged` instead (for `tripbench cache verify`, which reports it).

    Raises:
        DataError: The directory was written with another key scheme.
        CacheDamaged: The database cannot be opened and `repair` is False.
    """

    def __init__(self, directory: Path, *, repair: bool = True) -> None:
        self.directory = Path(directory)
        self.damaged: str | None = None
        """Why reads and writes stopped (damage found while running); None while the cache is sound."""
        self._refuse = Refusals(f"cache {self.directory}", ": `tripbench cache verify --repair --cache-dir "
                                f"{self.directory}` drops them")
        self._chunks_written: set[int] = set()
        """Chunks this process stored since the sweep count `_sweeps_seen`: a prompt's next step re-sends most of
        them. A sweep (in any process) may delete them, so a new count empties it."""
        self._sweeps_seen = 0
        self._lock = threading.Lock()
        self.read_only = not writable(self.directory) and (self.directory / DB_FILE).is_file()
        """Opened from a directory that cannot be written: entries are read, nothing is stored."""
        try:
            self._cache, self._chunks, stored = self._open()
        except (sqlite3.DatabaseError, OSError) as exc:  # OSError: a directory that cannot be made
            if not isinstance(exc, sqlite3.DatabaseError) or not corrupt(exc):
                raise CacheUnavailable(f"{self.directory / DB_FILE}: the cache cannot be used now ({exc}); it was "
                                       "left as it is. Try again once the other process or the disk lets it, or "
                                       "run with `cache = \"off\"`") from exc
            if not repair:
                raise CacheDamaged(self.directory, exc) from exc
            moved = move_aside(self.directory)
            log.warning("cache %s is damaged (%s): moved to %s and a fresh cache started; the calls it held will "
                        "be paid again. Delete the damaged copy when you no longer need it.",
                        self.directory / DB_FILE, exc, moved)
            self._cache, self._chunks, stored = self._open()
        if stored != KEY_SCHEME.encode():
            found = stored.decode(errors="replace") if isinstance(stored, bytes) else repr(stored)
            self._cache.close()
            self._chunks.close()
            raise DataError(
                f"{self.directory}: cache written with key scheme {found}, this tripbench uses {KEY_SCHEME}; "
                "point --cache-dir elsewhere or delete the directory"
            )
        self._hits = self._misses = self._saved_microusd = 0
        self._unavailable = False  # a lock or a full disk was said
        self.counting = True
        """Whether `get` counts hits and misses; a dry run turns it off, its probes are not uses of the cache."""

    def _open(self) -> tuple[diskcache.Cache, sqlite3.Connection, Any]:
        """The diskcache, a connection to its database for the chunk table, and the key scheme the cache records
        (written now for a new cache)."""
        # No size-based eviction: diskcache would cull our counters with the entries; `prune()` is explicit. Nothing
        # expires either, so `cull_limit=0` spares every write diskcache's two culling queries.
        if self.read_only:
            cache = ReadOnlyDiskCache(self.directory, _BytesDisk)
            log.warning("cache %s is read-only: calls are answered from it, new answers are not stored",
                        self.directory)
            try:
                return cache, connect_immutable(self.directory / DB_FILE), cache.get(_META_SCHEME)
            except sqlite3.DatabaseError:
                cache.close()
                raise
        cache = diskcache.Cache(str(self.directory), disk=_BytesDisk, eviction_policy="none", cull_limit=0)
        try:
            cache.add(_META_SCHEME, KEY_SCHEME.encode())
            scheme = cache.get(_META_SCHEME)
            chunks = sqlite3.connect(self.directory / DB_FILE, isolation_level=None, check_same_thread=False,
                                     timeout=60)
        except sqlite3.DatabaseError:
            cache.close()
            raise
        try:
            chunks.execute(compact.CHUNK_TABLE)
            chunks.execute(compact.SWEEP_TABLE)
        except sqlite3.DatabaseError:
            chunks.close()
            cache.close()
            raise
        return cache, chunks, scheme

    def _fail(self, exc: sqlite3.Error) -> None:
        """Stops using a cache found damaged while running, and says so once; an error that does not say the file is
        bad (locked, full) only fails what was asked (a miss, entries not stored), said once."""
        if not corrupt(exc):
            if not self._unavailable:
                self._unavailable = True
                log.warning("cache %s cannot be used now (%s: %s): calls it cannot answer are misses, entries it "
                            "cannot store are not stored; the cache is left as it is", self.directory,
                            type(exc).__name__, exc)
            return
        if self.damaged is None:
            self.damaged = f"{type(exc).__name__}: {exc}"
            log.warning("cache %s is damaged (%s): serving misses and storing nothing more for the rest of this run; "
                        "`tripbench cache verify --repair --cache-dir %s` moves it aside and starts a fresh one",
                        self.directory, self.damaged, self.directory)

    @property
    def location(self) -> str:
        """The cache's folder, for messages."""
        return str(self.directory)

    def get(self, key: str) -> CacheEntry | None:
        """The entry under `key`, or None; counted as a hit or a miss (a corrupt entry is a miss) when `counting`."""
        return self.get_many((key,)).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        """The entries found under `keys`, read in one query (a missing or refused one is absent); every key is
        counted as a hit or a miss when `counting`, as many times as it is listed."""
        found = self._peek_many(keys)
        if self.counting:
            with self._lock:
                for key in keys:
                    if (entry := found.get(key)) is None:
                        self._misses += 1
                    else:
                        self._hits += 1
                        self._saved_microusd += round((entry.cost_usd or 0.0) * 1e6)
        return found

    def peek(self, key: str, *, fields: bool = False) -> CacheEntry | None:
        """The entry under `key`, verified, or None, without counting; a corrupt or mismatched entry is logged.

        Args:
            key: The key.
            fields: Rebuild the entry's whole fields (`explain`, `verify`); without it a compact entry's fields hold
                its chunks' keys, and the check is the key written inside the entry (`cache.compact`).
        """
        return self._peek_many((key,), fields=fields).get(key)

    def peek_many(self, keys: Sequence[str], *, fields: bool = False) -> dict[str, CacheEntry]:
        """`peek` for several keys, in one query, each chunk their fields share read once (`tripbench pack`: an
        agent's calls resend the same chunks)."""
        return self._peek_many(keys, fields=fields)

    def _peek_many(self, keys: Sequence[str], *, fields: bool = False) -> dict[str, CacheEntry]:
        """`peek` for several keys, in one query."""
        if self.damaged is not None:
            return {}
        found: dict[str, CacheEntry] = {}
        chunk = functools.cache(self._chunk)
        try:
            for key, row in self._rows(keys).items():
                try:
                    entry, whole = self._decode(key, self._value(key, row), fields=fields, chunk=chunk)
                except (CorruptEntry, OSError) as exc:  # not one of our entries, its value file gone or cut short
                    self._refuse(key, f"unreadable ({type(exc).__name__}: {exc})")
                    continue
                except WrongKey:
                    self._refuse(key, "the answer to another request (written under another key)")
                    continue
                if whole and digest(entry.fields) != key:
                    self._refuse(key, "the answer to another request (its fields hash to another key)")
                    continue
                found[key] = entry
        except sqlite3.Error as exc:  # a damaged page of the database
            self._fail(exc)
            return {}
        return found

    @property
    def refused(self) -> int:
        """Entries not served: unreadable, or their fields hash to another key."""
        return self._refuse.count

    def _rows(self, keys: Sequence[str]) -> dict[str, tuple[int, str | None, Any]]:
        """diskcache's (mode, filename, value) of the entries under `keys` that are stored, by key.

        diskcache's own `get` costs a statement, its locks and a connection check per key; a replay asks for the
        next call of every rollout in flight at once, and one statement answers them all (3x less per key).
        """
        unique = list(dict.fromkeys(keys))
        rows: dict[str, tuple[int, str | None, Any]] = {}
        for start in range(0, len(unique), _KEYS_PER_QUERY):
            batch = unique[start:start + _KEYS_PER_QUERY]
            rows.update((key, (mode, filename, value)) for key, mode, filename, value in self._cache._con.execute(
                f"SELECT key, mode, filename, value FROM Cache WHERE raw = 1 AND key IN ({', '.join('?' * len(batch))})"
                " AND (expire_time IS NULL OR expire_time > ?)", (*batch, time.time())))
        return rows

    def _value(self, key: str, row: tuple[int, str | None, Any]) -> bytes:
        """The stored bytes of a row (`_rows`), from the database or its value file.

        Raises:
            CorruptEntry: not bytes.
            OSError: the value file is missing or cannot be read.
        """
        mode, filename, value = row
        try:
            data: bytes = self._cache._disk.fetch(mode, filename, value, False)
        except FileNotFoundError:
            raise FileNotFoundError(f"the value file of {key} is missing") from None
        return data

    def _read(self, key: str, *, fields: bool) -> tuple[CacheEntry | None, bool]:
        """The entry under `key` and whether its fields are whole (so they can be hashed).

        Raises:
            CorruptEntry: not one of our entries (or a chunk it needs is missing); OSError: its value file is gone.
            WrongKey: a compact entry written under another key.
        """
        row = self._rows((key,)).get(key)
        return (None, False) if row is None else self._decode(key, self._value(key, row), fields=fields)

    def _decode(self, key: str, data: bytes, *, fields: bool,
                chunk: Callable[[int], bytes | None] | None = None) -> tuple[CacheEntry, bool]:
        """The entry stored as `data` under `key`, and whether its fields are whole (`chunk`: reads a chunk, by
        default from the database each time).

        Raises:
            CorruptEntry: not one of our entries (or a chunk it needs is missing).
            WrongKey: a compact entry written under another key.
        """
        try:
            if not compact.is_compact(data):  # a whole entry, as tripbench wrote them before the compact form
                return CacheEntry.from_json(orjson.loads(data)), True
            raw = compact.decode(data)
            if raw.get("key") != compact.key_check(key):
                raise WrongKey(key)
            if fields:
                raw["fields"] = compact.expand(raw["fields"], chunk or self._chunk)
        except (orjson.JSONDecodeError, zlib.error, KeyError, TypeError, AttributeError) as exc:
            raise CorruptEntry(f"{type(exc).__name__}: {exc}") from exc
        return CacheEntry.from_json(raw), fields

    def _chunk(self, ref: int) -> bytes | None:
        with self._lock:
            row = self._chunks.execute("SELECT data FROM Chunk WHERE id = ?", (ref,)).fetchone()
        return None if row is None else bytes(row[0])

    def set(self, key: str, entry: CacheEntry) -> None:
        """Store (or overwrite) the entry under `key`."""
        self.set_many({key: entry})

    def set_many(self, entries: Mapping[str, CacheEntry]) -> None:
        """Store several entries in one transaction: one commit, where `set` pays one each (~30 us of ~47 us).

        Entries are stored in the compact form (`cache.compact`), each chunk of their prompts once. The chunks and the
        entries that need them are written in one transaction, so a sweep in another process sees both or neither.
        Nothing is stored in a cache found damaged; damage found here stops further writes (said once).
        """
        if self.damaged is not None or self.read_only:
            return
        chunks: dict[int, bytes] = {}
        values = {key: compact.encode(key, entry.stored(), chunks.__setitem__) for key, entry in entries.items()}
        try:
            with self._cache.transact():
                sweeps = self._sweep_count()
                with self._lock:
                    if sweeps != self._sweeps_seen:  # chunks this process stored before may be gone
                        self._chunks_written.clear()
                        self._sweeps_seen = sweeps
                    new = [(ref, data) for ref, data in chunks.items() if ref not in self._chunks_written]
                self._connection().executemany("INSERT OR IGNORE INTO Chunk VALUES (?, ?)", new)
                for key, value in values.items():
                    self._cache.set(key, value)
        except sqlite3.DatabaseError as exc:
            self._fail(exc)
            return
        with self._lock:
            if sweeps == self._sweeps_seen:
                self._chunks_written.update(ref for ref, _ in new)

    def _connection(self) -> sqlite3.Connection:
        """diskcache's connection of this thread: statements on it join the transaction `transact()` holds.

        2026-11-27 (issue 33): diskcache 5.6.3's `_con` property; `tests/cache/test_cache_concurrency.py` writes,
        prunes and verifies from several processes through it."""
        connection: sqlite3.Connection = self._cache._con
        return connection

    def _sweep_count(self) -> int:
        row = self._connection().execute("SELECT count FROM ChunkSweep WHERE id = 0").fetchone()
        return 0 if row is None else int(row[0])

    def _versions(self) -> dict[str, tuple[int, float]]:
        """Every row's key -> (rowid, store time): a row written again after this was taken has another version."""
        rows = self._connection().execute("SELECT key, rowid, store_time FROM Cache WHERE raw = 1")
        return {key: (rowid, stored) for key, rowid, stored in rows if isinstance(key, str)}

    def verify(self, *, repair: bool = False) -> tuple[int, list[BadEntry]]:
        """Reads every entry and checks that its fields hash to its key.

        Args:
            repair: Delete the bad entries.

        Returns:
            How many entries were checked, and the bad ones.
        """
        keys = self._entry_keys()
        bad = [found for key in keys if (found := self._check(key)) is not None]
        if bad:
            # Read again under the write lock: an entry another process pruned or rewrote while it was read (its
            # chunks swept in between) is not bad, and must not be deleted when it was rewritten.
            with self._cache.transact():
                bad = [found for item in bad if (found := self._check(item.key)) is not None]
                for item in bad if repair else ():
                    self._cache.delete(item.key)
        if repair:
            self._sweep_chunks()
        return len(keys), bad

    def _check(self, key: str) -> BadEntry | None:
        """What is wrong with the entry under `key` (None: it is sound, or gone)."""
        try:
            entry, _ = self._read(key, fields=True)
        except (CorruptEntry, OSError) as exc:
            return BadEntry(key, "unreadable", f"{type(exc).__name__}: {exc}")
        except WrongKey:
            return BadEntry(key, "mismatched", "it was written under another key")
        if entry is not None and (found := digest(entry.fields)) != key:
            return BadEntry(key, "mismatched", f"its fields hash to {found}")
        return None

    def _entry_keys(self) -> list[str]:
        """Every entry's key (not the counters')."""
        return [key for key in self._cache.iterkeys() if key not in _META_KEYS]

    def _sweep_chunks(self) -> int:
        """Deletes chunks no entry refers to (left by deleted entries); returns how many.

        Other processes may be writing meanwhile. The entries are read without holding writers up; then, under the
        write lock, those written or rewritten since are read too, the chunks no entry refers to are deleted and the
        sweep is counted (`compact.SWEEP_TABLE`), all in one transaction: a chunk an entry needs is never deleted.
        """
        versions = self._versions()
        used = self._chunks_used(versions)
        with self._cache.transact():
            used |= self._chunks_used([key for key, version in self._versions().items()
                                       if versions.get(key) != version])
            connection = self._connection()
            orphans = [ref for (ref,) in connection.execute("SELECT id FROM Chunk") if ref not in used]
            if orphans:
                connection.executemany("DELETE FROM Chunk WHERE id = ?", [(ref,) for ref in orphans])
                connection.execute("INSERT INTO ChunkSweep VALUES (0, 1) ON CONFLICT (id) DO UPDATE "
                                   "SET count = count + 1")
        return len(orphans)

    def _chunks_used(self, keys: Iterable[str]) -> frozenset[int]:
        """The chunks the compact entries under `keys` refer to (an unreadable entry refers to none)."""
        used: list[int] = []
        for key in keys:
            if key in _META_KEYS:
                continue
            data = self._cache.get(key)
            if data is not None and compact.is_compact(data):
                with contextlib.suppress(zlib.error, orjson.JSONDecodeError, KeyError, TypeError):
                    used += compact.chunk_ids(data, self._chunk)
        return frozenset(used)

    def entries(self) -> Iterator[tuple[str, CacheEntry]]:
        """Every readable entry with its whole fields (corrupt ones are skipped with a warning), in storage order."""
        for key in self._entry_keys():
            if (entry := self.peek(key, fields=True)) is not None:
                yield key, entry

    def stats(self) -> CacheStats:
        """Entry count, bytes on disk, and hits / misses / dollars saved over the directory's life."""
        self.flush()
        return CacheStats(
            entries=len(self._entry_keys()),
            size_bytes=self._cache.volume(),
            hits=self._cache.get(_META_HITS, 0),
            misses=self._cache.get(_META_MISSES, 0),
            saved_usd=self._cache.get(_META_SAVED, 0) / 1e6,
        )

    def prune(self, *, older_than_s: float | None = None, max_bytes: int | None = None) -> int:
        """Delete entries older than `older_than_s`, then the oldest until the directory fits `max_bytes`.

        Returns:
            How many entries were deleted.
        """
        now = time.time()
        versions = self._versions()  # before the entries are read: an entry written again after it stays
        by_age = sorted((entry.created, key) for key in self._entry_keys()
                        if (entry := self.peek(key)) is not None)
        doomed = [key for created, key in by_age if older_than_s is not None and now - created > older_than_s]
        deleted = self._delete_unchanged(doomed, versions)
        self._sweep_chunks()  # deleted entries free their space only with the chunks no other entry shares
        remaining = [key for _, key in by_age[len(doomed):]]
        while max_bytes is not None and remaining and self._cache.volume() > max_bytes:
            batch, remaining = remaining[:max(1, len(remaining) // 10)], remaining[max(1, len(remaining) // 10):]
            deleted += self._delete_unchanged(batch, versions)  # the oldest tenth, then see what it freed
            self._sweep_chunks()
        return deleted

    def _delete_unchanged(self, keys: Iterable[str], versions: Mapping[str, tuple[int, float]]) -> int:
        """Deletes the entries under `keys` still as they were in `versions` (one written again since stays);
        returns how many."""
        deleted = 0
        with self._cache.transact():
            for key in keys:
                row = self._connection().execute("SELECT rowid, store_time FROM Cache WHERE key = ? AND raw = 1",
                                                 (key,)).fetchone()
                if row is not None and (row[0], row[1]) == versions.get(key):
                    self._cache.delete(key)
                    deleted += 1
        return deleted

    def flush(self) -> None:
        """Add this process's hit / miss / saved counts to the directory's totals (not to a damaged cache)."""
        with self._lock:
            counts = ((_META_HITS, self._hits), (_META_MISSES, self._misses), (_META_SAVED, self._saved_microusd))
            self._hits = self._misses = self._saved_microusd = 0
        if self.damaged is not None or self.read_only:
            return
        try:
            for meta_key, delta in counts:
                if delta:
                    self._cache.incr(meta_key, delta, default=0)
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def close(self) -> None:
        """Flush the counters and close the database."""
        self.flush()
        self._cache.close()
        self._chunks.close()

    def __enter__(self) -> CacheStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
