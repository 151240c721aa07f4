"""`batch = "planner"`: only the Planner's calls through the batch API, the agent's steps online, through the real CLI
and the mock server's batch API, against a fully online and a fully batched run of the same rollouts.

The toy benchmark's rollouts (`planner_last`) make their last call as the Planner's (`providers.stages.PLANNER`) after
up to five agent steps, each prompt depending on every earlier reply.
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.mock_server import MockConfig, RunningServer
from runner.store.results import load_run
from tests.runner.engine.test_batch_runs import BATCHING, KEY_ENV, batch_model
from tests.runner.engine_support import billed_usd, reference, run_cli, start_run, stored
from tests.runner.toy_benchmark import ToyOptions

OPTIONS = {"tasks": 30, "max_calls": 6, "planner_last": True}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch, toy_on_path: None) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-batch-test-key")


@dataclass(frozen=True, slots=True)
class Sent:
    """What one run sent to the mock server, and what it paid."""

    online: int
    batch_requests: int
    batches: int
    spent_usd: float


async def _run(server: RunningServer, write_spec, tmp_path: Path, name: str, batch: bool | str,
               cache: str | None = None) -> Sent:
    """A run of `OPTIONS` through the CLI with the model's `batch` set, in its own run folder (and cache, unless
    `cache` names another run's): what it sent."""
    spec = write_spec(server.base_url, name=f"{name}.toml", concurrency=30, cache_dir=f"cache-{cache or name}",
                      models=[{**batch_model(server), "batch": batch}], options=OPTIONS,
                      # a longer flush gathers the Planner's calls, which rollouts of 1 to 6 calls reach at
                      # different times, in a few rounds
                      **{**BATCHING, "batch_flush_s": 0.5})
    tally = server.tally
    before = tally.served, tally.batch_served, tally.batches
    process = await start_run(spec, tmp_path / name)
    output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, output.decode()
    with load_run(tmp_path / name) as results:
        spent = results.spent_usd
    return Sent(tally.served - before[0], tally.batch_served - before[1], tally.batches - before[2], spent)


async def test_the_planners_calls_go_in_batches_the_steps_online_with_the_online_results(
        start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.2}))
    online = await _run(server, write_spec, tmp_path, "online", False)
    planner = await _run(server, write_spec, tmp_path, "planner", "planner")
    batched = await _run(server, write_spec, tmp_path, "batched", True)

    expected = await reference(ToyOptions(**OPTIONS))
    assert stored(tmp_path / "online") == stored(tmp_path / "planner") == stored(tmp_path / "batched") == expected
    calls = online.online
    assert online.batch_requests == 0 and batched.online == 0 and batched.batch_requests == calls
    # one Planner call per rollout in a batch, every step online
    assert planner.batch_requests == OPTIONS["tasks"] and planner.online == calls - OPTIONS["tasks"]
    with load_run(tmp_path / "planner") as results:
        by_rollout: dict[int, list[bool]] = {}
        for call in results.calls():
            by_rollout.setdefault(call.rollout_id, []).append(call.call.batched)
    assert all(flags == [False] * (len(flags) - 1) + [True] for flags in by_rollout.values())
    # each rollout waits for one round, not one per step as in a fully batched run; the Planner's calls of rollouts
    # that reach it at different times go in different rounds, still fewer than the steps' rounds
    assert OPTIONS["max_calls"] <= batched.batches and planner.batches < batched.batches
    assert batched.spent_usd < planner.spent_usd < online.spent_usd
    # the toy's calls are about one size: the Planner's (one in `calls / tasks`) at half price
    assert planner.spent_usd == pytest.approx(online.spent_usd - batched.spent_usd * OPTIONS["tasks"] / calls, rel=0.2)

    # The same calls are the same cache entries whichever way they were sent: the Planner mode answered from the
    # online run's cache sends nothing and pays nothing.
    again = await _run(server, write_spec, tmp_path, "again", "planner", cache="online")
    assert (again.online, again.batch_requests, again.spent_usd) == (0, 0, 0.0)
    assert stored(tmp_path / "again") == expected


def test_the_dry_run_states_the_rounds_the_share_at_batch_price_and_the_wall_time(write_spec, tmp_path: Path) -> None:
    outputs = {}
    for batch in ("planner", True):
        model = {"model": "openai:toy", "name": "toy", "base_url": "http://127.0.0.1:9/v1", "api_key_env": KEY_ENV,
                 "prices": {"input": 1.0, "output": 2.0}, "batch": batch}  # nothing listens: nothing may be sent
        spec = write_spec("http://127.0.0.1:9", name=f"{batch}.toml", expected_calls=4, concurrency=10,
                          batch_round_s=600, batch_flush_s=60, models=[model],
                          options={"tasks": 20, "max_calls": 4, "planner_last": True})
        done = run_cli("run", str(spec), "--run-dir", str(tmp_path / str(batch)), "--dry-run")
        assert done.returncode == 0, done.stderr
        outputs[batch] = " ".join(done.stdout.split())
    # 20 rollouts, 10 at a time: 2 waves; the Planner's 1 call of 4 per rollout, at 660 s a round
    assert ("batch: toy: about 2 batch rounds one after the other (1 per rollout in 2 waves of rollouts), 25% of its "
            "new tokens at the batch price; the rounds take about 22 min") in outputs["planner"]
    assert ("batch: toy: about 8 batch rounds one after the other (4 per rollout in 2 waves of rollouts, a rollout "
            "longer than the expected calls more), 100% of its new tokens at the batch price; the rounds take about "
            "1.5 h") in outputs[True]


async def test_sigkill_during_a_planner_batch_then_resume_submits_nothing_twice(
        start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.6}))
    spec = write_spec(server.base_url, concurrency=30, models=[{**batch_model(server), "batch": "planner"}],
                      options=OPTIONS, **BATCHING)
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    while server.tally.batches == 0 and process.returncode is None:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)  # a batch of Planner calls is live at the provider
    process.send_signal(signal.SIGKILL)
    assert await process.wait() == -signal.SIGKILL
    process = await start_run(spec, run_dir)
    output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, output.decode()

    tally = server.tally
    assert max(tally.batch_requests.values()) == 1, "a Planner call in a live batch was submitted again"
    assert tally.batch_served == OPTIONS["tasks"]
    assert stored(run_dir) == await reference(ToyOptions(**OPTIONS))
    with load_run(run_dir) as results:
        assert not any(b.live for b in results.batches())
        # an online step killed in flight may have been billed: its charge stays open at its worst case (it is not
        # a batched call that never joined a batch), so the run never counts less than the provider billed
        assert results.spent_usd + results.reserved_usd >= billed_usd(server) - 1e-9
