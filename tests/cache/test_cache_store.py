"""The on-disk store: round trips, counters, scheme guard, corrupt entries, pruning, explain."""

from __future__ import annotations

import logging
import random
import sqlite3
import time
import zlib
from pathlib import Path

import diskcache
import orjson
import pytest

from cache.explain import explain
from cache.keys import cache_key, key_fields
from cache.store import CacheEntry, CacheStore
from errors import DataError
from providers.interface import ChatRequest, ChatResponse, Message, Usage

IDENTITY = {"provider": "openai", "resolved_model": "gpt-4o-mini", "endpoint": None}


def entry_for(request: ChatRequest, text: str = "ok", cost: float | None = 0.002, created: float | None = None
              ) -> tuple[str, CacheEntry]:
    fields = key_fields(request, **IDENTITY)  # type: ignore[arg-type]
    response = ChatResponse(text, "stop", Usage(120, 20, 30), 0.4, "req-1")
    return cache_key(request, **IDENTITY), CacheEntry(fields, response, cost, created or time.time())  # type: ignore[arg-type]


def ask(text: str, **kwargs: object) -> ChatRequest:
    return ChatRequest("openai:gpt-4o-mini", (Message("system", "Be brief."), Message("user", text)), **kwargs)  # type: ignore[arg-type]


def test_round_trip_and_counters_survive_reopen(tmp_path: Path) -> None:
    key, entry = entry_for(ask("hello"), cost=0.25)
    with CacheStore(tmp_path) as store:
        assert store.get(key) is None
        store.set(key, entry)
        for _ in range(2):
            hit = store.get(key)
            assert hit is not None and (hit.response, hit.cost_usd, hit.created) == (
                entry.response, entry.cost_usd, entry.created)
        assert store.peek(key, fields=True) == entry  # the whole fields, rebuilt from their chunks
    with CacheStore(tmp_path) as store:
        stats = store.stats()
    assert (stats.entries, stats.hits, stats.misses) == (1, 2, 1)
    assert stats.saved_usd == pytest.approx(0.5)
    assert stats.size_bytes > 0


def test_several_entries_sharing_chunks_are_read_whole_in_one_pass_without_counting(tmp_path: Path) -> None:
    history = "\n".join(f"Observation {n}: a table of flights, row {n}" for n in range(200))  # the same prompt prefix
    stored = dict(entry_for(ask(history + f"\nThought {n}:"), text=f"step {n}") for n in range(5))
    with CacheStore(tmp_path) as store:
        store.set_many(stored)
        found = store.peek_many([*stored, "v1:" + "0" * 64], fields=True)
        assert found == stored  # every entry whole, the missing key absent
        assert store.stats().hits == 0


def test_values_are_compressed_json_not_pickles(tmp_path: Path) -> None:
    key, entry = entry_for(ask("hello"))
    with CacheStore(tmp_path) as store:
        store.set(key, entry)
    raw = diskcache.Cache(str(tmp_path))
    try:
        stored = orjson.loads(zlib.decompress(raw.get(key)))
        assert stored["key"] == key[3:19] and stored["response"]["text"] == "ok"  # 64 bits of the key
        assert [m["role"] for m in stored["fields"]["messages"]] == ["system", "user"]  # contents: chunk ids
        assert "hello" not in str(stored["fields"])
    finally:
        raw.close()
    with sqlite3.connect(tmp_path / "cache.db") as conn:
        chunks = {zlib.decompress(data).decode() for (data,) in conn.execute("SELECT data FROM Chunk")}
    assert {"Be brief.", "hello"} <= chunks


def test_entries_written_whole_by_an_older_tripbench_are_still_served(tmp_path: Path) -> None:
    key, entry = entry_for(ask("hello"))
    with CacheStore(tmp_path):
        pass
    raw = diskcache.Cache(str(tmp_path))
    raw.set(key, orjson.dumps(entry))  # the whole-entry JSON of the first format
    raw.close()
    with CacheStore(tmp_path) as store:
        assert store.get(key) == entry and store.verify() == (1, [])


