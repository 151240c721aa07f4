"""`tripbench evaluate FILES --benchmark traveleval`: score plans with the official six metric groups.

Each FILE holds `FinalTravelPlan` objects, {"query_uid": ..., "itinerary": {...}}: one per line (JSONL, what a
run's submission holds), or the official generator's JSON array (`plan_files`, whose name says the model and
strategy). The query is found by `query_uid` in the data folder's query files; as the official batch loop does, a
uid with "_schemeN" in it (N = 1..3, the official loader's name for a second plan of the same query) falls back to
the uid without it (`plan_files.query_of`). Every entry is scored (the official loader keeps at most four plans of
one uid, overwriting the last). An entry that is not a JSON object, or whose query is unknown, is reported as an
error result: nothing is dropped. A file of which no plan could be scored ends the command with exit code 1 and the
reasons, after its results are printed, unless it holds only the generator's failed answers (a `fail_plans_` file:
no plans by definition, so they are counted, not an error).
With `--json`, one result object per line (`evaluation.evaluate_plan`, plus the file, and the model and strategy
when its name says them), else a table of the mean of each metric per file; `--official-csv DIR` also writes
`DIR/<file name>.csv`, the official evaluator's per-plan rows (`evaluation.official_rows`); `--distance-summary`
the distance statistics of the scored plans' daily routes (`evaluation.route_distances`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from benchmarks.traveleval import paths
from benchmarks.traveleval.dataset import ALL, PROGRESSIVE, load_tasks
from benchmarks.traveleval.evaluation import AS_WRITTEN, DIMENSIONS, MODES, STANDARDIZED, open_scorer
from benchmarks.traveleval.evaluation.distance import DISTANCE_SETTINGS
from benchmarks.traveleval.evaluation.modes import CORRECTED
from benchmarks.traveleval.evaluation.official_rows import official_row, write_official_csv
from benchmarks.traveleval.evaluation.route_distances import route_distances, summarize
from benchmarks.traveleval.metric_names import COST_NAMES, DIMENSION_NAMES, acronym
from benchmarks.traveleval.plan_files import PlanEntry, PlanFile, Source, official_source, query_of
from benchmarks.traveleval.report.aggregate import NOT_MEASURED
from benchmarks.traveleval.sandbox.names import NameMatcher
from datahome import home_option
from datahome.input_files import distinct_inputs
from errors import DataError, UsageError


@click.command("evaluate")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
                metavar="FILES...")
@click.option("--mode", type=click.Choice(MODES), default="official", show_default=True,
              help="official: the official numbers, quirks included; corrected: with the quirks fixed; no-queue: "
                   "official without the queuing model (the paper's ablation, Table B3) (README).")
@click.option("--distance", type=click.Choice(DISTANCE_SETTINGS),
              help="Distances for the spatial metrics: amap (Gaode web API, key in AMAP_API_KEY) or offline "
                   "(default: amap when AMAP_API_KEY is set, else offline).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
              help="The TravelEval folder (default: the data home's traveleval/).")
@home_option
@click.option("--standardize-names/--no-standardize-names", default=True, show_default=True,
              help="First rename places to the database's spelling, as the official pipeline's POI matcher does "
                   "before its evaluator (run.py, min score 60); each JSON result lists what was renamed. "
                   "--no-standardize-names scores the plans as written (the official evaluator alone).")
@click.option("--official-csv", "official_csv", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Also write DIR/<file name>.csv per FILE: the official evaluator's per-plan rows "
                   "(detailed_metrics_<dimension>_<metric> columns), as run.py writes one Excel file per plans file.")
@click.option("--distance-summary", is_flag=True,
              help="Also give distance statistics of the scored plans' daily routes per FILE (stops located, legs "
                   "measured or estimated, km per leg and per day); with --json, one more line per FILE.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON result per plan.")
def evaluate_command(files: tuple[Path, ...], mode: str, distance: str | None, data_dir: Path | None,
                     home: Path | None, standardize_names: bool, official_csv: Path | None, distance_summary: bool,
                     as_json: bool) -> None:
    """Score TravelEval plans with the six metric groups: FILES of one FinalTravelPlan JSON object per line, or the
    official generator's JSON arrays (plans_<model>_<strategy>.json)."""
    folder = data_dir or paths.data_dir(home)
    distinct_inputs(files)
    if official_csv is not None:
        _official_names(files)
    read = [(path, PlanFile(path)) for path in files]  # every file's format checked before any scoring
    queries = {task.id: task.input for split in (ALL, PROGRESSIVE) for task in load_tasks(folder, split)}
    scored: list[tuple[Path, list[dict[str, Any]]]] = []
    summaries: dict[Path, dict[str, Any]] = {}
    with open_scorer(folder, distance=distance, standardize_names=standardize_names) as scorer:
        for path, entries in read:
            source = official_source(path)
            about = {"file": str(path)} | ({"model": source.model, "strategy": _strategy(source)} if source else {})
            results = [about | (scorer.score(entry.plan, query_of(queries, entry.uid), mode)
                                if entry.plan is not None else _unscored(entry, mode, scorer.distances.name))
                       for entry in entries]
            scored.append((path, results))
            if distance_summary:
                routes = [route_distances(*_route(entry.plan, queries, mode, scorer.names), scorer.sandbox,
                                          scorer.distances)
                          for entry, result in zip(entries, results, strict=True)
                          if "metrics" in result and entry.plan is not None]
                summaries[path] = summarize(routes)
    distance_name = scorer.distances.name
    if official_csv is not None:
        _write_official(official_csv, scored, queries)
    for path, results in scored:
        if as_json:
            for result in results:
                click.echo(json.dumps(result, ensure_ascii=False, allow_nan=False))
            if path in summaries:
                click.echo(json.dumps({"file": str(path), "distance": distance_name,
                                       "distance_summary": summaries[path]}, ensure_ascii=False))
        else:
            _print_table(path, results, mode, distance_name, STANDARDIZED if standardize_names else AS_WRITTEN)
            if path in summaries:
                _print_summary(summaries[path], distance_name)
    # a fail_plans_ file holds no plan by definition: its failed answers are counted in its table, not an error
    failures_only = {path for path, entries in read if entries and all(entry.failed for entry in entries)}
    if empty := [(path, results) for path, results in scored
                 if path not in failures_only and not any("metrics" in r for r in results)]:
        raise DataError("\n".join(_nothing_scored(path, results) for path, results in empty))


