"""TravelEval's offline models on the staged queries: the oracle's and the noisy model's plans scored by the real
evaluator, and each built-in mistake against the metric it aims at.

Builds an index from the staged database (in a temporary folder), plans every query of the split with
`offline:oracle` and with `offline:noisy` (seed 0), scores each plan (`--mode`, official by default; offline
distances) and prints: the mean of every metric per dimension for both models (constraints as pass rates), the
plans per second of each model, how often the oracle meets the budget where the sandbox allows it
(`plan_builder.cost_floor`), and per mistake: drawn but given no hold by the plan (not made), made, moved (its
metric shows it and the oracle's plan of the same query did not), already failed by the oracle (the sandbox allows
no better), and off target (another mistake's metric shows a problem the oracle's plan did not have).

    python perf/traveleval_offline.py                 # the 1,000 queries of `all`
    python perf/traveleval_offline.py --mode corrected
    python perf/traveleval_offline.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from statistics import fmean
from typing import Any

from _smoke import parse_args

from benchmarks.traveleval import dataset
from benchmarks.traveleval.evaluation import MODES, evaluate_plan
from benchmarks.traveleval.evaluation.distance import open_distances
from benchmarks.traveleval.offline.mistakes import MISTAKES, NOISY, found_mistakes, injected_mistake, noisy_plan
from benchmarks.traveleval.offline.plan_builder import build_plan, cost_floor
from benchmarks.traveleval.sandbox.build import build_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "traveleval"
DIMENSIONS = ("accuracy", "constraint", "time", "space", "economy", "utility")


def _flat(metrics: Mapping[str, Any]) -> dict[str, float]:
    """`dimension.metric` -> value, numbers only (CSM's percentiles and the cost categories one level down)."""
    flat: dict[str, float] = {}
    for dimension in DIMENSIONS:
        for key, value in (metrics.get(dimension) or {}).items():
            inner = value.items() if isinstance(value, Mapping) else [("", value)]
            for sub, number in inner:
                if isinstance(number, int | float) and not isinstance(number, bool):
                    flat[f"{dimension}.{key}" + (f".{sub}" if sub else "")] = float(number)
    return flat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="all")
    parser.add_argument("--size", type=int, default=None, help="only the first N queries")
    parser.add_argument("--mode", choices=MODES, default="official", help="evaluator mode")
    args = parse_args(parser, size=30)
    tasks = dataset.load_tasks(DATA, args.split)[: args.size]
    with tempfile.TemporaryDirectory() as folder:
        index = Path(folder) / "traveleval.sqlite"
        build_index(DATA / "database", index)
        with Sandbox.open(index) as sandbox:
            distances = open_distances("offline", DATA)

            def score(plan: Mapping[str, Any] | None, query: Mapping[str, Any]) -> Mapping[str, Any]:
                assert plan is not None, query["uid"]
                result = evaluate_plan(plan, query, sandbox, mode=args.mode, distances=distances)
                assert "error" not in result, result
                metrics: Mapping[str, Any] = result["metrics"]
                return metrics

            started = time.perf_counter()
            oracle_plans = [build_plan(sandbox, task.input) for task in tasks]
            oracle_s = time.perf_counter() - started
            started = time.perf_counter()
            noisy = [noisy_plan(sandbox, task.input, NOISY.default) for task in tasks]
            noisy_s = time.perf_counter() - started
            oracle = [score(plan, task.input) for plan, task in zip(oracle_plans, tasks)]
            floors = [cost_floor(sandbox, task.input) for task in tasks]
            mistaken = [score(plan, task.input) for (plan, _), task in zip(noisy, tasks)]

    print(f"{len(tasks)} queries of `{args.split}`; plans built: oracle {len(tasks) / oracle_s:,.0f}/s, noisy "
          f"{len(tasks) / noisy_s:,.0f}/s ({args.mode} mode, offline distances)")
    print(f"{'metric':48} {'oracle':>10} {'noisy':>10}")
    flat_oracle, flat_noisy = [_flat(m) for m in oracle], [_flat(m) for m in mistaken]
    for key in dict.fromkeys(k for flat in flat_oracle + flat_noisy for k in flat):
        values = [[flat[key] for flat in flats if key in flat] for flats in (flat_oracle, flat_noisy)]
        print(f"{key:48} " + " ".join(f"{fmean(v):10.4f}" if v else f"{'-':>10}" for v in values))

    fits = [float(task.input["budget"]) >= floor for task, floor in zip(tasks, floors) if floor is not None]
    met = [bool(m["constraint"]["budget_satisfaction"]) for m, floor, task in zip(oracle, floors, tasks)
           if floor is not None and float(task.input["budget"]) >= floor]
    print(f"\nbudget: the oracle meets it on {sum(met)} of the {sum(fits)} queries whose cheapest allowed legs and "
          f"rooms fit it; {len(fits) - sum(fits)} cannot fit it whatever the plan")

    drawn, made, moved, already, off = Counter[str](), Counter[str](), Counter[str](), Counter[str](), Counter[str]()
    for task, (_, mistake), clean, dirty in zip(tasks, noisy, oracle, mistaken):
        wanted = injected_mistake(task.input, NOISY.default)
        if wanted is not None:
            drawn[wanted.name] += 1
        if mistake is None:
            continue
        before, after = set(found_mistakes(clean)), set(found_mistakes(dirty))
        made[mistake.name] += 1
        already[mistake.name] += mistake.name in before
        moved[mistake.name] += mistake.name in after - before
        off[mistake.name] += bool(after - before - {mistake.name})
    print(f"\n{'mistake':28} {'no hold':>8} {'made':>6} {'moved':>6} {'oracle failed':>14} {'off target':>11}")
    for item in MISTAKES:
        name = item.name
        print(f"{name:28} {drawn[name] - made[name]:8} {made[name]:6} {moved[name]:6} {already[name]:14} "
              f"{off[name]:11}")
    print(f"every made mistake moved its metric or the oracle already failed it: "
          f"{all(moved[n] + already[n] == made[n] for n in made)}")


if __name__ == "__main__":
    main()
