"""`tripbench run` as a subprocess, killed and resumed: nothing lost, nothing duplicated, nothing paid twice."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
from pathlib import Path

from runner.mock_server import MockConfig
from runner.store.results import load_run
from runner.store.summary import session_state
from tests.runner.engine_support import reference, start_run, stored, until_rollouts_stored
from tests.runner.toy_benchmark import ToyOptions

CONCURRENCY = 8


async def test_sigkill_at_random_moments_then_resume(start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.01}))
    options = {"tasks": 400, "max_calls": 20, "long_every": 3}
    spec = write_spec(server.base_url, concurrency=CONCURRENCY, options=options)
    run_dir = tmp_path / "run"
    rng = random.Random(20261122)
    kills = 0
    states = []  # what each session must read as: a process that finished before its kill completed its session
    for _ in range(6):
        process = await start_run(spec, run_dir)
        await until_rollouts_stored(run_dir, process, more=rng.randint(1, 20))
        await asyncio.sleep(rng.uniform(0.0, 0.5))
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        await process.wait()
        states.append("killed" if process.returncode == -signal.SIGKILL else "completed")
    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()

    expected = await reference(ToyOptions(**options))
    assert stored(run_dir) == expected
    with load_run(run_dir) as results:
        assert len(results.rollouts) == 400 and len({r.key for r in results.rollouts}) == 400
        assert len(results.calls()) == sum(r.calls for r in results.rollouts)
        assert [session_state(s) for s in results.sessions] == states + ["completed"]
        billed = (server.tally.input_tokens * 1.0 + server.tally.output_tokens * 2.0) / 1e6  # the toy spec's prices
        assert results.spent_usd + results.reserved_usd >= billed - 1e-12  # every paid call is in the ledger
    unique_calls = sum(len(steps) for _, _, steps in expected.values())
    assert kills >= 5
    # Calls answered before a kill are in the cache: only those in flight at a kill can be paid for twice.
    assert unique_calls <= server.tally.served <= unique_calls + kills * CONCURRENCY


async def test_sigint_stops_gracefully_and_says_how_to_resume(start_mock_llm, write_spec, tmp_path: Path,
                                                               toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.05}))
    options = {"tasks": 60, "max_calls": 10}
    spec = write_spec(server.base_url, concurrency=CONCURRENCY, options=options)
    run_dir = tmp_path / "run"

    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, more=5)
    process.send_signal(signal.SIGINT)
    output, _ = await process.communicate()

    assert process.returncode == 130, output.decode()
    assert f"--run-dir {run_dir}" in output.decode() and "Traceback" not in output.decode()
    # acknowledged when it came, before the rollouts in flight ended and the summary was printed
    assert re.search(r"stopping: \d+ rollouts in flight, finishing .*\n(.*\n)*interrupted: ", output.decode())
    with load_run(run_dir) as results:
        assert results.sessions[-1].outcome == "interrupted"
        assert 5 <= len(results.rollouts) < 60
    served = server.tally.served

    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    assert stored(run_dir) == await reference(ToyOptions(**options))
    # In-flight rollouts finished within the grace period: the resumed run paid for no call twice.
    total = sum(len(steps) for _, _, steps in (await reference(ToyOptions(**options))).values())
    assert server.tally.served == total and served < total
    assert os.path.isfile(run_dir / "outputs/toy/scripted/submission.jsonl")


async def test_a_second_sigint_under_adaptive_concurrency_stores_nothing_crashed(start_mock_llm, write_spec,
                                                                                  tmp_path: Path,
                                                                                  toy_on_path) -> None:
    """The issue's reproduction: a local OpenAI-compatible server (concurrency "auto", the default), rpm 120, no
    cache; Ctrl-C, then Ctrl-C again 2 s later. The rollouts cut short are not stored (none as `crashed`, with a
    traceback for a reason), and the same command runs every one of them."""
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.3}))
    options = {"tasks": 30, "max_calls": 6}
    model = {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "rpm": 120}
    spec = write_spec(server.base_url, cache="off", models=[model], options=options)
    run_dir = tmp_path / "run"

    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, more=2)
    process.send_signal(signal.SIGINT)
    await asyncio.sleep(2.0)
    process.send_signal(signal.SIGINT)
    output, _ = await process.communicate()
    assert process.returncode == 130, output.decode()
    assert "Traceback" not in output.decode()
    with load_run(run_dir) as results:
        assert {r.status for r in results.rollouts} == {"delivered"}, output.decode()
        assert len(results.rollouts) < 30

    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    assert stored(run_dir) == await reference(ToyOptions(**options))
