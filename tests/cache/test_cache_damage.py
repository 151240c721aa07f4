"""A damaged cache never answers wrongly and never stops a run: real cache files, damaged as disks and people do.

Each case builds a real cache of real entries (one large enough to spill into its own value file), damages it, then
reads every entry back: each read is the right answer or a miss, no exception escapes, and the warning names the
path. `verify` finds what is bad and `--repair` drops it.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import diskcache
import pytest

from cache.keys import cache_key, key_fields
from cache.store import DB_FILE, CacheDamaged, CacheEntry, CacheStore, corrupt
from providers.interface import ChatRequest, ChatResponse, Message, Usage

IDENTITY = {"provider": "openai", "resolved_model": "gpt-4o-mini", "endpoint": None}
BIG = random.Random(0).randbytes(40_000).hex()  # a reply that does not compress: its entry gets a value file


def entries(n: int = 40) -> dict[str, CacheEntry]:
    made = {}
    for i in range(n):
        request = ChatRequest("openai:gpt-4o-mini", (Message("user", f"question {i}"),))
        fields = key_fields(request, **IDENTITY)  # type: ignore[arg-type]
        made[cache_key(request, **IDENTITY)] = CacheEntry(  # type: ignore[arg-type]
            fields, ChatResponse((BIG if i == 0 else "") + f"answer {i}", "stop", Usage(10, 0, 2)), 0.001, time.time())
    return made


@pytest.fixture
def cache(tmp_path: Path) -> tuple[Path, dict[str, CacheEntry]]:
    made = entries()
    with CacheStore(tmp_path) as store:
        store.set_many(made)
    return tmp_path, made


def overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def value_files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*.val")]


def swap_two_entries(directory: Path, made: dict[str, CacheEntry]) -> None:
    first, second = list(made)[1:3]
    raw = diskcache.Cache(str(directory))
    raw.set(first, raw.get(second))  # a well-formed entry under another key
    raw.close()


DAMAGE: dict[str, Callable[[Path, dict[str, CacheEntry]], None]] = {
    "db truncated to half": lambda d, _: os.truncate(d / DB_FILE, (d / DB_FILE).stat().st_size // 2),
    "db truncated to 100 bytes": lambda d, _: os.truncate(d / DB_FILE, 100),
    "db header overwritten": lambda d, _: overwrite(d / DB_FILE, 0, b"\xde\xad" * 50),
    "db pages overwritten at random": lambda d, _: [
        overwrite(d / DB_FILE, offset, random.Random(offset).randbytes(512))
        for offset in range(4096, (d / DB_FILE).stat().st_size, 8192)],
    "db replaced by another file": lambda d, _: (d / DB_FILE).write_text("not a database\n" * 100),
    "value file deleted": lambda d, _: value_files(d)[0].unlink(),
    "value file truncated": lambda d, _: os.truncate(value_files(d)[0], 1000),
    "an entry swapped for another key's": swap_two_entries,
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_damage_gives_right_answers_or_misses_never_an_error(cache, damage: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    directory, made = cache
    assert value_files(directory)  # the big entry did spill into a file
    DAMAGE[damage](directory, made)
    with caplog.at_level(logging.WARNING, logger="cache.store"), CacheStore(directory) as store:
        answers = {key: store.get(key) for key in made}
        store.set_many(entries(2))  # writing to it raises nothing either
    wrong = [key for key, entry in answers.items() if entry is not None and entry.response != made[key].response]
    assert wrong == []
    served = sum(entry is not None for entry in answers.values())
    assert served < len(made)  # the damage was noticed: something became a miss
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings and str(directory) in warnings[0]
    assert len(warnings) <= 2  # said once (a damaged database may also be found at open), not per entry
    print(f"\n{damage}: {served}/{len(made)} entries still served, {len(made) - served} misses; {warnings[0][:140]}")


@pytest.mark.parametrize("damage", ["value file deleted", "value file truncated", "an entry swapped for another key's"])
def test_a_bad_entry_in_a_read_of_many_costs_only_itself(cache, damage: str) -> None:
    directory, made = cache
    DAMAGE[damage](directory, made)
    with CacheStore(directory) as store:
        found = store.get_many([*made, *made])  # every key twice, in one query
        assert store.refused == 1
        stats = store.stats()
    assert len(found) == len(made) - 1 and all(entry.response == made[key].response for key, entry in found.items())
    assert (stats.hits, stats.misses) == (2 * len(found), 2)  # each key counted as often as it was asked for


def test_verify_lists_bad_entries_and_repair_drops_them(cache) -> None:
    directory, made = cache
    swap_two_entries(directory, made)
    DAMAGE["value file deleted"](directory, made)
    with CacheStore(directory) as store:
        checked, bad = store.verify()
        assert checked == len(made)
        assert sorted(b.reason for b in bad) == ["mismatched", "unreadable"]
        store.verify(repair=True)
        assert store.verify() == (len(made) - 2, [])


def test_a_database_that_cannot_be_opened_is_moved_aside_or_reported(cache) -> None:
    directory, made = cache
    DAMAGE["db header overwritten"](directory, made)
    with pytest.raises(CacheDamaged, match=f"{directory / DB_FILE}: the cache database is damaged"):
        CacheStore(directory, repair=False)
    with CacheStore(directory) as store:  # a run: moved aside, a fresh cache
        assert store.get(next(iter(made))) is None
        store.set_many(entries(1))
    assert [p.name.startswith(f"{DB_FILE}.damaged-") for p in directory.glob(f"{DB_FILE}.damaged-*")] == [True]
    with sqlite3.connect(directory / DB_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_damage_found_while_running_turns_the_cache_into_misses_said_once(tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    made = entries(2000)
    with CacheStore(tmp_path) as store:
        store.set_many(made)
    size = (tmp_path / DB_FILE).stat().st_size
    overwrite(tmp_path / DB_FILE, size - 64 * 1024, random.Random(1).randbytes(32 * 1024))  # pages deep inside
    with caplog.at_level(logging.WARNING, logger="cache.store"), CacheStore(tmp_path) as store:
        answers = {key: store.get(key) for key in made}
        assert store.damaged is not None  # found by a read, not at open
        store.set_many(entries(3))
    assert all(entry is None or entry.response == made[key].response for key, entry in answers.items())
    assert sum(entry is None for entry in answers.values()) > 0
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "serving misses" in warnings[0] and str(tmp_path) in warnings[0]


def sqlite_error(make: Callable[[], object]) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as caught:
        make()
    return caught.value


def test_only_a_file_sqlite_calls_bad_is_damage_a_lock_is_not(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    not_a_database = sqlite_error(lambda: sqlite3.connect(garbage).execute("SELECT * FROM sqlite_master"))
    holder = sqlite3.connect(tmp_path / "held.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(tmp_path / "held.db", isolation_level=None, timeout=0)
    locked = sqlite_error(lambda: waiter.execute("BEGIN IMMEDIATE"))
    holder.close()
    waiter.close()
    assert corrupt(not_a_database) and not corrupt(locked)

