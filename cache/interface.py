"""What the gateway needs of a cache of LLM calls: the disk cache (`cache.store.CacheStore`) and the team database's
(`runner.team.cache.TeamCache`) both are one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from cache.store import CacheEntry


class CallCache(Protocol):
    """Entries by cache key (`cache.keys`), each verified on read: an entry whose fields hash to another key is a
    miss."""

    @property
    def location(self) -> str:
        """Where the entries live, for messages (a folder, a database URL without its password)."""
        ...

    def get(self, key: str) -> CacheEntry | None:
        """The entry under `key`, or None; a use of the cache (counted where the cache counts hits)."""
        ...

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        """The entries found under `keys`, in one round trip; every key listed is a use of the cache."""
        ...

    def peek(self, key: str) -> CacheEntry | None:
        """The entry under `key`, or None, not counted."""
        ...

    def set_many(self, entries: Mapping[str, CacheEntry]) -> None:
        """Stores the entries, in one transaction where the store has them (called from a worker thread)."""
        ...

    def close(self) -> None:
        """Writes what the cache holds back, and closes it."""
        ...
