"""A SIGTERM in the first instants of `tripbench run` (a supervisor stopping it at once) is an interruption: exit 130,
as later in the run, not the end of the process by the signal."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from runner.store.results import load_run
from tests.runner.engine_support import rollouts_stored, run_cli, start_run

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (`SigCgt` in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) & SIGTERM_BIT)


async def test_a_sigterm_before_the_run_started_exits_130(start_mock_llm, write_spec, tmp_path: Path,
                                                          toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, options={"tasks": 5, "max_calls": 1})
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    while process.returncode is None and not catches_sigterm(process.pid):
        await asyncio.sleep(0.001)
    assert not run_dir.exists()  # tripbench catches SIGTERM before it opens the run, not once its rollouts start
    process.send_signal(signal.SIGTERM)
    output, _ = await process.communicate()
    assert process.returncode == 130, output.decode()
    assert "Traceback" not in output.decode()


async def test_a_sigterm_while_the_finished_rollouts_are_scored_exits_130_with_the_session_closed(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    """After the rollouts, scoring (seconds, here) is cut short: exit 130 and an `interrupted` session, never the end
    of the process by the signal (143) leaving its session unclosed ("killed"); the same command then scores."""
    server = await start_mock_llm()
    spec = write_spec(server.base_url, evaluate=["official"], options={"tasks": 3, "max_calls": 1, "evaluate_s": 3.0})
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    while process.returncode is None and rollouts_stored(run_dir) != 3:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)  # the scheduler is done: the last pass of scoring runs
    assert process.returncode is None
    process.send_signal(signal.SIGTERM)
    output, _ = await process.communicate()
    assert process.returncode == 130, output.decode()
    assert "Traceback" not in output.decode()
    status = run_cli("status", str(run_dir), "--json")
    assert json.loads(status.stdout)["state"] == "interrupted", status.stdout

    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    with load_run(run_dir) as results:
        assert len(results.evaluations("official")) == 3