def _route(plan: Mapping[str, Any], queries: Mapping[str, Mapping[str, Any]], mode: str,
           names: NameMatcher | None) -> tuple[Mapping[str, Any], str]:
    """A scored plan's itinerary (renamed as it was scored) and the city whose sandbox scored it."""
    if names is not None:
        plan = names.standardize(plan).plan
    itinerary = plan["itinerary"]
    query = query_of(queries, plan.get("query_uid"))
    return itinerary, str(query["target_city"] if mode == CORRECTED else itinerary["summary"]["destination"])


def _print_summary(summary: Mapping[str, Any], distance: str) -> None:
    table = Table(title=f"Daily routes of the {summary['plans']} scored plans ({distance} distances): "
                        f"{summary['located_stops']} of {summary['stops']} stops located, {summary['measured_legs']} "
                        f"legs measured, {summary['estimated_legs']} estimated (haversine x 1.3)")
    for column in ("km", "mean", "median", "p90", "max"):
        table.add_column(column, justify="left" if column == "km" else "right")
    for label, key in (("per leg", "km_per_leg"), ("per day", "km_per_day")):
        stats = summary[key] or {}
        table.add_row(label, *(f"{stats[name]:.2f}" if name in stats else "-" for name in ("mean", "median", "p90",
                                                                                            "max")))
    Console(width=100).print(table)


def _unscored(entry: PlanEntry, mode: str, distance: str) -> dict[str, Any]:
    return {"query_uid": entry.uid, "mode": mode, "distance": distance, "error": f"{entry.where}: {entry.error}"}


def _nothing_scored(path: Path, results: Sequence[Mapping[str, Any]]) -> str:
    """Why no plan of a file was scored: the commonest reasons, counted."""
    reasons = Counter(_reason(str(result["error"])) for result in results)
    listed = "; ".join(f"{count} x {reason}" for reason, count in reasons.most_common(3))
    more = f"; and {len(reasons) - 3} other reasons" if len(reasons) > 3 else ""
    return f"{path}: 0 of {len(results)} plans scored: {listed}{more}"


def _reason(error: str) -> str:
    """An error without what differs per plan (its place in the file, its uid), so equal reasons count together."""
    if error.startswith("no TravelEval query with uid"):
        return "no TravelEval query with that uid (are these TravelEval plans?)"
    head, _, rest = error.partition(": ")
    return rest if rest and (head.endswith("]") or head.rsplit(":", 1)[-1].isdigit()) else error


