"""Runs whose model goes through the OpenAI or Anthropic batch API of the mock server, checked against its tally.

The toy benchmark's rollouts are multi-step: each call's prompt depends on every earlier reply, so a rollout waits
on its batch at every step and a reply given to the wrong call changes the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from pathlib import Path

import pytest

from errors import UserError
from reports.build import build_report
from runner.engine.dryrun import estimate
from runner.engine.execute import RunReport, execute
from runner.engine.prepared import prepare
from runner.engine.scheduler import BUDGET, COMPLETED
from runner.mock_server import MockConfig, RunningServer
from runner.store.results import load_run
from tests.runner.engine_support import PRICE, billed_usd, reference, run_cli, start_run, stored
from tests.runner.toy_benchmark import ToyOptions

BATCH_PRICE = {**PRICE, "batch_discount": 0.5}
KEY_ENV = "TRIPBENCH_TEST_BATCH_KEY"


def batch_model(server: RunningServer, api: str = "openai", *, batch: bool = True) -> dict[str, object]:
    """The toy model (`toy`, which the echo reply repeats) through a real provider string at the mock server."""
    base_url = server.openai_base_url if api == "openai" else server.base_url
    return {"model": f"{api}:toy", "name": "toy", "base_url": base_url, "api_key_env": KEY_ENV,
            "prices": BATCH_PRICE, "batch": batch}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-batch-test-key")


BATCHING = {"batch_size": 40, "batch_flush_s": 0.2, "batch_poll_s": 0.05}


async def _delivered_batch_run(start_mock_llm, write_spec, run_dir: Path, *, batches: dict[str, object],
                               options: dict[str, int], api: str = "openai",
                               **fields: object) -> tuple[RunningServer, RunReport]:
    """A run of the toy benchmark through `api`'s batch API on a mock with `batches` settings, checked to deliver
    every task with the sequential reference's results; returns the mock, for its tally, and the run's report."""
    server = await start_mock_llm(MockConfig(batches=batches))
    spec = write_spec(server.base_url, concurrency=options["tasks"], models=[batch_model(server, api)],
                      options=options, **BATCHING, **fields)
    report = await execute(prepare(spec), run_dir, show_progress=False)
    assert report.outcome == COMPLETED and report.statuses == {"delivered": options["tasks"]}
    assert stored(run_dir) == await reference(ToyOptions(**options))
    return server, report


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_batch_run_gives_the_online_results_at_half_price(start_mock_llm, write_spec, tmp_path: Path,
                                                                  api: str) -> None:
    options = {"tasks": 60, "max_calls": 5, "long_every": 3}
    server, report = await _delivered_batch_run(start_mock_llm, write_spec, tmp_path / "run", batches={"delay_s": 0.05},
                                        options=options, api=api)
    tally = server.tally
    assert tally.served == 0 and tally.batch_served == sum(tally.batch_requests.values())
    assert max(tally.batch_requests.values()) == 1  # no request sent twice
    assert tally.batches < tally.batch_served / 2  # calls were gathered, not sent one per batch
    with load_run(tmp_path / "run") as results:
        calls = results.calls()
        assert len(calls) == tally.batch_served
        assert results.spent_usd == pytest.approx(billed_usd(server))
        assert all(c.call.batched for c in calls)
        assert all(c.call.batch_saved_usd == pytest.approx(c.call.cost_usd) for c in calls)  # half price: saved = paid
    cost = next(table for table in build_report([tmp_path / "run"]).tables() if table.name == "cost")
    (row,) = cost.rows
    saved = row[[column.name for column in cost.columns].index("saved by batch")]
    assert saved == pytest.approx(billed_usd(server))  # the report says what batching saved: the price paid again

    # The same spec run online into a new run folder is answered by the cache: identical, free, nothing sent.
    online = write_spec(server.base_url, name="online.toml", concurrency=60,
                        models=[batch_model(server, api, batch=False)], options=options)
    await execute(prepare(online), tmp_path / "online", show_progress=False)
    assert stored(tmp_path / "online") == stored(tmp_path / "run")
    assert server.tally.served == 0 and server.tally.batch_served == tally.batch_served
    with load_run(tmp_path / "online") as results:
        assert not any(c.call.batched for c in results.calls())  # answered by the cache, not a batch


async def test_expired_and_errored_batch_requests_are_retried_in_later_batches(start_mock_llm, write_spec,
                                                                               tmp_path: Path) -> None:
    server, report = await _delivered_batch_run(start_mock_llm, write_spec, tmp_path / "run",
                                        batches={"delay_s": 0.02, "expire_every": 7, "error_every": 11},
                                        options={"tasks": 40, "max_calls": 4},
                                        # a request that lands on a 7th or 11th position in batch after batch (a
                                        # batch of 7 at the end, say) fails each time: six attempts ran out once in
                                        # 1,882 tests (CI, 2026-11-28); twelve make it vanishingly rare
                                        retry={"max_attempts": 12, "base_delay_s": 0.01})
    outcomes = server.tally.batch_outcomes
    assert outcomes["expired"] > 3 and outcomes["errored"] > 2
    assert sum(n - 1 for n in server.tally.batch_requests.values()) == outcomes["expired"] + outcomes["errored"]
    with load_run(tmp_path / "run") as results:
        assert results.spent_usd == pytest.approx(billed_usd(server))  # lost and errored requests cost nothing


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_batch_made_though_its_submission_got_no_answer(start_mock_llm, write_spec, tmp_path: Path,
                                                                api: str) -> None:
    # Every 2nd batch is created, then the connection drops: the client saw its submission fail without a status.
    server, report = await _delivered_batch_run(start_mock_llm, write_spec, tmp_path / "run",
                                        batches={"delay_s": 0.02, "lose_created_every": 2},
                                        options={"tasks": 30, "max_calls": 3}, api=api,
                                        retry={"max_attempts": 8, "base_delay_s": 0.01})
    tally = server.tally
    assert tally.batches >= 2 and tally.served == 0
    # found again (OpenAI's by the tag in its metadata, Anthropic's by its requests) and polled: nothing sent twice
    assert sum(n - 1 for n in tally.batch_requests.values()) == 0
    with load_run(tmp_path / "run") as results:
        assert results.spent_usd == pytest.approx(billed_usd(server)) and results.reserved_usd == 0
    assert not [note for note in report.notes if "billed twice" in note]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_results_cut_off_while_read_are_read_again_not_sent_again(start_mock_llm, write_spec, tmp_path: Path,
                                                                        api: str) -> None:
    # Every 2nd read of a batch's results drops half-way: the batch ran and was billed, so it must be read again.
    server, report = await _delivered_batch_run(start_mock_llm, write_spec, tmp_path / "run",
                                        batches={"delay_s": 0.02, "cut_results_every": 2},
                                        options={"tasks": 30, "max_calls": 4}, api=api)
    tally = server.tally
    assert tally.batches >= 4 and max(tally.batch_requests.values()) == 1  # nothing sent twice
    with load_run(tmp_path / "run") as results:
        assert results.spent_usd == pytest.approx(billed_usd(server)) and results.reserved_usd == 0


async def test_sigkill_during_a_batch_then_resume_submits_nothing_twice(start_mock_llm, write_spec,
                                                                        tmp_path: Path, toy_on_path) -> None:
    # Each batch takes 0.6 s: the kill lands while batches are live at the provider.
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.6}))
    options = {"tasks": 50, "max_calls": 4}
    spec = write_spec(server.base_url, concurrency=50, models=[batch_model(server)], options=options,
                      batch_size=50, batch_flush_s=0.1, batch_poll_s=0.05)
    run_dir = tmp_path / "run"
    kills = 0
    for _ in range(3):
        process = await start_run(spec, run_dir)
        submitted = server.tally.batches
        while server.tally.batches == submitted and process.returncode is None:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)  # the batch is live (and billed later, whether anyone waits for it or not)
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
        kills += await process.wait() == -signal.SIGKILL
    assert kills == 3
    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()

    tally = server.tally
    assert max(tally.batch_requests.values()) == 1, "a request in a live batch was submitted again"
    assert stored(run_dir) == await reference(ToyOptions(**options))
    assert tally.served == 0 and tally.batch_served == len(tally.batch_requests)
    with load_run(run_dir) as results:
        assert results.reserved_usd == 0  # every charge the kills left open was settled when its batch ended
        # the killed sessions' batches were taken over: they ended, though their sessions never saw them end
        killed = {session.id for session in results.sessions if session.outcome is None}
        batches = results.batches()
        assert len(killed) == 3 and sum(b.session in killed and b.state == "ended" for b in batches) >= 3
        assert not any(b.live for b in batches)
        assert results.spent_usd == pytest.approx(billed_usd(server))
    status = run_cli("status", str(run_dir), "--json")
    assert status.returncode == 0, status.stderr
    assert len(json.loads(status.stdout)["batches"]) == len(batches)


def _submitted(run_dir: Path) -> bool:
    """Whether a batch of the run has its provider id stored."""
    if not (run_dir / "results.sqlite").exists():
        return False
    with contextlib.suppress(UserError), load_run(run_dir) as results:  # UserError: the store is being created
        return any(batch.provider_id for batch in results.batches())
    return False


KILLED_OPTIONS = {"tasks": 20, "max_calls": 3}


async def _killed_with_a_live_batch(server: RunningServer, write_spec, run_dir: Path) -> Path:
    """A run of `KILLED_OPTIONS` SIGKILLed once its first step's batch (all 20 requests, 0.6 s) is submitted."""
    spec = write_spec(server.base_url, concurrency=20, models=[batch_model(server)], options=KILLED_OPTIONS,
                      batch_size=20, batch_flush_s=0.1, batch_poll_s=0.05)
    process = await start_run(spec, run_dir)
    while not _submitted(run_dir) and process.returncode is None:
        await asyncio.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    assert await process.wait() == -signal.SIGKILL
    return spec


