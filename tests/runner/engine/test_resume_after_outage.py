"""Resuming after a provider outage: rollouts that ended with a transient provider error run again, nothing else does,
and every rollout is still stored and reported once."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from benchmarks.base import BUDGET_EXHAUSTED, CRASHED, DELIVERED, INTERRUPTED, PROVIDER_ERROR, TOKEN_LIMIT
from reports.collect import collect_run
from runner.engine.dryrun import estimate
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.mock_server import serve
from runner.outcomes import runs_again
from runner.store.results import load_run
from tests.runner.engine_support import CLI, PRICE, reference, start_run
from tests.runner.toy_benchmark import ToyOptions

OPTIONS = {"tasks": 12, "max_calls": 6}
ANSWERED = 3
"""Calls the failing provider answers before its outage: task 0 (4 calls) fails at its last one."""
FOR_GOOD = 10_000
"""Scripted faults enough for every request a session sends (cleared when the provider is back)."""


def model(server, name: str) -> dict[str, object]:
    # Every server serves the model `toy`, so all three answer like the toy reference (the endpoint keys the cache).
    return {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": name, "prices": {"input": 1.0,
                                                                                              "output": 2.0}}


@pytest.mark.parametrize(("status", "error_type", "again"), [
    (PROVIDER_ERROR, "RateLimited", True),
    (PROVIDER_ERROR, "ServerError", True),
    (PROVIDER_ERROR, "ProviderTimeout", True),
    (PROVIDER_ERROR, "NotSent", True),  # no connection was made: an outage, never billed
    (PROVIDER_ERROR, "BadRequest", False),  # a content filter or refusal is the model's outcome: never re-drawn
    (PROVIDER_ERROR, "BatchRequestLost", True),  # expired or cancelled in every batch it was sent in
    (PROVIDER_ERROR, "BatchUnreadable", True),
    (PROVIDER_ERROR, "BatchUnanswered", True),  # its batch stays live: the resume reads it
    (BUDGET_EXHAUSTED, "BudgetExhausted", True),
    (DELIVERED, None, False),
    (TOKEN_LIMIT, "ContextTooLong", False),
    (CRASHED, "RuntimeError", False),  # a strategy bug: re-running it gives the same crash
    (CRASHED, "DatabaseError", True),  # the machine's fault (a damaged cache, a full disk): it runs again
    (CRASHED, "OperationalError", True),
    (CRASHED, "OSError", True),
    (CRASHED, "TeamUnavailable", True),  # stored so by tripbench before the `interrupted` status: runs again
    (INTERRUPTED, "TeamUnavailable", True),  # our machinery stopped it, whatever the exception: it runs again
    (INTERRUPTED, "ShardLost", True),
    ("max_steps", None, False),  # a benchmark's own status: the agent's failure
])
def test_which_stored_rollouts_a_resume_runs_again(status: str, error_type: str | None, again: bool) -> None:
    assert runs_again(status, error_type) is again


async def test_a_resume_after_an_outage_reruns_only_the_unavailable_providers_rollouts(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    healthy, down, refusing = await start_mock_llm(), await start_mock_llm(), await start_mock_llm()
    # The overnight outage, after a few answers: quota gone for an hour (a Retry-After past the retry policy's bound
    # is not waited for, so the rollouts end at once).
    down.plan.delay_next(0.0, times=ANSWERED)
    down.plan.fail_next(429, retry_after=3600, times=FOR_GOOD)
    refusing.plan.fail_next(400, times=FOR_GOOD)
    # One rollout at a time on the failing provider, so the outage strikes the same calls on every test run.
    spec = write_spec(healthy.base_url, options=OPTIONS, models=[model(healthy, "toy"), model(down, "down") | {
        "concurrency": 1}, model(refusing, "refusing")])
    run_dir = tmp_path / "run"

    first = await execute(prepare(spec), run_dir, show_progress=False)

    assert first.statuses == {DELIVERED: 12, PROVIDER_ERROR: 24} and not first.rerun
    with load_run(run_dir) as results:
        before = {r.key: r for r in results.rollouts}
    assert {r.error_type for r in before.values() if r.key.model == "down"} == {"RateLimited"}
    assert {r.error_type for r in before.values() if r.key.model == "refusing"} == {"BadRequest"}
    assert sum(r.calls - 1 for r in before.values() if r.key.model == "down") == ANSWERED == down.tally.served
    served, refused = healthy.tally.requests, refusing.tally.requests
    estimates, _ = await estimate(prepare(spec), run_dir)  # --dry-run plans the same re-runs
    assert {e.model: e.rollouts for e in estimates} == {"toy": 0, "down": 12, "refusing": 0}
    down.plan.clear()  # the provider is back; the refusing one would now answer too, but its errors were final
    refusing.plan.clear()

    process = await asyncio.create_subprocess_exec(*CLI, "run", str(spec), "--run-dir", str(run_dir), "--quiet",
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output = (await process.communicate())[0].decode()

    assert process.returncode == 0, output
    assert "run again in this session: 12 stored rollouts that had ended as provider_error 12" in output
    assert healthy.tally.requests == served and refusing.tally.requests == refused  # untouched: no call made
    expected = await reference(ToyOptions(**OPTIONS))
    with load_run(run_dir) as results:
        after = {r.key: r for r in results.rollouts}
        assert len(results.rollouts) == len(after) == 36  # replaced, not duplicated
        for key, rollout in after.items():
            if key.model == "down":
                assert (rollout.status, rollout.session, rollout.error_type) == (DELIVERED, 2, None)
                assert (rollout.answer, rollout.plan) == expected[key.task][:2]
            else:
                assert rollout == before[key]
        assert len(results.calls()) == sum(r.calls for r in after.values())
        # The calls answered before the outage replay from the cache: nothing was paid for twice.
        assert sum(after[key].cache_hits for key in after if key.model == "down") == ANSWERED
        assert down.tally.served == sum(len(expected[key.task][2]) for key in after if key.model == "down")
        billed = sum(s.tally.input_tokens * 1.0 + s.tally.output_tokens * 2.0 for s in (healthy, down)) / 1e6
        assert results.spent_usd == pytest.approx(billed)
        assert len(results.evaluations("official")) == 36
        assert results.sessions[-1].planned == {m: {"scripted": 12} for m in ("toy", "down", "refusing")}
    groups = {g.model: g for g in collect_run(run_dir).groups}
    assert {m: len(g.rollouts) for m, g in groups.items()} == {"toy": 12, "down": 12, "refusing": 12}
    assert all(view.stored.status == DELIVERED for view in groups["down"].rollouts)
    assert (run_dir / "outputs/down/scripted/submission.jsonl").is_file()

    # Resumed once more: everything has its final result, nothing runs again.
    report = await execute(prepare(spec), run_dir, show_progress=False)
    assert (report.pending, report.ran, report.rerun) == (0, 0, {})


def free_port() -> int:
    """A port nothing listens on (until the test starts its server there)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def answer_once(port: int) -> asyncio.Server:
    """A server that answers the run's start-up check (`runner.engine.preflight`: one request) and then stops
    listening, so that every call of the run is refused a connection: an outage that began once the run started."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.close()
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    return server


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
async def test_requests_refused_a_connection_are_released_and_the_cap_is_whole_when_the_server_is_back(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path, transport: str) -> None:
    """Nothing left the machine (connection refused), so nothing stays reserved: the outage ends as provider errors
    (exit 4), not at the spend cap, and once the server is back the same command finishes the run."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    toy = {"model": f"openai-compatible:toy@{url}/v1", "name": "toy", "transport": transport, "prices": PRICE}
    # A toy call's worst case is about $0.075 and an answered one costs about $0.047: the ten attempts the outage
    # fails would hold $0.75 of the cap for good without the release, and the run could not finish under it.
    spec = write_spec(url, models=[toy], max_cost=1.0, concurrency=2, options={"tasks": 5, "max_calls": 2},
                      retry={"max_attempts": 2, "base_delay_s": 0.01})
    run_dir = tmp_path / "run"
    checked = await answer_once(port)
    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    await checked.wait_closed()
    with load_run(run_dir) as results:
        spent, reserved = results.spent_usd, results.reserved_usd
        errors = {r.error_type for r in results.rollouts}
    print(f"\nafter the outage ({transport}): ${spent:.4f} spent, ${reserved:.4f} reserved, exit {process.returncode}")
    assert (spent, reserved) == (0.0, 0.0), output.decode()
    assert process.returncode == 4 and errors == {"NotSent"}, output.decode()

    server = await serve("127.0.0.1", port)  # the server is back
    try:
        process = await start_run(spec, run_dir)
        output, _ = await process.communicate()
    finally:
        await server.close()
    assert process.returncode == 0, output.decode()
    with load_run(run_dir) as results:
        assert {r.status for r in results.rollouts} == {DELIVERED} and results.reserved_usd == 0.0
