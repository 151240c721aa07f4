"""A local disk cache shared with the team (`tripbench team import-cache DIR`): the calls a machine paid for before
it joined the team are not paid again by the team's runs, which read only the team database's cache.

Every entry is verified as a read verifies it (readable, its fields hash to its key): a bad one is counted and left
out, never shared. The first writer of a key wins (`TeamCache.set_many`): an entry the team already holds is kept as
it is, so importing twice, or two machines importing the same calls, changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from cache import digest
from cache.store import BadEntry, CacheStore
from runner.team.cache import TeamCache
from runner.team.database import connect

BATCH = 500
"""Entries written per statement."""


@dataclass(slots=True)
class Imported:
    """What an import did."""

    new: int = 0
    """Entries the team did not hold, now shared."""
    held: int = 0
    """Entries the team already held (its own answer is kept)."""
    bad: list[BadEntry] = field(default_factory=list)
    """Entries left out: unreadable, or their fields hash to another key."""


def import_cache(directory: Path, url: str) -> Imported:
    """Copies the verified entries of the disk cache at `directory` into the team database at `url`.

    Raises:
        TeamUnavailable: the database cannot be reached.
        CacheDamaged, DataError: the disk cache cannot be read as one.
    """
    imported = Imported()
    with CacheStore(directory, repair=False) as store:
        _, imported.bad = store.verify()
        left_out = {bad.key for bad in imported.bad}
        team = TeamCache(url)
        try:
            with connect(url) as connection:
                sound = ((key, entry) for key, entry in store.entries()
                         if key not in left_out and digest(entry.fields) == key)
                while entries := dict(islice(sound, BATCH)):
                    held = {str(key) for key, in connection.execute(
                        "SELECT key FROM tb_cache WHERE key = ANY(%s)", (list(entries),))}
                    team.set_many({key: entry for key, entry in entries.items() if key not in held})
                    imported.held += len(held)
                    imported.new += len(entries) - len(held)
        finally:
            team.close()
    return imported