async def _resumed(spec: Path, run_dir: Path, *args: str) -> None:
    process = await start_run(spec, run_dir, *args)
    output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, output.decode()


async def test_batches_the_provider_no_longer_reports_are_resent_with_their_charges_open(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.6}))
    run_dir = tmp_path / "run"
    spec = await _killed_with_a_live_batch(server, write_spec, run_dir)
    # The resumed session's key sees none of the batches the killed one made (404): it must not wait forever.
    assert server.forget_batches() == 1
    await _resumed(spec, run_dir)

    assert stored(run_dir) == await reference(ToyOptions(**KILLED_OPTIONS))
    tally = server.tally
    assert sorted(set(tally.batch_requests.values())) == [1, 2]  # the first step's 20 requests went again
    with load_run(run_dir) as results:
        # the lost batch ran and was billed: its 20 charges stay open at their worst case, never settled at 0
        assert results.reserved_usd > 0 and results.spent_usd + results.reserved_usd >= billed_usd(server)
        assert [b.live for b in results.batches()].count(True) == 1  # a session that can read it settles it


async def test_a_taken_over_batch_stays_live_until_every_result_was_used(start_mock_llm, write_spec,
                                                                         tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.6}))
    run_dir = tmp_path / "run"
    spec = await _killed_with_a_live_batch(server, write_spec, run_dir)
    # Resumed for 5 tasks only: the batch's other 15 results, paid for, have no call to take them yet.
    await _resumed(spec, run_dir, "--limit", "5")
    with load_run(run_dir) as results:
        assert len(results.rollouts) == 5 and results.reserved_usd == 0  # its charges are settled all the same
        assert [b.live for b in results.batches()].count(True) == 1  # ...but it stays live for the other 15
    # The whole run: those 15 take their results from it; no request is sent twice.
    await _resumed(spec, run_dir)
    assert stored(run_dir) == await reference(ToyOptions(**KILLED_OPTIONS))
    assert max(server.tally.batch_requests.values()) == 1, "a paid result was lost and its request sent again"
    with load_run(run_dir) as results:
        assert not any(b.live for b in results.batches())
        assert results.spent_usd == pytest.approx(billed_usd(server))