def _official_names(files: Sequence[Path]) -> None:
    """Refuses two FILES whose official CSV files would have one name (`plans.jsonl` of two folders): the second
    would replace the first's rows. Names that differ only in case clash too, as they do on macOS and Windows.

    Raises:
        UsageError: the two files and the name, before anything is scored or written.
    """
    named: dict[str, Path] = {}
    for path in files:
        name = _official_name(path)
        if name.casefold() in named:
            raise UsageError(f"{named[name.casefold()]} and {path}: both would write --official-csv {name}: give "
                             "files of different names (or evaluate them one at a time)")
        named[name.casefold()] = path


def _official_name(path: Path) -> str:
    return f"{path.stem}.csv"


def _write_official(folder: Path, scored: Sequence[tuple[Path, Sequence[Mapping[str, Any]]]],
                    queries: Mapping[str, Mapping[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path, results in scored:
        rows = [official_row(result, _query_uid(queries, result.get("query_uid"))) for result in results]
        write_official_csv(folder / _official_name(path), rows)


def _query_uid(queries: Mapping[str, Mapping[str, Any]], uid: Any) -> str | None:
    query = query_of(queries, uid)
    return str(query["uid"]) if query is not None else None


def _print_table(path: Path, results: Sequence[Mapping[str, Any]], mode: str, distance: str, names: str) -> None:
    scored = [result for result in results if "metrics" in result]
    source = official_source(path)
    made_by = f" ({source.model} / {_strategy(source)})" if source else ""
    failed = sum("metrics" in result and "error" in result for result in results)
    partly = f", {failed} of them only partly (an evaluator error: the dimensions before it kept)" if failed else ""
    table = Table(title=f"TravelEval: {len(scored)} of {len(results)} plans scored{partly} ({mode} mode, {distance} "
                        f"distances, names {names}); means over the scored plans")
    for column in ("dimension", "metric", "official key", "mean", "N", "not measured"):
        table.add_column(column, justify="left" if column in ("dimension", "metric", "official key") else "right")
    for dimension in DIMENSIONS:
        for metric, values in _numbers(scored, dimension).items():
            present = [value for value in values if isinstance(value, float)]
            unmeasured = sum(value == NOT_MEASURED for value in values)
            mean = f"{sum(present) / len(present):.4f}" if present else NOT_MEASURED if unmeasured else "-"
            table.add_row(DIMENSION_NAMES[dimension], paper_name(dimension, metric), metric, mean, str(len(present)),
                          str(unmeasured or ""))
    console = Console(width=120)
    console.print(f"{path}{made_by}", markup=False, highlight=False)
    if scored:
        console.print(table)
    else:  # no row to show: an empty table would print a blank one
        console.print(f"TravelEval: 0 of {len(results)} plans scored", markup=False, highlight=False)
    for result in results:
        if "error" in result:
            console.print(f"error: {result['query_uid']}: {result['error']}", markup=False, soft_wrap=True)


def _numbers(scored: Sequence[Mapping[str, Any]], dimension: str) -> dict[str, list[float | str | None]]:
    """Each metric's values over scored results (a nested dict flattened to `metric.key`; null and non-finite values
    as None; a value the result lists as `not_measured`, the official code's stand-in, as `NOT_MEASURED`: the
    report's rule)."""
    values: dict[str, list[float | str | None]] = {}
    for result in scored:
        unmeasured = result.get("not_measured") or {}
        for name, value in (result["metrics"].get(dimension) or {}).items():
            items = value.items() if isinstance(value, Mapping) else [("", value)]
            if f"{dimension}.{name}" in unmeasured:
                items = [(key, NOT_MEASURED) for key, _ in items] or [("P90", NOT_MEASURED), ("P95", NOT_MEASURED)]
            for key, item in items:
                label = f"{name}.{key}" if key else name
                number = float(item) if isinstance(item, int | float) and math.isfinite(item) else None
                values.setdefault(label, []).append(NOT_MEASURED if item == NOT_MEASURED else number)
    return values


def paper_name(dimension: str, key: str) -> str:
    """The paper's name of an official metric key (`metric_names`); a cost category's is its share's acronym."""
    category = key.removeprefix("cost_distribution.")
    if category != key:
        return f"{COST_NAMES.get(category, category)} (RMB)"
    return acronym(dimension, key)


def _strategy(source: Source) -> str:
    """The strategy a file name says; the official ReAct&Reflexion file holds two (`plan_files`)."""
    return "react/reflexion" if source.paired else source.strategy
