"""Speed of the TravelEval evaluator (plans per second) beside the official evaluator's per-plan data reads, in the
same run.

Plans: the offline oracle's plans (`offline/plan_builder.py`) for queries spread over the staged `all` split.
Ours: `evaluate_plan` on each plan, official and corrected mode, offline distances (no network), sandbox index
warm. Baseline: what the official evaluator reads for each plan before any arithmetic, done the official way
(pandas `read_csv` of the destination's three tables, `iterrows` over all the attractions for each of the six
lookups that build a name map, over the hotels up to the plan's hotel and over the restaurants up to each meal's,
poi.json parsed once for the accuracy lookup and once per day plus once for the spatial lookups, both train files
and airplane.jsonl re-read), without its metric arithmetic (the issue measured the whole official evaluator at
~0.08 s per plan offline, plus ~1.5 s start-up).

    python perf/traveleval_evaluate.py               # 200 plans
    python perf/traveleval_evaluate.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from _smoke import parse_args

from benchmarks.traveleval.dataset import load_tasks
from benchmarks.traveleval.evaluation import evaluate_plan
from benchmarks.traveleval.evaluation.distance import OfficialCaches, OfflineDistances
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.sandbox.build import build_index
from benchmarks.traveleval.sandbox.cities import CITY_DIRS
from benchmarks.traveleval.sandbox.sandbox import Sandbox

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "traveleval"


def official_reads(database: Path, plan: Mapping[str, Any]) -> int:
    """The official evaluator's data reads for one plan (module docstring); returns rows touched."""
    itinerary = plan["itinerary"]
    summary = itinerary["summary"]
    folder = CITY_DIRS.get(summary["destination"], summary["destination"])
    attractions = pd.read_csv(database / "attractions" / folder / "attractions.csv")
    hotels = pd.read_csv(database / "accommodations" / folder / "accommodations.csv")
    restaurants = pd.read_csv(database / "restaurants" / folder / f"restaurants_{folder}.csv")
    touched = 0
    for _ in range(6):
        touched += len({row["name"]: row["type"] for _, row in attractions.iterrows()})
    touched += _scan(hotels, itinerary["accommodation"]["hotel_name"])
    for day in itinerary["daily_plans"]:
        for activity in day["activities"]:
            if activity.get("type") == "meal":
                touched += _scan(restaurants, activity.get("location_name"))
    poi = database / "poi" / folder / "poi.json"
    for _ in range(len(itinerary["daily_plans"]) + 2):
        touched += len(json.loads(poi.read_text(encoding="utf-8")))
    trains = database / "intercity_transport" / "train"
    origin, destination = summary["departure"], summary["destination"]
    for name in (f"from_{origin}_to_{destination}.json", f"from_{destination}_to_{origin}.json"):
        if (trains / name).is_file():
            touched += len(json.loads((trains / name).read_text(encoding="utf-8")))
    with open(database / "intercity_transport" / "airplane.jsonl", encoding="utf-8") as lines:
        touched += sum(1 for line in lines if line.strip() and json.loads(line))
    return touched


def _scan(frame: pd.DataFrame, name: Any) -> int:
    """Rows `iterrows` walks to the first row of that name (all of them when there is none), as the official
    hotel and restaurant lookups do."""
    for touched, (_, row) in enumerate(frame.iterrows(), start=1):
        if row["name"] == name:
            return touched
    return len(frame)


def _rate(label: str, plans: list[dict[str, Any]], score: Callable[[dict[str, Any]], object]) -> float:
    start = time.perf_counter()
    for plan in plans:
        score(plan)
    seconds = time.perf_counter() - start
    rate = len(plans) / seconds
    print(f"  {label:<48} {rate:9.1f} plans/s  ({1000 * seconds / len(plans):7.2f} ms per plan)")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=200)
    args = parse_args(parser, plans=20)
    with tempfile.TemporaryDirectory() as scratch:
        index = Path(scratch) / "traveleval.sqlite"
        build_index(DATA / "database", index)
        with Sandbox.open(index) as sandbox:
            tasks = load_tasks(DATA, "all")
            step = max(1, len(tasks) // args.plans)
            queries = {task.id: task.input for task in tasks[::step][:args.plans]}
            plans = [plan for query in queries.values() if (plan := build_plan(sandbox, query)) is not None]
            distances = OfflineDistances(OfficialCaches(Path(scratch) / "amap_cache"))
            print(f"TravelEval evaluate: {len(plans)} oracle plans of {len(queries)} queries")
            for plan in plans[:5]:  # warm the per-city lookups, as a run does after its first plans
                evaluate_plan(plan, queries[plan["query_uid"]], sandbox, distances=distances)
            official = _rate("ours, official mode, offline distances", plans, lambda plan: evaluate_plan(
                plan, queries[plan["query_uid"]], sandbox, distances=distances))
            _rate("ours, corrected mode, offline distances", plans, lambda plan: evaluate_plan(
                plan, queries[plan["query_uid"]], sandbox, mode="corrected", distances=distances))
            baseline = _rate("official-style per-plan data reads", plans,
                             lambda plan: official_reads(DATA / "database", plan))
            print(f"  ours (official mode) / official reads: {official / baseline:.1f}x plans per second")


if __name__ == "__main__":
    main()