async def test_a_model_no_longer_batched_still_takes_its_live_batch_over(start_mock_llm, write_spec,
                                                                         tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.6}))
    run_dir = tmp_path / "run"
    await _killed_with_a_live_batch(server, write_spec, run_dir)
    # Resumed online: the first step's 20 answers come from the killed session's batch, the rest online.
    online = write_spec(server.base_url, name="online.toml", concurrency=20,
                        models=[batch_model(server, batch=False)], options=KILLED_OPTIONS)
    await _resumed(online, run_dir)

    assert stored(run_dir) == await reference(ToyOptions(**KILLED_OPTIONS))
    tally = server.tally
    assert len(tally.batch_requests) == tally.batch_served == 20 and max(tally.batch_requests.values()) == 1
    with load_run(run_dir) as results:
        calls = results.calls()
        assert len(calls) == tally.served + 20  # no call sent online what the batch had answered
        assert sum(c.call.batched for c in calls) == 20
        assert not any(b.live for b in results.batches())
        assert results.reserved_usd == 0 and results.spent_usd == pytest.approx(billed_usd(server))


def _booked(run_dir: Path) -> bool:
    """Whether the run has booked a call against its spend cap (the charge is written before the call is sent)."""
    if not (run_dir / "results.sqlite").exists():
        return False
    with contextlib.suppress(UserError), load_run(run_dir) as results:  # UserError: the store is being created
        return results.reserved_usd > 0
    return False


