"""Helpers of the runner tests (engine, store, CLI, team) and of every test that runs `tripbench`: the CLI as a
subprocess, the toy benchmark's reference results, run reading."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from benchmarks.base import DELIVERED
from errors import UserError
from runner.mock_server import RunningServer
from runner.store.results import load_run
from tests.runner.toy_benchmark import ToyBenchmark, ToyOptions, reference_result

PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""On PYTHONPATH for subprocesses, so the `tests` package (and the toy benchmark in it) imports there too."""

TOY = "tests.runner.toy_benchmark:ToyBenchmark"
"""The toy benchmark as a run spec names it."""

CLI = [sys.executable, "-c", "from runner.cli.main import main; main()"]
"""`tripbench` as a subprocess, from the interpreter running the tests."""


def run_cli(*args: str, home: Path | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`tripbench ARGS` to completion, able to import the toy benchmark; output captured as text. `home` is the data
    home (`TRIPBENCH_HOME`), `cwd` the folder it runs in."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **({"TRIPBENCH_HOME": str(home)} if home else {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=False, env=env, cwd=cwd)


PRICE = {"input": 1000.0, "output": 2000.0}
"""USD per million tokens: high enough that a toy call costs cents and a cap bites quickly."""


def interrupt(process: subprocess.Popen[str], timeout_s: float = 30) -> None:
    """Ctrl-C to a command started by a test (a standalone mock server), then waits for it to end; one still running
    after `timeout_s` is killed and fails the test (raised from a `finally`, the test's own error stays attached)
    instead of hanging the suite in `Popen.__exit__`."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"{process.args!r} still running {timeout_s:g} s after Ctrl-C: killed")


def billed_usd(server: RunningServer) -> float:
    """What the mock provider billed at `PRICE`: online calls at the full price, batch requests at half."""
    tally = server.tally
    online = tally.input_tokens * PRICE["input"] + tally.output_tokens * PRICE["output"]
    batch = tally.batch_input_tokens * PRICE["input"] + tally.batch_output_tokens * PRICE["output"]
    return (online + batch * 0.5) / 1e6


async def reference(options: ToyOptions) -> dict[str, tuple]:
    """Task id -> (answer, plan, steps) of the scripted strategy run sequentially in-process."""
    results = {}
    for task in ToyBenchmark().load_tasks("train", options):
        result = await reference_result(task)
        results[task.id] = (result.answer, result.plan, result.steps)
    return results


def stored(run_dir: Path, strategy: str = "scripted") -> dict[str, tuple]:
    with load_run(run_dir) as results:
        return {r.key.task: (r.answer, r.plan, results.steps(r.id)) for r in results.rollouts
                if r.key.strategy == strategy and r.status == DELIVERED}


async def start_run(spec: Path, run_dir: Path, *args: str, quiet: bool = True) -> asyncio.subprocess.Process:
    """`tripbench run SPEC --run-dir RUN_DIR [--quiet] ARGS` in a subprocess, stdout and stderr on one pipe."""
    flags = ("--quiet",) * quiet
    return await asyncio.create_subprocess_exec(*CLI, "run", str(spec), "--run-dir", str(run_dir), *flags, *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)


def rollouts_stored(run_dir: Path) -> int | None:
    """The rollouts committed in a run directory; None while its store cannot be read (its schema not made yet, or
    locked by the process starting on it)."""
    if not (run_dir / "results.sqlite").is_file():
        return 0
    with contextlib.suppress(UserError), load_run(run_dir) as results:
        return len(results.rollouts)
    return None


async def until_rollouts_stored(run_dir: Path, process: asyncio.subprocess.Process, more: int = 1) -> None:
    """Waits until this process has committed `more` rollouts (so a kill lands mid-run, after its session began), or
    until it ended. The count it starts from is a real one: an unreadable store counted as 0 let a kill land before
    the process had stored anything."""
    target: int | None = None
    while process.returncode is None:
        count = rollouts_stored(run_dir)
        if count is not None:
            target = count + more if target is None else target
            if count >= target:
                return
        await asyncio.sleep(0.05)
