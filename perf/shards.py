"""A sweep split over shard processes on this machine beside the same sweep in one process (`--shard I/N`).

The sweep: TravelPlanner two-stage rollouts (the tool agent: every step a call, most steps a sandbox search) on a
generated world, answered by the offline oracle, so the client's own work is what is measured: no provider, no
network. Both runs are team runs (`[team]`: the cache, spend cap and rate limits on one PostgreSQL), each on a fresh
database, so neither finds the other's answers in the cache. Timed: the one process from its start to its exit;
the shards from the first start to the last exit (interpreter start-up included in both, as a job array pays it).
Printed: both wall times, their ratio, and whether the merged shards hold the one process's results.

A throwaway PostgreSQL is started on a Unix socket (tests/postgres_server.py).

    python perf/shards.py                        # 180 rollouts, one process beside 4 shards
    python perf/shards.py --smoke                # --size 9 --shards 2 (about a minute on a loaded 2-core machine)
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# `tests.postgres_server` starts the server the test suite uses; the repository root is not on the path of a script.
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402
from _smoke import parse_args  # noqa: E402

from benchmarks.travelplanner.offline.world import generate_world  # noqa: E402
from runner.store.results import load_run  # noqa: E402
from sandbox_index import build_travelplanner_index  # noqa: E402
from tests.postgres_server import PostgresServer, server_binaries  # noqa: E402

VARIABLE = "TRIPBENCH_PERF_TEAM_URL"
CLI = [sys.executable, "-c", "from runner.cli.main import main; main()"]


def _spec(root: Path, size: int) -> Path:
    """A two-stage sweep of `size` rollouts on a generated world (samples of its queries past ~12 per cell)."""
    per_cell = min(12, math.ceil(size / 9))
    samples = math.ceil(size / (9 * per_cell))
    world = generate_world(root / "world", seed=1, per_cell=per_cell)
    index = root / "travelplanner.sqlite"
    build_travelplanner_index(world.database, index)
    spec = root / "sweep.toml"
    spec.write_text("\n".join([
        'benchmark = "travelplanner"', f'queries = "{world.queries}"', 'strategies = ["two-stage"]',
        f"limit = {math.ceil(size / samples)}", f"samples = {samples}", "concurrency = 16", 'evaluate = []',
        "max_cost = 5.0", "", "[team]", f'url_env = "{VARIABLE}"', "budget = \"perf\"", "",
        "[options]", f'index = "{index}"', "", "[[models]]", 'model = "offline:oracle"', ""]), encoding="utf-8")
    return spec


def _database(server: PostgresServer, name: str) -> str:
    with psycopg.connect(server.url, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")
        connection.execute(f"CREATE DATABASE {name}")
    return server.url.replace("/tripbench?", f"/{name}?")


def _run(spec: Path, run_dir: Path, url: str, shards: int | None) -> float:
    """Wall seconds of the sweep in one process (`shards` None) or in that many shard processes at once."""
    env = {**os.environ, VARIABLE: url, "PYTHONPATH": str(REPO)}
    commands = ([[*CLI, "run", str(spec), "--run-dir", str(run_dir), "--quiet"]] if shards is None else
                [[*CLI, "run", str(spec), "--run-dir", str(run_dir), "--quiet", "--shard", f"{index}/{shards}"]
                 for index in range(1, shards + 1)])
    start = time.perf_counter()
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for command in commands]
    for process in processes:
        _, errors = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"{' '.join(process.args)} exited {process.returncode}:\n{errors[-2000:]}")
    return time.perf_counter() - start


def _results(run_dir: Path) -> dict[object, tuple[object, ...]]:
    with load_run(run_dir) as results:
        return {r.key: (r.status, r.answer, r.plan, r.calls) for r in results.rollouts}


def main(size: int, shards: int) -> None:
    binaries = server_binaries()
    if binaries is None:
        raise SystemExit("PostgreSQL's server programs (initdb, pg_ctl) are not installed: apt-get install postgresql")
    server = PostgresServer(binaries)
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            spec = _spec(root, size)
            one_s = _run(spec, root / "one", _database(server, "one"), None)
            sharded_s = _run(spec, root / "sharded", _database(server, "sharded"), shards)
            one, merged = _results(root / "one"), _results(root / "sharded")
            calls = sum(row[3] for row in one.values())  # type: ignore[misc]
            print(f"{len(one)} two-stage rollouts ({calls:,} calls, offline oracle, team mode) on {os.cpu_count()} "
                  f"cores: one process {one_s:.1f} s, {shards} shard processes {sharded_s:.1f} s: "
                  f"{one_s / sharded_s:.2f}x the one process's speed")
            print(f"merged shards equal to the one process's run: {merged == one} "
                  f"({len(merged)} rollouts, {len(one)} expected)")
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="shards.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=180, help="rollouts in the sweep")
    parser.add_argument("--shards", type=int, default=4, help="shard processes beside the one")
    arguments = parse_args(parser, size=9, shards=2)
    main(arguments.size, arguments.shards)
