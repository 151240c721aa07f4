"""Whole runs of the toy benchmark through the real engine, gateway, OpenAI SDK and mock server."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

from benchmarks.base import BUDGET_EXHAUSTED, CALL_LIMIT, CRASHED, DELIVERED
from cache import CacheStore
from errors import UserError
from runner.engine.dryrun import estimate
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.engine.scheduler import BUDGET, COMPLETED
from runner.mock_server import MockConfig
from runner.store.results import load_run
from tests.runner.engine_support import PRICE, billed_usd, reference, stored
from tests.runner.toy_benchmark import ToyOptions


async def test_a_thousand_rollouts_equal_the_sequential_reference(start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    options = {"tasks": 1000, "max_calls": 30, "long_every": 16}
    spec = write_spec(server.base_url, concurrency=256, options=options)
    report = await execute(prepare(spec), tmp_path / "run", show_progress=False)

    assert report.outcome == COMPLETED and report.ran == 1000
    assert report.statuses == {DELIVERED: 1000}
    expected = await reference(ToyOptions(**options))
    assert stored(tmp_path / "run") == expected
    with load_run(tmp_path / "run") as results:
        calls = results.calls()
        assert len(calls) == sum(len(steps) for _, _, steps in expected.values()) == server.tally.served
        assert 25 <= max(len(steps) for _, _, steps in expected.values()) <= 30
        assert sum(c.call.usage.input_tokens for c in calls) == server.tally.input_tokens
        assert sum(c.call.usage.output_tokens for c in calls) == server.tally.output_tokens
    lines = (tmp_path / "run/outputs/toy/scripted/submission.jsonl").read_text().splitlines()
    assert [json.loads(line)["task"] for line in lines] == [str(n) for n in range(1000)]
    assert [json.loads(line)["answer"] for line in lines] == [expected[str(n)][0] for n in range(1000)]


async def test_the_aiohttp_transport_gives_the_same_run_as_the_sdk(start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    options = {"tasks": 200, "max_calls": 10, "long_every": 4}
    for transport in ("sdk", "aiohttp"):
        model = {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "transport": transport}
        spec = write_spec(server.base_url, name=f"{transport}.toml", cache_dir=f"cache-{transport}", models=[model],
                          options=options)
        report = await execute(prepare(spec), tmp_path / transport, show_progress=False)
        assert report.statuses == {DELIVERED: 200}
    assert stored(tmp_path / "sdk") == stored(tmp_path / "aiohttp") == await reference(ToyOptions(**options))
    usage = {}
    for transport in ("sdk", "aiohttp"):
        with load_run(tmp_path / transport) as results:
            task_of = {r.id: r.key.task for r in results.rollouts}
            usage[transport] = {(task_of[c.rollout_id], c.idx): c.call.usage for c in results.calls()}
    assert usage["sdk"] == usage["aiohttp"] and 2 * len(usage["aiohttp"]) == server.tally.served


async def test_a_rerun_is_free_and_identical(start_mock_llm, write_spec, tmp_path: Path, strict_loop) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, options={"tasks": 30, "max_calls": 12})
    await execute(prepare(spec), tmp_path / "first", show_progress=False)
    served = server.tally.served

    report = await execute(prepare(spec), tmp_path / "second", show_progress=False)

    assert report.statuses == {DELIVERED: 30}
    assert server.tally.served == served  # every call came from the cache
    assert stored(tmp_path / "second") == stored(tmp_path / "first")
    with load_run(tmp_path / "second") as results:
        assert all(r.cache_hits == r.calls and r.cost_usd == 0 and r.saved_usd > 0 for r in results.rollouts)


async def test_the_spend_cap_holds_under_hundreds_of_concurrent_rollouts(start_mock_llm, write_spec,
                                                                        tmp_path: Path) -> None:
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.02}))
    cap = 3.0
    model = {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "prices": PRICE}
    options = {"tasks": 300, "max_calls": 6}
    spec = write_spec(server.base_url, concurrency=300, max_cost=cap, models=[model], options=options)

    report = await execute(prepare(spec), tmp_path / "run", show_progress=False)

    billed = billed_usd(server)
    with load_run(tmp_path / "run") as results:
        recorded = sum(r.cost_usd for r in results.rollouts)
        statuses = {r.status for r in results.rollouts}
        assert results.spent_usd == pytest.approx(recorded)
    assert report.outcome == BUDGET
    assert recorded <= cap and billed == pytest.approx(recorded)
    # Reservations are worst cases: calls wait for them to settle, so only the cap itself cuts rollouts.
    assert recorded > 0.9 * cap
    assert BUDGET_EXHAUSTED in statuses and DELIVERED in statuses

    # Resumed with a higher cap, the cut rollouts run again and the run ends as if never capped.
    spec = write_spec(server.base_url, concurrency=300, max_cost=1000.0, models=[model], options=options)
    report = await execute(prepare(spec), tmp_path / "run", show_progress=False)
    assert report.outcome == COMPLETED
    assert stored(tmp_path / "run") == await reference(ToyOptions(**options))
    with load_run(tmp_path / "run") as results:
        assert len(results.rollouts) == 300
        assert results.spent_usd == pytest.approx(billed_usd(server))


async def test_resume_refuses_a_result_changing_spec_and_extends_only_when_asked(start_mock_llm, write_spec,
                                                                                    tmp_path: Path) -> None:
    server = await start_mock_llm()
    await execute(prepare(write_spec(server.base_url, limit=5, options={"max_calls": 4})), tmp_path / "run",
                  show_progress=False)
    # Another cap or concurrency: the same run, resumed.
    same = write_spec(server.base_url, limit=5, concurrency=3, max_cost=50.0, options={"max_calls": 4})
    report = await execute(prepare(same), tmp_path / "run", show_progress=False)
    assert (report.pending, report.ran) == (0, 0)
    # More tasks: another run, unless extended on purpose.
    grown = write_spec(server.base_url, limit=8, concurrency=3, max_cost=50.0, options={"max_calls": 4})
    with pytest.raises(UserError, match=r"tasks: 5, 6, 7 not in the run.*--extend"):
        await execute(prepare(grown), tmp_path / "run", show_progress=False)
    report = await execute(prepare(grown), tmp_path / "run", show_progress=False, extend=True)
    assert (report.pending, report.ran) == (3, 3)

    changed = write_spec(server.base_url, limit=8, sampling={"temperature": 0.7}, options={"max_calls": 5})
    with pytest.raises(UserError, match=r"other settings for models\.toy\.temperature, options\.max_calls, "
                                        r"sampling\.temperature"):
        await execute(prepare(changed), tmp_path / "run", show_progress=False)
    with pytest.raises(UserError, match=r"models\.toy\.temperature: unset then, 0\.7 now"):  # never forced
        await execute(prepare(changed), tmp_path / "run", force=True, show_progress=False)
    options_only = write_spec(server.base_url, limit=8, options={"max_calls": 5})
    report = await execute(prepare(options_only), tmp_path / "run", force=True, show_progress=False)
    assert (report.pending, report.ran) == (0, 0)  # forced: the finished keys are kept as they are


async def test_strategy_crashes_and_call_limits_are_recorded_not_fatal(start_mock_llm, write_spec,
                                                                      tmp_path: Path) -> None:
    server = await start_mock_llm()
    options = {"tasks": 12, "max_calls": 6, "crash_task": "3"}
    spec = write_spec(server.base_url, strategies=["scripted", "silent"], max_calls=4, options=options)

    report = await execute(prepare(spec), tmp_path / "run", show_progress=False)

    with load_run(tmp_path / "run") as results:
        by_task = {r.key.task: r for r in results.rollouts if r.key.strategy == "scripted"}
        tasks = {t.id: t.input["calls"] for t in results.tasks()}
        evaluations = results.evaluations("official")
    assert by_task["3"].status == CRASHED and "scripted crash" in by_task["3"].error
    assert by_task["3"].error_type == "RuntimeError"
    for task_id, rollout in by_task.items():
        if task_id != "3":
            assert rollout.status == (CALL_LIMIT if tasks[task_id] > 4 else DELIVERED), task_id
            assert rollout.calls == min(tasks[task_id], 4)
    assert report.statuses[DELIVERED] == 12 + sum(r.status == DELIVERED for r in by_task.values())
    assert len(evaluations) == 24
    assert evaluations[by_task["0"].id].verdicts[0].passed is (by_task["0"].status == DELIVERED)


async def test_a_crashed_rollouts_stored_traceback_holds_no_secret(start_mock_llm, write_spec, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A strategy's exception may quote a secret (a connection string, a key): the traceback stored in the run's
    files goes through `errors.redaction`."""
    monkeypatch.setenv("TOY_SERVICE_TOKEN", "scripted crash")  # the exception's message, as if it held a token
    server = await start_mock_llm()
    spec = write_spec(server.base_url, options={"tasks": 4, "crash_task": "3"})
    await execute(prepare(spec), tmp_path / "run", show_progress=False)
    with load_run(tmp_path / "run") as results:
        crashed = [r for r in results.rollouts if r.status == CRASHED]
    assert len(crashed) == 1 and "RuntimeError: [redacted]" in crashed[0].error
    assert "scripted crash" not in (tmp_path / "run" / "results.sqlite").read_bytes().decode("latin-1")


