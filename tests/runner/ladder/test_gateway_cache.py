"""The gateway's cache rung: hits, modes, coalescing, telemetry."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from cache.modes import CacheMode
from cache.store import CacheEntry, CacheStore
from providers.errors import BadRequest, ReplayMiss
from providers.interface import ChatRequest, Message
from providers.prices import Price
from providers.tokens import count_prompt_tokens
from runner.ladder.calls import CallRecord
from runner.ladder.gateway import Gateway
from runner.ladder.retry import Retrier, RetryPolicy
from tests.runner.ladder.gateway_doubles import ScriptedProvider

PRICES = {"fake:m": Price(input=1.0, output=2.0)}  # USD per million tokens


def ask(text: str = "Plan a trip to Chicago.", **kwargs: object) -> ChatRequest:
    return ChatRequest("fake:m", (Message("user", text),), **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with CacheStore(tmp_path / "cache") as store:
        yield store


def gateway(provider: ScriptedProvider, store: CacheStore, records: list[CallRecord],
            mode: CacheMode = CacheMode.READWRITE) -> Gateway:
    return Gateway(resolve=lambda _: provider, cache=store, mode=mode, prices=PRICES, on_call=records.append,
                   retrier=Retrier(RetryPolicy(max_attempts=3), sleep=lambda _: asyncio.sleep(0)))


async def test_second_identical_call_is_a_free_hit(scripted: ScriptedProvider, store: CacheStore,
                                                   records: list[CallRecord]) -> None:
    gw = gateway(scripted, store, records)
    first = await gw.complete(ask())
    second = await gw.complete(ask())
    assert second == first and len(scripted.calls) == 1
    miss, hit = records
    assert (miss.hit, hit.hit) == (False, True)
    assert miss.cost_usd == pytest.approx((first.usage.input_tokens * 1.0 + 20 * 2.0) / 1e6)
    assert hit.cost_usd == 0.0 and hit.saved_usd == miss.cost_usd
    assert miss.cache_key == hit.cache_key and miss.cache_key.startswith("v1:")
    assert hit.usage == miss.usage  # a hit reports the tokens the rollout consumed


async def test_replay_miss_fails_fast_naming_the_request(scripted: ScriptedProvider, store: CacheStore,
                                                         records: list[CallRecord]) -> None:
    gw = gateway(scripted, store, records, CacheMode.REPLAY)
    with pytest.raises(ReplayMiss) as caught:
        await gw.complete(ask("Plan a trip to Boston.", sample=3))
    message = str(caught.value)
    assert "fake:m" in message and "sample 3" in message and "Plan a trip to Boston." in message
    assert caught.value.key in message and caught.value.key == records[0].cache_key
    assert scripted.calls == [] and records[0].error_type == "ReplayMiss"


async def test_replay_serves_what_readwrite_stored(scripted: ScriptedProvider, store: CacheStore,
                                                   records: list[CallRecord]) -> None:
    stored = await gateway(scripted, store, records).complete(ask())
    replayed = await gateway(scripted, store, records, CacheMode.REPLAY).complete(ask())
    assert replayed == stored and len(scripted.calls) == 1


async def test_refresh_calls_again_and_overwrites(scripted: ScriptedProvider, store: CacheStore,
                                                  records: list[CallRecord]) -> None:
    old = await gateway(scripted, store, records).complete(ask())
    scripted.reply = "fresh"
    new = await gateway(scripted, store, records, CacheMode.REFRESH).complete(ask())
    assert new.text.startswith("fresh") and old.text.startswith("echo")
    assert (await gateway(scripted, store, records).complete(ask())) == new
    assert len(scripted.calls) == 2


async def test_off_neither_reads_nor_writes(scripted: ScriptedProvider, store: CacheStore,
                                            records: list[CallRecord]) -> None:
    gw = gateway(scripted, store, records, CacheMode.OFF)
    await gw.complete(ask())
    await gw.complete(ask())
    assert len(scripted.calls) == 2 and store.stats().entries == 0
    assert [r.hit for r in records] == [False, False]


async def test_fifty_identical_concurrent_calls_make_one_provider_call(
        scripted: ScriptedProvider, store: CacheStore, records: list[CallRecord]) -> None:
    scripted.gate = asyncio.Event()
    gw = gateway(scripted, store, records)
    calls = [asyncio.create_task(gw.complete(ask())) for _ in range(50)]
    while not scripted.calls:
        await asyncio.sleep(0)
    for _ in range(5):
        await asyncio.sleep(0)
    scripted.gate.set()
    responses = await asyncio.gather(*calls)
    assert len(scripted.calls) == 1 and len(set(responses)) == 1
    assert sum(not r.hit for r in records) == 1 and len(records) == 50
    paid = [r.cost_usd for r in records if not r.hit]
    assert sum(r.saved_usd or 0 for r in records) == pytest.approx(49 * paid[0])


async def test_coalesced_callers_share_the_error(scripted: ScriptedProvider, store: CacheStore,
                                                 records: list[CallRecord]) -> None:
    scripted.gate = asyncio.Event()
    scripted.fail_next(BadRequest("400: nope", status=400))
    gw = gateway(scripted, store, records)
    calls = [asyncio.create_task(gw.complete(ask())) for _ in range(5)]
    await asyncio.sleep(0)
    scripted.gate.set()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, BadRequest) for r in results)
    assert len(scripted.calls) == 1  # a permanent error is not retried
    assert store.stats().entries == 0  # and not cached: the next call tries again
    assert {r.error_type for r in records} == {"BadRequest"}


async def test_k_samples_at_temperature_one_are_k_entries(scripted: ScriptedProvider, store: CacheStore,
                                                          records: list[CallRecord]) -> None:
    gw = gateway(scripted, store, records)
    texts = [(await gw.complete(ask(temperature=1.0, sample=k))).text for k in range(4)]
    assert len(set(texts)) == 4 and store.stats().entries == 4 and len(scripted.calls) == 4


async def test_models_on_two_endpoints_do_not_share_entries(store: CacheStore, records: list[CallRecord]) -> None:
    local, remote = ScriptedProvider(), ScriptedProvider()
    local.endpoint, remote.endpoint = "http://127.0.0.1:1/v1/", "http://127.0.0.1:2/v1/"  # type: ignore[misc]
    by_model = {"fake:local": local, "fake:remote": remote}
    gw = Gateway(resolve=by_model.__getitem__, cache=store, on_call=records.append)
    for model in by_model:
        await gw.complete(ChatRequest(model, (Message("user", "hi"),)))
    assert len(local.calls) == len(remote.calls) == 1
    assert records[0].cache_key != records[1].cache_key


class BatchRecordingStore(CacheStore):
    """The real store, noting the size of every batch the gateway writes."""

    def __init__(self, directory: Path, *, fail: OSError | None = None) -> None:
        super().__init__(directory)
        self.batches: list[int] = []
        self.fail = fail

    def set_many(self, entries: Mapping[str, CacheEntry]) -> None:
        self.batches.append(len(entries))
        if self.fail is not None:
            raise self.fail
        super().set_many(entries)


async def test_calls_finishing_in_one_loop_turn_are_stored_in_one_write(scripted: ScriptedProvider, tmp_path: Path,
                                                                        records: list[CallRecord]) -> None:
    scripted.gate = asyncio.Event()
    with BatchRecordingStore(tmp_path / "cache") as store:
        gw = gateway(scripted, store, records)
        calls = [asyncio.create_task(gw.complete(ask(f"Plan trip {i}."))) for i in range(10)]
        while len(scripted.calls) < 10:
            await asyncio.sleep(0)
        scripted.gate.set()  # all ten answer in the same turn
        responses = await asyncio.gather(*calls)
        assert store.batches == [10]  # written before any caller got its response back
        assert [store.peek(r.cache_key).response for r in records] == responses  # type: ignore[arg-type, union-attr]
        assert (await gw.complete(ask("Plan trip 3."))) == responses[3] and len(scripted.calls) == 10


async def test_an_entry_the_disk_refuses_is_a_warning_and_the_call_still_answers(
        scripted: ScriptedProvider, tmp_path: Path, records: list[CallRecord],
        caplog: pytest.LogCaptureFixture) -> None:
    with BatchRecordingStore(tmp_path / "cache", fail=OSError(28, "No space left on device")) as store:
        gw = gateway(scripted, store, records)
        with caplog.at_level(logging.WARNING, logger="runner.ladder.gateway"):
            first = await gw.complete(ask())
            second = await gw.complete(ask())  # not stuck waiting on the entry that was never written
        assert first == second and len(scripted.calls) == 2 and store.stats().entries == 0
        assert "new entries not written: 1 (OSError: [Errno 28] No space left on device)" in caplog.text
        await gw.aclose()


def test_a_cache_mode_without_a_cache_is_refused(scripted: ScriptedProvider) -> None:
    # Replay without a cache must not quietly become "call the provider".
    with pytest.raises(ValueError, match="replay"):
        Gateway(resolve=lambda _: scripted, mode=CacheMode.REPLAY)


async def test_a_cache_locked_by_another_process_never_blocks_the_event_loop(
        scripted: ScriptedProvider, store: CacheStore, records: list[CallRecord],
        caplog: pytest.LogCaptureFixture) -> None:
    count_prompt_tokens([("user", "loads the encoding, which takes a while the first time")])
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    loop.slow_callback_duration = 0.25
    caplog.set_level(logging.WARNING, logger="asyncio")
    holder = sqlite3.connect(store.directory / "cache.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process's write lock, released in a second
    threading.Timer(1.0, holder.close).start()
    beats = 0

    async def heartbeat() -> None:
        nonlocal beats
        while True:
            await asyncio.sleep(0.05)
            beats += 1

    beating = asyncio.create_task(heartbeat())
    try:
        answer = await gateway(scripted, store, records).complete(ask())
    finally:
        beating.cancel()
        loop.set_debug(False)
    assert beats >= 10  # the loop ran while the write waited for the lock
    assert [r.getMessage() for r in caplog.records if " took " in r.getMessage()] == []
    again = await gateway(scripted, store, records).complete(ask())
    assert again == answer and len(scripted.calls) == 1  # written once the lock was gone


class ReadRecordingStore(CacheStore):
    """The real store, noting the keys of every read the gateway makes."""

    def __init__(self, directory: Path, *, fail: Exception | None = None) -> None:
        super().__init__(directory)
        self.reads: list[list[str]] = []
        self.fail = fail

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        self.reads.append(list(keys))
        if self.fail is not None:
            raise self.fail
        return super().get_many(keys)


async def test_reads_asked_in_one_loop_turn_are_one_query(scripted: ScriptedProvider, tmp_path: Path,
                                                          records: list[CallRecord]) -> None:
    with ReadRecordingStore(tmp_path / "cache") as store:
        gw = gateway(scripted, store, records)
        stored = await asyncio.gather(*(gw.complete(ask(f"Plan trip {i}.")) for i in range(10)))
        assert [len(keys) for keys in store.reads] == [10]  # ten misses, found so by one query
        store.reads.clear()
        replay = gateway(scripted, store, records, CacheMode.REPLAY)
        readers = [asyncio.create_task(replay.complete(ask(f"Plan trip {i}."))) for i in range(10)]
        await asyncio.sleep(0)  # every reader is now waiting for the read
        readers[4].cancel()
        answers = await asyncio.gather(*readers, return_exceptions=True)
        assert [len(keys) for keys in store.reads] == [10]
        assert isinstance(answers[4], asyncio.CancelledError)
        assert answers[:4] + answers[5:] == stored[:4] + stored[5:] and len(scripted.calls) == 10
        assert [record.hit for record in records[10:]] == [True] * 9  # the cancelled reader made no call
        assert store.stats().hits == 10  # its key was read, and counted, before it was cancelled


async def test_a_failing_read_fails_every_reader_of_that_turn(scripted: ScriptedProvider, tmp_path: Path,
                                                              records: list[CallRecord]) -> None:
    with ReadRecordingStore(tmp_path / "cache", fail=RuntimeError("the disk is on fire")) as store:
        gw = gateway(scripted, store, records)
        answers = await asyncio.wait_for(asyncio.gather(*(gw.complete(ask(f"Plan trip {i}.")) for i in range(3)),
                                                        return_exceptions=True), timeout=5)
        assert [str(answer) for answer in answers] == ["the disk is on fire"] * 3 and scripted.calls == []
        store.fail = None
        assert (await gw.complete(ask("Plan trip 1."))).text and len(store.reads) == 2  # the next turn reads again
