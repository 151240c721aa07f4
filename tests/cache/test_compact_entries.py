"""Compact entries: a growing prompt's steps share their chunks, entries rebuild whole, pruning frees chunks."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

import orjson

from cache import compact
from cache.keys import cache_key, key_fields
from cache.store import CacheEntry, CacheStore
from providers.interface import ChatRequest, ChatResponse, Message, Usage

IDENTITY = {"provider": "openai", "resolved_model": "gpt-4o-mini", "endpoint": None}
INSTRUCTIONS = "".join(f"Rule {n}: collect what the plan needs, then call the Planner.\n" for n in range(60))


def scratchpads(steps: int) -> list[str]:
    """A ReAct-like prompt re-sent with one more step each time (observations are tables of random rows)."""
    rng, pad, prompts = random.Random(7), "", []
    for step in range(1, steps + 1):
        table = "".join(f"F{rng.randrange(10**7)} {rng.randrange(900)} {rng.choice('ABCDE')}\n" for _ in range(40))
        pad += f"Thought {step}: I need more.\nAction {step}: FlightSearch[A, B, 2022-03-{step:02}]\n" \
               f"Observation {step}:\n{table}"
        prompts.append(INSTRUCTIONS + "Query: a trip\n" + pad + f"Thought {step + 1}:")
    return prompts


def entry(prompt: str) -> tuple[str, CacheEntry]:
    request = ChatRequest("openai:gpt-4o-mini", (Message("user", prompt),), max_tokens=256)
    fields = key_fields(request, **IDENTITY)  # type: ignore[arg-type]
    return cache_key(request, **IDENTITY), CacheEntry(  # type: ignore[arg-type]
        fields, ChatResponse("Let me look.", "stop", Usage(100, 0, 4)), 0.001, time.time())


def test_chunks_rebuild_the_text_and_a_longer_text_keeps_the_shorter_ones_chunks() -> None:
    short, longer = scratchpads(12)[10], scratchpads(12)[11]
    assert "".join(compact.chunks_of(short)) == short
    before, after = list(compact.chunks_of(short)), list(compact.chunks_of(longer))
    assert after[:len(before) - 2] == before[:-2]  # all but the tail survive what was appended


def test_a_growing_prompt_is_stored_once_and_every_step_rebuilds_whole(tmp_path: Path) -> None:
    made = dict(entry(prompt) for prompt in scratchpads(30))
    whole = sum(len(orjson.dumps(e)) for e in made.values())
    with CacheStore(tmp_path) as store:
        for key, value in made.items():  # one step at a time, as a rollout writes them
            store.set(key, value)
        assert all(store.peek(key, fields=True) == value for key, value in made.items())
        assert all(store.get(key).response == value.response for key, value in made.items())  # type: ignore[union-attr]
    with sqlite3.connect(tmp_path / "cache.db") as conn:
        chunk_bytes = conn.execute("SELECT sum(length(data)) FROM Chunk").fetchone()[0]
        entry_bytes = conn.execute("SELECT sum(length(value)) FROM Cache WHERE key LIKE 'v1:%'").fetchone()[0]
    print(f"\n30 growing prompts: {whole:,} bytes whole, {chunk_bytes + entry_bytes:,} compact")
    assert chunk_bytes + entry_bytes < whole * 0.15  # the random tables do not compress; the rest is shared


def test_pruning_frees_the_chunks_only_deleted_entries_used(tmp_path: Path) -> None:
    now = time.time()
    prompts = scratchpads(10)
    with CacheStore(tmp_path) as store:
        for age, prompt in enumerate(prompts):
            key, value = entry(prompt)
            store.set(key, CacheEntry(value.fields, value.response, value.cost_usd, now - age * 86400))
        assert store.prune(older_than_s=4.5 * 86400) == 5  # the five longest prompts are the newest
        kept = [key for key, _ in store.entries()]
        assert len(kept) == 5 and store.verify() == (5, [])
        with sqlite3.connect(tmp_path / "cache.db") as conn:
            left = conn.execute("SELECT count(*) FROM Chunk").fetchone()[0]
        store.prune(older_than_s=0)
        with sqlite3.connect(tmp_path / "cache.db") as conn:
            assert 0 < left and conn.execute("SELECT count(*) FROM Chunk").fetchone()[0] == 0
