"""Replay speed: a two-stage TravelPlanner run answered entirely from the cache, in one process and in worker
processes, beside the time to read the same cache entries alone.

Fills a fresh cache with a run of `offline:oracle` (two-stage, the staged validation queries, `--samples` samples
each to reach `--rollouts`), then replays it as a user would: `tripbench run SPEC --run-dir NEW` with
`cache = "replay"` (a miss is an error), timed from the command's start to its exit (start-up, task loading,
every rollout, evaluation and outputs included); once with `processes = 1` (the run's own process only), once as a
user's spec says nothing (one worker process per core, `runner/engine/replay_processes.py`, from 400 rollouts).
The baseline, same run: this process reading every entry of the cache with `CacheStore.get`, as the gateway does
on a hit. Printed: each replay's wall time and time per rollout, their ratio, and the ratio to the bare read (goal:
1,000 rollouts in <= 10 s).

    python perf/replay.py                 # 1,000 rollouts (180 validation queries x 6 samples, the first 1,000)
    python perf/replay.py --smoke         # a smoke size (seconds; CI runs it; too few rollouts for workers)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _smoke import parse_args

from cache import CacheStore
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from sandbox_index import build_travelplanner_index

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner"
REPO = Path(__file__).resolve().parents[1]
VALIDATION_QUERIES = 180
LAUNCH = "from runner.cli.main import main; main()"
"""How the console script starts `tripbench`."""


def write_spec(folder: Path, name: str, args: argparse.Namespace, index: Path, cache: str,
               processes: int | None = None) -> Path:
    samples = math.ceil(args.rollouts / VALIDATION_QUERIES)
    spec = folder / f"{name}.toml"
    spec.write_text(f"""benchmark = "travelplanner"
split = "validation"
strategies = ["two-stage"]
samples = {samples}
limit = {math.ceil(args.rollouts / samples)}
cache = "{cache}"
cache_dir = "cache"
concurrency = {args.concurrency}
{f"processes = {processes}" if processes else ""}

[options]
data_dir = "{args.data}"
index = "{index}"

[[models]]
model = "offline:oracle"
""", encoding="utf-8")
    return spec


def read_alone(cache_dir: Path) -> tuple[int, float, float]:
    """Entries in the cache, and the seconds (wall, CPU) `CacheStore.get` takes to read them all."""
    with CacheStore(cache_dir) as store:
        keys = [key for key, _ in store.entries()]
        store.counting = False
        started, cpu = time.perf_counter(), time.process_time()
        for key in keys:
            assert store.get(key) is not None
        return len(keys), time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(prog="replay.py", description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=1000, help="rollouts of the run (default 1000)")
    parser.add_argument("--concurrency", type=int, default=64, help="rollouts in flight (default 64)")
    parser.add_argument("--data", type=Path, default=DATA, help="the staged TravelPlanner folder")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (a second run resumes the filled "
                        "cache's run: only the replay is done again)")
    args = parse_args(parser, rollouts=20)
    with tempfile.TemporaryDirectory(prefix="tripbench-replay-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        index = folder / "travelplanner.sqlite"
        if not index.is_file():
            build_travelplanner_index(args.data / "database", index)
        started = time.perf_counter()
        prepared = prepare(write_spec(folder, "fill", args, index, "readwrite"))
        asyncio.run(execute(prepared, folder / "fill", show_progress=False))
        rollouts = len(prepared.keys)
        fill_s = time.perf_counter() - started
        env = {**os.environ, "TRIPBENCH_HOME": str(folder / "home"), "PYTHONPATH": str(REPO)}
        alone = replay(write_spec(folder, "replay-alone", args, index, "replay", processes=1), folder, env)
        spread = replay(write_spec(folder, "replay", args, index, "replay"), folder, env)
        entries, read_s, read_cpu = read_alone(folder / "cache")
    print(f"{rollouts:,} two-stage rollouts (offline:oracle), {entries:,} cache entries; filling the cache took "
          f"{fill_s:.1f} s")
    for label, (wall, cpu, note) in (("in one process", alone), ("as a user runs it", spread)):
        print(f"replay {label} (tripbench run, cache = \"replay\", new run dir): {wall:.2f} s wall ({cpu:.2f} s CPU),"
              f" {1000 * wall / max(rollouts, 1):.1f} ms per rollout; {note}")
    print(f"worker processes: {alone[0] / spread[0]:.2f} x faster than one process (goal: 1,000 rollouts <= 10 s)")
    print(f"reading the same {entries:,} entries alone: {read_s:.3f} s wall ({read_cpu:.3f} s CPU); the replay takes "
          f"{spread[0] / max(read_s, 1e-9):.1f} x the cache read alone ({spread[1] / max(read_cpu, 1e-9):.1f} x in "
          "CPU time, which a busy machine disturbs less)")


def replay(spec: Path, folder: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """`tripbench run SPEC` into a new run directory: its wall and CPU seconds, and where its rollouts ran."""
    run_dir = folder / spec.stem
    shutil.rmtree(run_dir, ignore_errors=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", LAUNCH, "run", str(spec), "--run-dir", str(run_dir)], cwd=REPO,
                          env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the replay failed ({done.returncode}): {done.stderr[-2000:]}{done.stdout[-2000:]}")
    workers = re.search(r"replayed in (\d+) worker processes", done.stdout + done.stderr)
    note = f"{workers[1]} worker processes" if workers else "in its own process"
    return wall, after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime, note

if __name__ == "__main__":
    main()
