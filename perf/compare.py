"""`tripbench compare` of two 10,000-rollout runs: wall time and peak memory, against the goal of 10 s and 500 MB.

Writes two synthetic Natural Plan runs with the project's own results store (`ResultsStore.save_rollout`, as a run
commits its rollouts): `--size` tasks each, every rollout with `--steps` trajectory steps of about 400 bytes and
`--calls` LLM calls with their cache keys and a stored evaluation. Run B solves a different 5 % of the tasks and
rewords the prompt from call 2 on half of them (so the comparison has discordant pairs, regressed and improved
tasks with pages, and calls that part). Then runs the real CLI in a child process,

    tripbench compare A B --out DIR

and reads the child's wall and CPU time and its peak resident memory (`resource.getrusage(RUSAGE_CHILDREN)`: the
interpreter, the imports and the comparison together).

    python perf/compare.py            # 10,000 rollouts per run (writing them takes about a minute)
    python perf/compare.py --smoke    # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _smoke import parse_args

from benchmarks.base import DELIVERED, Evaluation, RolloutResult, Task, Verdict
from providers.interface import Usage
from runner.ladder.calls import CallRecord
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.writer import ResultsStore

REPO = Path(__file__).resolve().parents[1]
GOAL_S, GOAL_MB = 10.0, 500.0
KINDS = ("trip", "meeting", "calendar")


def _key(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _record(task: str, kind: str, solved: bool, reworded: bool, steps: int, calls: int, rng: random.Random,
            ) -> RolloutRecord:
    trajectory = [{"thought": f"step {n}: " + "considering the constraints of the plan " * 8,
                   "action": f"propose({task}, {n})", "observation": "ok " * 20} for n in range(steps)]
    records = [CallRecord("offline:oracle", _key(task, n, reworded and n >= 2), False,
                          Usage(input_tokens=rng.randint(800, 3000), output_tokens=rng.randint(50, 400)),
                          rng.uniform(0.0005, 0.005), 0.0, rng.uniform(0.2, 3.0), 0) for n in range(calls)]
    result = RolloutResult(DELIVERED, answer="SOLUTION: ...", plan={"answer": "..."}, steps=trajectory)
    evaluation = Evaluation((Verdict("official", "exact_match", solved),),
                            {"solved": solved, "error": None if solved else "wrong answer"})
    started = 1_700_000_000.0 + rng.uniform(0, 3600)
    return RolloutRecord(RolloutKey("natural-plan", "all", task, "model", "direct", 0), result, records,
                         started_at=started, finished_at=started + rng.uniform(1, 30),
                         evaluations={"official": evaluation})


async def write_run(run_dir: Path, size: int, steps: int, calls: int, *, changed: bool) -> None:
    """A run of `size` tasks; `changed`: B's differences (see the module docstring)."""
    rng = random.Random(1 if changed else 0)
    spec = {"benchmark": "natural-plan", "split": "all", "strategies": ["direct"], "samples": 1,
            "evaluate": ["official"], "models": [{"name": "model", "model": "offline:oracle"}]}
    store = await ResultsStore.open(run_dir)
    try:
        session = await store.start_session(spec, "perf.toml", "perf", {"model": {"direct": size}})
        tasks = [Task(f"{KINDS[n % 3]}_{n}", {"task": KINDS[n % 3], "prompt": "..."}) for n in range(size)]
        await store.save_tasks("natural-plan", "all", tasks)
        base = random.Random(7)
        for n, task in enumerate(tasks):
            solved, flip = base.random() < 0.6, base.random() < 0.05  # both runs draw both: the same tasks
            solved ^= changed and flip
            await store.save_rollout(_record(task.id, KINDS[n % 3], solved, changed and n % 2 == 0, steps, calls,
                                             rng), session)
        await store.end_session(session, "completed")
    finally:
        await store.close()


def measure(a: Path, b: Path, out: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of `tripbench compare A B` in a child process (the CPU time is the
    figure to trust on a busy machine: the wall time counts the waits for a core)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "runner.cli.main", "compare", str(a), str(b), "--out", str(out)],
                          capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"compare failed ({done.returncode}):\n{done.stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the only child: the compare process
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # maxrss: kilobytes on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="rollouts per run (default 10000)")
    parser.add_argument("--steps", type=int, default=10, help="trajectory steps per rollout (default 10)")
    parser.add_argument("--calls", type=int, default=6, help="LLM calls per rollout (default 6)")
    args = parse_args(parser, size=300)
    with tempfile.TemporaryDirectory(prefix="tripbench-perf-compare-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        for name, changed in (("a", False), ("b", True)):
            asyncio.run(write_run(folder / name, args.size, args.steps, args.calls, changed=changed))
        print(f"two runs of {args.size:,} rollouts ({args.steps} steps, {args.calls} calls each) written in "
              f"{time.perf_counter() - started:.1f} s")
        seconds, cpu, megabytes = measure(folder / "a", folder / "b", folder / "cmp")
        pages = len(list((folder / "cmp" / "pairs").iterdir()))
        print(f"  compare.html {(folder / 'cmp' / 'compare.html').stat().st_size / 1e3:,.0f} kB, {pages:,} pair pages")
        print(f"  tripbench compare: {seconds:.2f} s wall, {cpu:.2f} s CPU, {megabytes:,.0f} MB peak RSS "
              f"(goal < {GOAL_S:.0f} s and < {GOAL_MB:.0f} MB)")


if __name__ == "__main__":
    main()