def test_corrupt_entry_is_a_miss_and_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    key, _ = entry_for(ask("hello"))
    with CacheStore(tmp_path) as store:
        pass
    raw = diskcache.Cache(str(tmp_path))
    raw.set(key, b'{"fields": {"truncated')  # a half-written JSON value
    raw.set("v1:pickled", {"a": 1})  # a pickle someone else's code wrote into the directory
    raw.close()
    with caplog.at_level(logging.WARNING, logger="cache.store"), CacheStore(tmp_path) as store:
        assert store.get(key) is None
        assert store.get("v1:pickled") is None
        assert store.refused == 2
        assert list(store.entries()) == []
        assert store.stats().misses == 2
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and key in warnings[0] and "unreadable" in warnings[0]  # said once, not per entry


def test_store_refuses_non_bytes(tmp_path: Path) -> None:
    with CacheStore(tmp_path) as store, pytest.raises(TypeError):
        store._cache.set("v1:x", {"not": "bytes"})


def test_other_key_scheme_is_refused_naming_both(tmp_path: Path) -> None:
    raw = diskcache.Cache(str(tmp_path))
    raw.set("meta:scheme", b"v0")
    raw.close()
    with pytest.raises(DataError, match=r"key scheme v0, this tripbench uses v1"):
        CacheStore(tmp_path)


def _noise(seed: int) -> str:
    """100 kB of text that does not compress: its entry spills into a value file of its own."""
    return random.Random(seed).randbytes(50_000).hex()


def test_prune_by_age_then_size(tmp_path: Path) -> None:
    now = time.time()
    with CacheStore(tmp_path) as store:
        for i in range(6):
            key, entry = entry_for(ask(f"old {i}", seed=i), text=_noise(i), created=now - 10 * 86400 - i)
            store.set(key, entry)
        for i in range(4):
            key, entry = entry_for(ask(f"new {i}", seed=i), text=_noise(10 + i), created=now - i)
            store.set(key, entry)
        assert store.prune(older_than_s=7 * 86400) == 6
        assert store.stats().entries == 4
        before = store.stats().size_bytes
        deleted = store.prune(max_bytes=before - 60_000)
        assert deleted >= 1
        assert store.stats().size_bytes <= before - 60_000
        kept = {entry.fields["messages"][1]["content"] for _, entry in store.entries()}
    assert "new 0" in kept  # the newest survives: oldest go first


def test_explain_names_the_nearest_entry_and_the_differing_fields(tmp_path: Path) -> None:
    with CacheStore(tmp_path) as store:
        for request in (ask("Plan Chicago", temperature=0.0), ask("Plan Boston", temperature=0.7, seed=3)):
            store.set(*entry_for(request))
        stored = explain(store, key_fields(ask("Plan Chicago", temperature=0.0), **IDENTITY))  # type: ignore[arg-type]
        assert stored.stored and stored.nearest_key is None
        near = explain(store, key_fields(ask("Plan Chicago", temperature=0.2), **IDENTITY))  # type: ignore[arg-type]
        assert not near.stored
        assert near.nearest_key == cache_key(ask("Plan Chicago", temperature=0.0), **IDENTITY)  # type: ignore[arg-type]
        assert near.differing == ("temperature",)
    with CacheStore(tmp_path / "empty") as empty:
        nothing = explain(empty, key_fields(ask("x"), **IDENTITY))  # type: ignore[arg-type]
    assert nothing.nearest_key is None and nothing.differing == ()


def test_pickle_is_not_even_read(tmp_path: Path) -> None:
    # diskcache's default Disk would unpickle this; ours refuses before loading it.
    class Boom:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (pytest.fail, ("unpickled an untrusted cache value",))

    with CacheStore(tmp_path):
        pass
    raw = diskcache.Cache(str(tmp_path))
    raw.set("v1:boom", Boom())
    raw.close()
    with CacheStore(tmp_path) as store:
        assert store.get("v1:boom") is None
