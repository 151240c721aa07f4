"""Two-stage TravelPlanner nights three ways: fully online, fully batched (`batch = true`) and `batch = "planner"` (the
Planner's calls in batches, the tool agent's steps online), through the mock server's OpenAI API (in this process),
`offline:oracle`'s answers on the staged validation queries.

Provider times are scaled down by `--scale` (600: a 30-minute batch round takes 3 s, the 60 s `batch_flush_s` 0.1 s,
the 30 s `batch_poll_s` 0.05 s, a 1.5 s online call 2.5 ms), client CPU is not. Printed per mode: the measured wall
time, what the run paid (spent, at gpt-4o-mini's price), the batches submitted, the batch rounds the slowest rollout
waited for one after the other, the share of tokens billed at the batch price, and the wall time projected at real
provider times (rounds x (flush + round) + the slowest rollout's online calls x the online latency); beside them
what `--dry-run` expected of the rounds and the share. Every mode must give the same answers.

    python perf/batch_hybrid.py            # 200 rollouts (100 validation queries x 2 samples), 30 min rounds at 1:600
    python perf/batch_hybrid.py --smoke    # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _smoke import parse_args

from benchmarks.offline import OfflineModels, offline_models
from runner.engine.dryrun import estimate
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.mock_server import MockConfig, RunningServer, serve
from runner.store.results import load_run
from sandbox_index import build_travelplanner_index

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner"
KEY_ENV = "TRIPBENCH_PERF_BATCH_KEY"
VALIDATION_QUERIES = 180
REAL = {"round_s": 1800.0, "flush_s": 60.0, "poll_s": 30.0, "online_s": 1.5}
"""Provider times of a real night: a batch round (usually well within an hour), the spec's default flush and poll,
an online call of a hosted model."""
MODES: dict[str, bool | str] = {"online": False, "batched": True, "planner": "planner"}


@dataclass(frozen=True, slots=True)
class Measured:
    wall_s: float
    spent_usd: float
    batches: int
    rounds: int
    """Batch rounds the slowest rollout waited for, one after the other (its batched calls)."""
    online_chain: int
    """The most online calls one rollout made."""
    batch_share: float
    """Tokens billed at the batch price, of all."""
    answers: dict[str, object]


def _spec(folder: Path, name: str, server: RunningServer, index: Path, args: argparse.Namespace) -> Path:
    samples = math.ceil(args.rollouts / VALIDATION_QUERIES)
    batch = MODES[name]
    spec = folder / f"{name}.toml"
    spec.write_text("\n".join([
        'benchmark = "travelplanner"', 'split = "validation"', 'strategies = ["two-stage"]', f"samples = {samples}",
        f"limit = {math.ceil(args.rollouts / samples)}", f'cache_dir = "cache-{name}"',
        f"concurrency = {args.rollouts}", "evaluate = []", f"batch_flush_s = {REAL['flush_s'] / args.scale}",
        f"batch_poll_s = {REAL['poll_s'] / args.scale}", f"batch_round_s = {REAL['round_s']}", "",
        "[options]", f'data_dir = "{args.data}"', f'index = "{index}"', "",
        "[[models]]", 'name = "oracle"', 'model = "openai:oracle"', f'base_url = "{server.openai_base_url}"',
        f'api_key_env = "{KEY_ENV}"', f"batch = {_toml(batch)}",
        "prices = { input = 0.15, output = 0.60, batch_discount = 0.5 }", ""]), encoding="utf-8")
    return spec


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def _toml(value: bool | str) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else f'"{value}"'


async def _measure(spec: Path, run_dir: Path, server: RunningServer, answers: OfflineModels) -> Measured:
    before = server.tally.batches
    prepared = prepare(spec)
    answers.include(offline_models(prepared.benchmark, prepared.tasks, prepared.options))
    started = time.perf_counter()
    await execute(prepared, run_dir, show_progress=False)
    wall = time.perf_counter() - started
    with load_run(run_dir) as results:
        calls = results.calls()
        spent = results.spent_usd
        found = {f"{r.key.task}/{r.key.sample}": (r.status, r.answer) for r in results.rollouts}
    batched: dict[int, int] = {}
    online: dict[int, int] = {}
    tokens = [0, 0]
    for call in calls:
        counts = batched if call.call.batched else online
        counts[call.rollout_id] = counts.get(call.rollout_id, 0) + 1
        tokens[call.call.batched] += call.call.usage.input_tokens + call.call.usage.output_tokens
    return Measured(wall, spent, server.tally.batches - before, max(batched.values(), default=0),
                    max(online.values(), default=0), tokens[1] / max(sum(tokens), 1), found)


async def main(args: argparse.Namespace) -> None:
    os.environ.setdefault(KEY_ENV, "sk-perf-batch")
    answers = OfflineModels()  # the mock server answers as the offline models of the runs prepared so far
    online_s = REAL["online_s"] / args.scale
    config = MockConfig(batches={"delay_s": REAL["round_s"] / args.scale},
                        latency={"kind": "fixed", "median_s": online_s})
    server = await serve("127.0.0.1", 0, config, reply=answers.mock_reply)
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            index = root / "travelplanner.sqlite"
            build_travelplanner_index(args.data / "database", index)
            print(f"{args.rollouts} two-stage rollouts at once, provider times at 1:{args.scale:g} (batch round "
                  f"{REAL['round_s'] / args.scale:.3g} s, flush {REAL['flush_s'] / args.scale:.3g} s, online call "
                  f"{online_s * 1000:.3g} ms); projected: at real times (round {REAL['round_s']:g} s, flush "
                  f"{REAL['flush_s']:g} s, online call {REAL['online_s']:g} s)")
            print(f"{'mode':<8} {'wall s':>7} {'$ spent':>8} {'batches':>7} {'rounds':>6} {'at batch $':>10} "
                  f"{'projected':>9}   dry run: rounds, at batch $")
            measured = {}
            for name in MODES:
                spec = _spec(root, name, server, index, args)
                (dry,), _ = await estimate(prepare(spec), root / f"dry-{name}")
                m = measured[name] = await _measure(spec, root / name, server, answers)
                projected = m.rounds * (REAL["flush_s"] + REAL["round_s"]) + m.online_chain * REAL["online_s"]
                share = dry.batched_tokens / max(dry.input_tokens + dry.output_tokens, 1.0)
                print(f"{name:<8} {m.wall_s:>7.1f} {m.spent_usd:>8.4f} {m.batches:>7} {m.rounds:>6} "
                      f"{m.batch_share:>10.0%} {_duration(projected):>9}   {dry.rounds}, {share:.0%}")
            same = all(m.answers == measured["online"].answers for m in measured.values())
            print(f"answers identical in the three modes: {same}; batch = \"planner\" paid "
                  f"{measured['planner'].spent_usd / measured['online'].spent_usd:.1%} of online, batch = true "
                  f"{measured['batched'].spent_usd / measured['online'].spent_usd:.1%}")
            if not same:
                raise SystemExit("the modes' answers differ")
    finally:
        await server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="batch_hybrid.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=200, help="two-stage rollouts (validation queries x samples)")
    parser.add_argument("--scale", type=float, default=600.0, help="provider times divided by this")
    parser.add_argument("--data", type=Path, default=DATA, help="the staged TravelPlanner folder")
    asyncio.run(main(parse_args(parser, rollouts=3, scale=18000.0)))
