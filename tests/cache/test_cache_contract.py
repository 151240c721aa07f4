"""The contract every LLM cache keeps (`cache.CallCache`), one test body over both backends: the disk cache (SQLite)
and the team database's (PostgreSQL, `runner.team.cache`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import diskcache
import pytest

from cache import CacheStore, CallCache
from tests.cache.test_cache_store import ask, entry_for

Open = Callable[[], CallCache]


@pytest.fixture(params=["disk", "team"])
def open_cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Open]:
    """Opens caches over one store (each call a new connection, as another process would have)."""
    opened: list[CallCache] = []

    def open_one() -> CallCache:
        if request.param == "disk":
            cache: CallCache = CacheStore(tmp_path / "cache")
        else:
            from runner.team import TeamCache

            cache = TeamCache(request.getfixturevalue("team_db"))
        opened.append(cache)
        return cache

    yield open_one
    for cache in opened:
        cache.close()


def test_an_entry_comes_back_as_written_and_a_miss_is_none(open_cache: Open) -> None:
    cache = open_cache()
    key, entry = entry_for(ask("hello"), cost=0.25)
    assert cache.get(key) is None
    cache.set_many({key: entry})
    for found in (cache.get(key), cache.peek(key)):
        assert found is not None
        assert (found.response, found.cost_usd, found.created) == (entry.response, entry.cost_usd, entry.created)
    assert cache.get(entry_for(ask("hello again"))[0]) is None


def test_another_process_sees_the_entries_of_one_batch(open_cache: Open) -> None:
    writer, reader = open_cache(), open_cache()
    entries = dict(entry_for(ask(f"question {n}"), text=f"answer {n}") for n in range(20))
    writer.set_many(entries)
    for key, entry in entries.items():
        found = reader.get(key)
        assert found is not None and found.response.text == entry.response.text


def test_an_entry_moved_under_another_key_is_a_miss(open_cache: Open, request: pytest.FixtureRequest,
                                                    tmp_path: Path) -> None:
    cache = open_cache()
    key, _ = entry_for(ask("what is 2 + 2?"))
    other, wrong = entry_for(ask("what is 3 + 3?"), text="6")
    cache.set_many({other: wrong})
    # a store that mixed its rows up must never answer the wrong request
    if isinstance(cache, CacheStore):
        raw = diskcache.Cache(str(tmp_path / "cache"))
        raw.set(key, raw.get(other))
        raw.close()
    else:
        import psycopg

        with psycopg.connect(request.getfixturevalue("team_db"), autocommit=True) as connection:
            connection.execute("UPDATE tb_cache SET key = %s WHERE key = %s", (key, other))
    assert cache.get(key) is None


def test_the_team_cache_keeps_the_first_writers_answer_unless_refreshing(team_db: str) -> None:
    from runner.team import TeamCache

    key, first = entry_for(ask("hello"), text="first")
    second = dataclasses.replace(first, response=dataclasses.replace(first.response, text="second"))
    one, other, refreshing = TeamCache(team_db), TeamCache(team_db), TeamCache(team_db, overwrite=True)
    try:
        one.set_many({key: first})
        other.set_many({key: second})
        assert (found := one.get(key)) is not None and found.response.text == "first"
        refreshing.set_many({key: second})
        assert (found := other.get(key)) is not None and found.response.text == "second"
    finally:
        for cache in (one, other, refreshing):
            cache.close()


def test_the_team_cache_reads_again_once_its_connection_was_lost(team_db: str) -> None:
    import psycopg

    from runner.team import TeamCache

    key, entry = entry_for(ask("hello"))
    cache = TeamCache(team_db)
    try:
        cache.set_many({key: entry})
        with psycopg.connect(team_db, autocommit=True) as admin:  # the server drops every other connection
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        assert cache.get(key) is not None  # never a miss: the dropped connection is made again at once
        cache.set_many({key: entry})  # the writer reconnects too
    finally:
        cache.close()


def test_a_team_database_of_another_key_scheme_is_refused(team_db: str) -> None:
    import psycopg

    from errors import DataError
    from runner.team import TeamCache

    TeamCache(team_db).close()
    with psycopg.connect(team_db, autocommit=True) as connection:
        connection.execute("UPDATE tb_meta SET value = 'v0' WHERE name = 'key_scheme'")
    with pytest.raises(DataError, match="key scheme 'v0', this tripbench uses v1"):
        TeamCache(team_db)


def test_an_unreachable_team_database_is_said_without_its_password(tmp_path: Path) -> None:
    from runner.team import TeamCache, TeamUnavailable

    with pytest.raises(TeamUnavailable) as raised:
        TeamCache(f"postgresql://tb:s3cret@/tripbench?host={tmp_path}")
    assert "s3cret" not in str(raised.value) and "cannot connect" in str(raised.value)
