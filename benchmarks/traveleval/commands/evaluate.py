"""`tripbench evaluate PLANS.jsonl --benchmark traveleval`: score plans with the official six metric groups.

Each line of PLANS.jsonl is one `FinalTravelPlan` object, {"query_uid": ..., "itinerary": {...}} (what a run's
submission holds). The query is found by `query_uid` in the data folder's query files; as the official batch loop
does, a uid with "_schemeN" in it (N = 1..3, the official loader's name for a second plan of the same query) falls
back to the uid without it (`_query`). Every line is scored (the official loader keeps at most four plans of one
uid, overwriting the last). A line that is not a JSON object, or whose query is unknown, is reported as an error
result: nothing is dropped.
With `--json`, one result object per line (`evaluation.evaluate_plan`), else a table of the mean of each metric.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from benchmarks.traveleval import paths
from benchmarks.traveleval.dataset import ALL, PROGRESSIVE, load_tasks
from benchmarks.traveleval.evaluation import DIMENSIONS, MODES, open_scorer
from benchmarks.traveleval.evaluation.distance import DISTANCE_SETTINGS
from datahome import home_option
from errors import DataError


@click.command("evaluate")
@click.argument("plans", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice(MODES), default="official", show_default=True,
              help="official: the official numbers, quirks included; corrected: with the quirks fixed (README).")
@click.option("--distance", type=click.Choice(DISTANCE_SETTINGS),
              help="Distances for the spatial metrics: amap (Gaode web API, key in AMAP_API_KEY) or offline "
                   "(default: amap when AMAP_API_KEY is set, else offline).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
              help="The TravelEval folder (default: the data home's traveleval/).")
@home_option
@click.option("--standardize-names", is_flag=True,
              help="First rename places to the database's spelling, as the official pipeline's POI cleaning does "
                   "before its evaluator (run.py); each JSON result lists what was renamed. Default: as given.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON result per plan.")
def evaluate_command(plans: Path, mode: str, distance: str | None, data_dir: Path | None, home: Path | None,
                     standardize_names: bool, as_json: bool) -> None:
    """Score TravelEval plans (one FinalTravelPlan JSON object per line of PLANS) with the six metric groups."""
    folder = data_dir or paths.data_dir(home)
    queries = {task.id: task.input for split in (ALL, PROGRESSIVE) for task in load_tasks(folder, split)}
    with open_scorer(folder, distance=distance, standardize_names=standardize_names) as scorer:
        results = [scorer.score(plan, _query(queries, plan.get("query_uid")), mode) if plan is not None else
                   {"query_uid": None, "mode": mode, "distance": scorer.distances.name, "error": why}
                   for plan, why in _read_plans(plans)]
    if as_json:
        for result in results:
            click.echo(json.dumps(result, ensure_ascii=False, allow_nan=False))
        return
    _print_table(results, mode, scorer.distances.name)


def _query(queries: Mapping[str, Mapping[str, Any]], uid: Any) -> Mapping[str, Any] | None:
    """The query of a plan's uid, looked up as the official batch loop does: the uid, then the uid with every
    "_scheme1", then also every "_scheme2", then every "_scheme3" removed (anywhere in it)."""
    if not isinstance(uid, str):
        return None
    query = queries.get(uid)
    for number in (1, 2, 3):
        if query:
            break
        uid = uid.replace(f"_scheme{number}", "")
        query = queries.get(uid)
    return query


def _read_plans(path: Path) -> list[tuple[dict[str, Any] | None, str]]:
    """(plan object, "") per non-empty line, or (None, why) for a line that is not a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text: {exc}") from None
    if not text.strip():
        raise DataError(f"{path}: empty: expected one FinalTravelPlan object per line")
    found: list[tuple[dict[str, Any] | None, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            plan = json.loads(line)
        except json.JSONDecodeError as exc:
            plan, why = None, f"not JSON: {exc}"
        else:
            why = "" if isinstance(plan, dict) else f"expected a FinalTravelPlan object, got {type(plan).__name__}"
        found.append((None, f"{path}:{number}: {why}") if why else (plan, ""))
    return found


def _print_table(results: Sequence[Mapping[str, Any]], mode: str, distance: str) -> None:
    scored = [result["metrics"] for result in results if "metrics" in result]
    table = Table(title=f"TravelEval: {len(scored)} of {len(results)} plans scored ({mode} mode, {distance} "
                        "distances); means over the scored plans")
    for column in ("dimension", "metric", "mean", "N"):
        table.add_column(column, justify="right" if column in ("mean", "N") else "left")
    for dimension in DIMENSIONS:
        for metric, values in _numbers(scored, dimension).items():
            present = [value for value in values if value is not None]
            mean = f"{sum(present) / len(present):.4f}" if present else "-"
            table.add_row(dimension, metric, mean, str(len(present)))
    console = Console(width=100)
    console.print(table)
    for result in results:
        if "error" in result:
            console.print(f"error: {result['query_uid']}: {result['error']}", markup=False)


def _numbers(scored: Sequence[Mapping[str, Any]], dimension: str) -> dict[str, list[float | None]]:
    """Each metric's values (a nested dict flattened to `metric.key`; null and non-finite values as None)."""
    values: dict[str, list[float | None]] = {}
    for metrics in scored:
        for name, value in metrics[dimension].items():
            items = value.items() if isinstance(value, Mapping) else [("", value)]
            for key, item in items:
                label = f"{name}.{key}" if key else name
                number = float(item) if isinstance(item, int | float) and math.isfinite(item) else None
                values.setdefault(label, []).append(number)
    return values
