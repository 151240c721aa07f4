"""Latency of TravelEval sandbox lookups beside the official way of reading the same rows, in the same run.

The baselines are what the official code does: pandas boolean filters over each city's CSV read once
(`df[df.name == name].iloc[0]`), a scan of the city's poi.json list, and for intercity transport the files read
again on each call (`load_intercity_transport` opens both train files, and reads airplane.jsonl line by line
keeping the airports that start with the city names). Random real names, one lookup in ten for a name that is not
there. Prints p50 / p99 per lookup and the baseline's p50 over ours. Goal: p99 well under 1 ms.

    python perf/traveleval_sandbox.py                    # 10,000 lookups each on the staged database
    python perf/traveleval_sandbox.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from _smoke import parse_args
from sandbox_tools import _percentiles, _time

from benchmarks.traveleval.sandbox.build import build_index, city_files
from benchmarks.traveleval.sandbox.cities import CITY_DIRS
from benchmarks.traveleval.sandbox.sandbox import Sandbox

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "traveleval" / "database"


class Official:
    """The official reads: per-city DataFrames and poi lists loaded once, transport files read per call."""

    def __init__(self, database: Path) -> None:
        self.database = database
        files = {folder: city_files(database, folder) for folder in CITY_DIRS.values()}
        self.frames = {(table, folder): pd.read_csv(found[table])
                       for folder, found in files.items() for table in ("attractions", "hotels", "restaurants")}
        self.poi = {folder: json.loads(found["poi"].read_text(encoding="utf-8")) for folder, found in files.items()}

    def row(self, table: str, folder: str, name: str) -> Any:
        frame = self.frames[(table, folder)]
        found = frame[frame["name"] == name]
        return found.iloc[0] if len(found) else None

    def poi_position(self, folder: str, name: str) -> Any:
        return next((entry["position"] for entry in self.poi[folder] if entry["name"] == name), None)

    def trains(self, origin: str, destination: str) -> list[Any]:
        folder = self.database / "intercity_transport" / "train"
        there = json.loads((folder / f"from_{origin}_to_{destination}.json").read_text(encoding="utf-8"))
        return there + json.loads((folder / f"from_{destination}_to_{origin}.json").read_text(encoding="utf-8"))

    def flights(self, origin: str, destination: str) -> list[Any]:
        found = []
        with open(self.database / "intercity_transport" / "airplane.jsonl", encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    flight = json.loads(line)
                    start, end = flight["From"], flight["To"]
                    if ((start.startswith(origin) and end.startswith(destination))
                            or (end.startswith(origin) and start.startswith(destination))):
                        found.append(flight)
        return found


def _line(name: str, ours: list[int], baseline: list[int]) -> float:
    p50, p99 = _percentiles(ours)
    base50, base99 = _percentiles(baseline)
    print(f"  {name:<34} n={len(ours):>6}  p50 {p50:7.4f} p99 {p99:7.4f} ms | official p50 {base50:8.4f} "
          f"p99 {base99:8.4f} ms (n={len(baseline)}) | {base50 / p50:7.1f}x p50")
    return p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="timed lookups of each kind")
    parser.add_argument("--baseline-size", type=int, default=1_000, help="timed official calls of each kind")
    parser.add_argument("--database", type=Path, default=DATA, help="a TravelEval database folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parse_args(parser, size=200, baseline_size=3)
    rng = random.Random(args.seed)
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        counts = build_index(args.database, Path(scratch) / "traveleval.sqlite")
        print(f"index built in {time.perf_counter() - started:.2f} s: "
              + ", ".join(f"{n:,} {table}" for table, n in counts.items()))
        with Sandbox.open(Path(scratch) / "traveleval.sqlite") as sandbox:
            run(sandbox, Official(args.database), args, rng)
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


def run(sandbox: Sandbox, official: Official, args: argparse.Namespace, rng: random.Random) -> None:
    cities = list(CITY_DIRS)

    def names(of: Callable[[str], tuple[Any, ...]], attribute: str | None) -> list[tuple[str, str]]:
        picked = []
        for i in range(args.size):
            city = rng.choice(cities)
            rows = of(city)
            name = "不存在的地方" if i % 10 == 0 else rng.choice(rows)
            picked.append((city, name if attribute is None or isinstance(name, str) else getattr(name, attribute)))
        return picked

    lookups: dict[str, tuple[Callable[[str, str], object], Callable[[str, str], object], list[tuple[str, str]]]] = {
        "attraction(city, name)": (sandbox.attraction, lambda c, n: official.row("attractions", CITY_DIRS[c], n),
                                   names(sandbox.attractions, "name")),
        "hotel(city, name)": (sandbox.hotel, lambda c, n: official.row("hotels", CITY_DIRS[c], n),
                              names(sandbox.hotels, "name")),
        "restaurant(city, name)": (sandbox.restaurant, lambda c, n: official.row("restaurants", CITY_DIRS[c], n),
                                   names(sandbox.restaurants, "name")),
        "poi_position(city, name)": (sandbox.poi_position, lambda c, n: official.poi_position(CITY_DIRS[c], n),
                                     names(sandbox.poi_names, None)),
    }
    pairs = [tuple(rng.sample(cities, 2)) for _ in range(args.size)]
    lookups["trains(a, b, both_ways)"] = (lambda a, b: sandbox.trains(a, b, both_ways=True), official.trains, pairs)
    lookups["flights(a, b, both_ways)"] = (lambda a, b: sandbox.flights(a, b, both_ways=True), official.flights,
                                           pairs)
    print(f"lookups, ours vs the official reads ({args.baseline_size} official calls each):")
    worst = 0.0
    for name, (ours, theirs, calls) in lookups.items():
        for city, key in calls[:50]:  # warm the connection and the page cache
            ours(city, key)
        samples = _time([lambda c=c, k=k: ours(c, k) for c, k in calls])[0]
        baseline = _time([lambda c=c, k=k: theirs(c, k) for c, k in calls[: args.baseline_size]])[0]
        worst = max(worst, _line(name, samples, baseline))
    print(f"goal p99 <= 1 ms per lookup: {'met' if worst <= 1 else 'MISSED'} (worst p99 {worst:.4f} ms)")


if __name__ == "__main__":
    main()
