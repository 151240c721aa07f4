"""Evaluator throughput: plans per second and ms per plan, beside the same evaluator over pandas scans.

Builds an index from the staged database, makes `--size` plans from the 45 human-annotated train plans
(the plans themselves plus seeded mutations: places from other plans, dropped fields, truncated names),
and scores them in official and strict mode over the SQLite sandbox. The baseline runs the very same
evaluator code over `PandasSandbox`: the same lookups (a city's restaurants / attractions / hotels, a
flight number, a distance row) as boolean masks over the dropna'd DataFrames, as the official tools do
them, so the ratio isolates the lookup layer. The official evaluator itself (a `str.contains` scan of a
whole table per name) was measured at about 160 ms per plan on this machine (issue 3).

    python perf/evaluate.py                 # 1,000 plans
    python perf/evaluate.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import copy
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from _smoke import parse_args

from benchmarks.travelplanner.dataset import Query, load_queries
from benchmarks.travelplanner.evaluation import make_evaluator
from sandbox_index import DistanceRow, Frame, build_travelplanner_index, open_sandbox

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner"
# the evaluator's tables with their tool column order (docs/fidelity/travelplanner.md §1.1)
TABLES = {
    "restaurants": ("restaurants/clean_restaurant_2022.csv",
                    ["Name", "Average Cost", "Cuisines", "Aggregate Rating", "City"]),
    "attractions": ("attractions/attractions.csv",
                    ["Name", "Latitude", "Longitude", "Address", "Phone", "Website", "City"]),
    "accommodations": ("accommodations/clean_accommodations_2022.csv",
                       ["NAME", "price", "room type", "house_rules", "minimum nights", "maximum occupancy",
                        "review rate number", "city"]),
    "flights": ("flights/clean_Flights_2022.csv", ["Flight Number", "Price", "DepTime", "ArrTime", "ActualElapsedTime",
                                                   "FlightDate", "OriginCityName", "DestCityName", "Distance"]),
}


def _frame(df: pd.DataFrame) -> Frame:
    rows = tuple(tuple(row) for row in df.itertuples(index=False))
    return Frame(tuple(df.columns), ("str",) * len(df.columns), tuple(df.index), rows)


class PandasSandbox:
    """The evaluator's lookups as boolean scans over in-memory DataFrames, as the official code does them."""

    def __init__(self, database: Path) -> None:
        self.tables = {name: pd.read_csv(database / path).dropna()[columns] for name, (path, columns) in TABLES.items()}
        self.distances = pd.read_csv(database / "googleDistanceMatrix" / "distance.csv")
        lines = (database / "background" / "citySet_with_states.txt").read_text().split("\n")
        self._city_states = dict(line.split("\t") for line in lines if line)

    def _in_city(self, table: str, city_column: str, city: str) -> Frame:
        df = self.tables[table]
        return _frame(df[df[city_column] == city])

    def restaurants(self, city: str) -> Frame:
        return self._in_city("restaurants", "City", city)

    def attractions(self, city: str) -> Frame:
        return self._in_city("attractions", "City", city)

    def accommodations(self, city: str) -> Frame:
        return self._in_city("accommodations", "city", city)

    def flights_by_number(self, number: str) -> Frame:
        df = self.tables["flights"]
        return _frame(df[df["Flight Number"] == number])

    def distance(self, origin: str, destination: str) -> DistanceRow | None:
        df = self.distances
        found = df[(df["origin"] == origin) & (df["destination"] == destination)]
        if found.empty:
            return None
        row = found.iloc[0]
        return DistanceRow(*(None if pd.isna(row[c]) else str(row[c]) for c in ("duration", "distance")))

    def city_states(self) -> dict[str, str]:
        return self._city_states


def make_plans(queries: list[Query], size: int, seed: int) -> list[tuple[Query, Any]]:
    """The annotated plans, then seeded mutations of them, `size` in all."""
    rng = random.Random(seed)
    cases: list[tuple[Query, Any]] = []
    while len(cases) < size:
        query = queries[len(cases) % len(queries)]
        plan = copy.deepcopy(query.annotated_plan)
        if len(cases) >= len(queries):
            for _ in range(rng.randint(1, 3)):
                day = rng.choice([d for d in plan if d])  # type: ignore[union-attr]
                key = rng.choice(["breakfast", "lunch", "dinner", "attraction", "accommodation"])
                other = rng.choice([d for d in rng.choice(queries).annotated_plan if d])  # type: ignore[union-attr]
                day[key] = rng.choice([other[key], "-", day[key][:5] + ", " + day[key].rsplit(", ", 1)[-1]])
        cases.append((query, plan))
    return cases


def _run(evaluator: Any, cases: list[tuple[Query, Any]]) -> float:
    started = time.perf_counter()
    for query, plan in cases:
        evaluator.evaluate(query, plan)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1000, help="plans to score (default 1000)")
    parser.add_argument("--baseline-size", type=int, default=200, help="plans scored over pandas (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parse_args(parser, size=50, baseline_size=3)
    queries = load_queries(DATA / "queries" / "train.jsonl")
    cases = make_plans(queries, args.size, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "travelplanner.sqlite"
        build_travelplanner_index(DATA / "database", index)
        with open_sandbox(index) as sandbox:
            _run(make_evaluator(sandbox), cases[:50])  # warm the page cache and the regex cache
            timings = {mode: _run(make_evaluator(sandbox, mode), cases) for mode in ("official", "strict")}
    pandas_sandbox = PandasSandbox(DATA / "database")
    baseline_cases = cases[: args.baseline_size]
    baseline = _run(make_evaluator(pandas_sandbox), baseline_cases) / len(baseline_cases)  # type: ignore[arg-type]
    print(f"{len(cases)} plans ({len(queries)} annotated train plans + seeded mutations)")
    for mode, seconds in timings.items():
        per_plan = seconds / len(cases)
        print(f"{mode:>8}: {len(cases) / seconds:8.0f} plans/s  {per_plan * 1e3:6.3f} ms/plan  "
              f"({baseline / per_plan:5.1f}x faster than the pandas-scan lookups)")
    print(f"baseline: {1 / baseline:8.0f} plans/s  {baseline * 1e3:6.3f} ms/plan  "
          f"(same evaluator over pandas boolean scans, {len(baseline_cases)} plans)")
    print(f"goal <= 5 ms/plan: {'met' if timings['official'] / len(cases) <= 0.005 else 'NOT met'}")


if __name__ == "__main__":
    main()