async def test_calls_stopped_in_their_open_batch_were_never_sent_and_cost_nothing(start_mock_llm, write_spec,
                                                                                  tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.05}))
    spec = write_spec(server.base_url, concurrency=10, max_cost=5.0, models=[batch_model(server)],
                      options={"tasks": 10, "max_calls": 2}, batch_size=100, batch_flush_s=600, batch_poll_s=0.05)
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    while not _booked(run_dir) and process.returncode is None:
        await asyncio.sleep(0.05)
    process.send_signal(signal.SIGINT)  # the first stops admission; the calls wait in their open batch for 600 s
    await asyncio.sleep(0.5)
    process.send_signal(signal.SIGINT)  # the second cancels them there
    output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 130, output.decode()
    assert server.tally.batches == 0
    with load_run(run_dir) as results:  # withdrawn before their batch left: released, not kept at their worst case
        assert results.reserved_usd == 0 and results.spent_usd == 0


async def test_the_spend_cap_holds_for_batch_requests(start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.02}))
    cap = 1.5
    spec = write_spec(server.base_url, concurrency=100, max_cost=cap, models=[batch_model(server)],
                      options={"tasks": 200, "max_calls": 6}, **BATCHING)
    report = await execute(prepare(spec), tmp_path / "run", show_progress=False)

    assert report.outcome == BUDGET
    assert billed_usd(server) <= cap
    assert billed_usd(server) > cap * 0.5  # the cap was used, not refused early
    with load_run(tmp_path / "run") as results:
        assert results.spent_usd == pytest.approx(billed_usd(server))


async def test_a_dry_run_prices_a_batch_model_at_its_batch_rate(start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    options = {"tasks": 10, "max_calls": 3}
    costs = {}
    for batch in (False, True):
        spec = write_spec(server.base_url, name=f"{batch}.toml", expected_calls=3, options=options,
                          models=[batch_model(server, batch=batch)])
        (toy,), _ = await estimate(prepare(spec), tmp_path / str(batch))
        costs[batch] = toy.cost_usd
    assert server.tally.batches == server.tally.served == 0
    assert costs[False] is not None and costs[True] == pytest.approx(costs[False] * 0.5)


LOCAL = "openai-compatible:llama@http://127.0.0.1:9/v1"
"""A model whose server has no batch API (nothing listens there: a spec that passed would fail its calls)."""


@pytest.mark.parametrize(("models", "fields", "field"), [
    ([{"model": LOCAL, "batch": True}], {}, "models[0].batch"),
    # the run's default reaches every model that does not say: one that cannot batch is an error, not sent online
    ([{"model": "openai:toy", "base_url": "http://127.0.0.1:9/v1", "api_key_env": KEY_ENV}, {"model": LOCAL}],
     {"batch": True}, "batch"),
], ids=["its-own-batch", "the-run-default"])
def test_a_model_whose_provider_has_no_batch_api_is_refused_by_dry_run_and_run_alike(
        write_spec, tmp_path: Path, models: list[dict[str, object]], fields: dict[str, object], field: str) -> None:
    spec = write_spec("http://127.0.0.1:9", models=[{**model, "prices": BATCH_PRICE} for model in models],
                      options={"tasks": 2, "max_calls": 2}, retry={"max_attempts": 1}, **fields)
    dry = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--dry-run")
    run = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"))
    assert (dry.returncode, run.returncode) == (2, 2), dry.stderr + run.stderr
    assert dry.stderr == run.stderr  # one check, one message
    assert f"run.toml: {field}: expected" in run.stderr and LOCAL in run.stderr and "no batch API" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "run").exists()  # nothing started


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_batch_whose_results_cannot_be_read_ends_the_run_and_stays_live(start_mock_llm, write_spec,
                                                                                tmp_path: Path, toy_on_path,
                                                                                api: str) -> None:
    # Every read of a batch's results drops half-way: the batch ran and was billed, but no session can read it. Each
    # session gives up after `UNANSWERED` failed polls (the old code asked again for ever), and the next one takes
    # the batch over instead of sending its requests again.
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.02, "cut_results_every": 1}))
    spec = write_spec(server.base_url, concurrency=10, models=[batch_model(server, api)],
                      options={"tasks": 10, "max_calls": 3}, batch_size=10, batch_flush_s=0.1, batch_poll_s=0.01)
    run_dir = tmp_path / "run"
    for _ in range(2):
        process = await start_run(spec, run_dir)
        output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
        assert process.returncode == 4, output.decode()  # rollouts a resume runs again
    tally = server.tally
    assert tally.batches == 1 and max(tally.batch_requests.values()) == 1  # nothing sent twice
    with load_run(run_dir) as results:
        assert [batch.live for batch in results.batches()] == [True]  # a later session may still read it
        assert {(r.status, r.error_type) for r in results.rollouts} == {("provider_error", "BatchUnanswered")}
        assert results.spent_usd + results.reserved_usd >= billed_usd(server)  # its charges stay open