async def test_dry_run_counts_cached_calls_as_free(start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    options = {"tasks": 20, "max_calls": 8}
    await execute(prepare(write_spec(server.base_url, limit=10, options=options)), tmp_path / "done",
                  show_progress=False)
    served = server.tally.served

    spec = write_spec(server.base_url, expected_calls=5, options=options)
    estimates, assumption = await estimate(prepare(spec), tmp_path / "fresh")

    (toy,) = estimates
    assert server.tally.served == served  # a dry run sends nothing
    assert toy.rollouts == 20
    assert toy.cached_calls == served  # the first ten tasks replay entirely from the cache
    assert toy.new_calls == 10 * 5  # the other ten miss at their first call: five calls each expected
    assert toy.cost_usd is not None and toy.cost_usd > 0
    assert "expected_calls" in assumption


async def test_a_dry_run_leaves_the_cache_statistics_alone(start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    options = {"tasks": 6, "max_calls": 4}
    await execute(prepare(write_spec(server.base_url, limit=3, options=options)), tmp_path / "done",
                  show_progress=False)
    with CacheStore(tmp_path / "cache") as cache:
        before = cache.stats()

    (toy,), _ = await estimate(prepare(write_spec(server.base_url, options=options)), tmp_path / "fresh")

    assert toy.cached_calls > 0 and toy.new_calls > 0  # it did read the cache, hits and misses
    with CacheStore(tmp_path / "cache") as cache:
        assert cache.stats() == before


async def test_a_rejected_key_ends_the_run_not_each_rollout(start_mock_llm, write_spec, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_mock_llm(MockConfig(api_keys=("right-key",)))
    monkeypatch.setenv("TOY_KEY", "wrong-key")
    model = {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "api_key_env": "TOY_KEY"}
    spec = write_spec(server.base_url, models=[model], options={"tasks": 40, "max_calls": 3})

    with pytest.raises(UserError, match="toy: the provider rejected the credentials") as caught:
        await execute(prepare(spec), tmp_path / "run", show_progress=False)

    assert "wrong-key" not in str(caught.value)
    with load_run(tmp_path / "run") as results:
        assert results.rollouts == [] and results.sessions[-1].outcome == "failed"
    assert server.tally.statuses["401"] <= 32  # at most one wave (concurrency 32): then the run stopped


async def test_rollouts_are_scored_while_the_run_goes_on(start_mock_llm, write_spec, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.engine import execute as engine

    monkeypatch.setattr(engine, "EVALUATE_EVERY_S", 0.05)
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.02}))
    spec = write_spec(server.base_url, concurrency=2, evaluate=["official"], options={"tasks": 40, "max_calls": 3})
    run = asyncio.ensure_future(execute(prepare(spec), tmp_path / "run", show_progress=False))
    scored_mid_run = 0
    while not run.done() and not scored_mid_run:
        await asyncio.sleep(0.05)
        if (tmp_path / "run/results.sqlite").is_file():
            with contextlib.suppress(UserError), load_run(tmp_path / "run") as results:
                scored_mid_run = len(results.evaluations("official"))
    report = await run
    assert scored_mid_run > 0 and report.ran == 40  # some were scored before the last rollout ended
    with load_run(tmp_path / "run") as results:
        assert len(results.evaluations("official")) == 40
