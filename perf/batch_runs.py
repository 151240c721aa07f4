"""Batch mode at scale: Natural Plan `direct` rollouts and TravelPlanner two-stage rollouts through the OpenAI Batch
API of the mock server (in this process), on generated worlds answered by the offline oracle.

Printed per run: batches and requests submitted, requests per batch, the wall time beside its floor (a direct run
needs one batch round, a two-stage run one round per agent step; a round is `--flush`, the wait for more requests,
plus the mock's processing delay), and the client
CPU per request (this process's CPU less the mock server's share is not separable here, so it is an upper bound).
Every answer comes from a batch: the script checks that the mock billed no online call and submitted no request
twice.

    python perf/batch_runs.py                                # 1,000 direct + 200 two-stage, 1 s per batch
    python perf/batch_runs.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import tempfile
import time
from pathlib import Path

from _smoke import parse_args

from benchmarks.natural_plan.offline.world import generate_world as natural_plan_world
from benchmarks.offline import OfflineModels, offline_models
from benchmarks.travelplanner.offline.world import generate_world as travelplanner_world
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.mock_server import MockConfig, RunningServer, serve
from runner.store.results import load_run
from sandbox_index import build_travelplanner_index

KEY_ENV = "TRIPBENCH_PERF_BATCH_KEY"


def _spec(path: Path, server: RunningServer, lines: list[str], options: list[str], *, concurrency: int,
          args: argparse.Namespace) -> Path:
    path.write_text("\n".join([
        *lines, 'cache_dir = "cache"', f"concurrency = {concurrency}", "evaluate = []",
        f"batch_size = {args.batch_size}", f"batch_flush_s = {args.flush}", f"batch_poll_s = {args.poll}", "",
        "[options]", *options, "", "[[models]]", 'name = "oracle"', 'model = "openai:oracle"',
        f'base_url = "{server.openai_base_url}"', f'api_key_env = "{KEY_ENV}"', "batch = true",
        "prices = { input = 0.15, output = 0.60 }", "", ""]),
        encoding="utf-8")
    return path


async def _measure(name: str, spec: Path, run_dir: Path, server: RunningServer, answers: OfflineModels,
                   round_s: float) -> None:
    before = server.tally.batches, sum(server.tally.batch_requests.values())
    cpu, wall = time.process_time(), time.perf_counter()
    prepared = prepare(spec)
    answers.include(offline_models(prepared.benchmark, prepared.tasks, prepared.options))
    report = await execute(prepared, run_dir, show_progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    batches = server.tally.batches - before[0]
    requests = sum(server.tally.batch_requests.values()) - before[1]
    with load_run(run_dir) as results:
        steps = max((r.calls for r in results.rollouts), default=0)
    floor_s = steps * round_s
    print(f"{name}: {report.ran:,} rollouts ({dict(report.statuses)}), {requests:,} requests in {batches:,} "
          f"batches ({requests / max(batches, 1):,.0f} per batch), longest rollout {steps} calls")
    print(f"  wall {wall:.1f} s against a floor of {floor_s:.1f} s ({steps} rounds x (flush + the mock's delay)): "
          f"{wall / max(floor_s, 1e-9):.2f}x; client CPU {1000 * cpu / max(requests, 1):.2f} ms per request")


async def main(args: argparse.Namespace) -> None:
    os.environ.setdefault(KEY_ENV, "sk-perf-batch")
    answers = OfflineModels()  # the mock server answers as the offline models of the runs prepared so far
    server = await serve("127.0.0.1", 0, MockConfig(batches={"delay_s": args.delay}), reply=answers.mock_reply)
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            world = natural_plan_world(root / "natural-plan", seed=1, per_task=math.ceil(args.direct / 3))
            direct = _spec(root / "direct.toml", server, [
                'benchmark = "natural-plan"', 'split = "all"', 'strategies = ["direct"]', f"limit = {args.direct}"],
                [f'data_dir = "{world.folder}"'], concurrency=args.direct, args=args)
            # The generated world holds up to ~12 queries per (level, days) cell: more rollouts are samples of them.
            per_cell = min(12, math.ceil(args.two_stage / 9))
            samples = math.ceil(args.two_stage / (9 * per_cell))
            tp = travelplanner_world(root / "travelplanner", seed=1, per_cell=per_cell)
            index = root / "travelplanner.sqlite"
            build_travelplanner_index(tp.database, index)
            two_stage = _spec(root / "two-stage.toml", server, [
                'benchmark = "travelplanner"', f'queries = "{tp.queries}"', 'strategies = ["two-stage"]',
                f"limit = {math.ceil(args.two_stage / samples)}", f"samples = {samples}"], [f'index = "{index}"'],
                concurrency=args.two_stage, args=args)
            print(f"mock batch processing delay {args.delay} s; batch_size {args.batch_size}, flush {args.flush} s, "
                  f"poll {args.poll} s")
            round_s = args.flush + args.delay  # a batch waits `flush` for more requests, then the mock's delay
            await _measure("natural-plan direct", direct, root / "runs" / "direct", server, answers, round_s)
            await _measure("travelplanner two-stage", two_stage, root / "runs" / "two-stage", server, answers, round_s)
            tally = server.tally
            print(f"mock tally: {tally.served} online calls, {tally.batch_served:,} batch answers, "
                  f"most submissions of one request {max(tally.batch_requests.values(), default=0)}; "
                  + json.dumps(dict(tally.batch_outcomes)))
    finally:
        await server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="batch_runs.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--direct", type=int, default=1000, help="Natural Plan direct rollouts")
    parser.add_argument("--two-stage", type=int, default=200, help="TravelPlanner two-stage rollouts")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the mock takes to process a batch")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--flush", type=float, default=0.2, help="batch_flush_s")
    parser.add_argument("--poll", type=float, default=0.1, help="batch_poll_s")
    asyncio.run(main(parse_args(parser, direct=12, two_stage=2, delay=0.05, flush=0.05)))
