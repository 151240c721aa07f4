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
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import orjson
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
    tallies: dict[Path, _Tally] = {}
    names = STANDARDIZED if standardize_names else AS_WRITTEN
    with open_scorer(folder, distance=distance, standardize_names=standardize_names) as scorer:
        distance_name = scorer.distances.name
        for path, entries in read:  # each result printed, counted and let go: memory holds one plan
            source = official_source(path)
            about = {"file": str(path)} | ({"model": source.model, "strategy": _strategy(source)} if source else {})
            tally = tallies[path] = _Tally()
            rows = _OfficialRows(official_csv / _official_name(path)) if official_csv is not None else None
            routes = []
            for entry in entries:
                result = about | (scorer.score(entry.plan, query_of(queries, entry.uid), mode)
                                  if entry.plan is not None else _unscored(entry, mode, scorer.distances.name))
                if as_json:
                    click.echo(json.dumps(result, ensure_ascii=False, allow_nan=False))
                tally.add(entry, result)
                if rows is not None:
                    rows.add(official_row(result, _query_uid(queries, result.get("query_uid"))))
                if distance_summary and "metrics" in result and entry.plan is not None:
                    routes.append(route_distances(*_route(entry.plan, queries, mode, scorer.names), scorer.sandbox,
                                                  scorer.distances))
            if rows is not None:
                rows.write()
            summary = summarize(routes) if distance_summary else None
            if as_json:
                if summary is not None:
                    click.echo(json.dumps({"file": str(path), "distance": distance_name,
                                           "distance_summary": summary}, ensure_ascii=False))
            else:
                _print_table(path, tally, mode, distance_name, names)
                if summary is not None:
                    _print_summary(summary, distance_name)
    # a fail_plans_ file holds no plan by definition: its failed answers are counted in its table, not an error
    if empty := [(path, tally) for path, tally in tallies.items() if not tally.failures_only and not tally.scored]:
        raise DataError("\n".join(_nothing_scored(path, tally) for path, tally in empty))


@dataclass(slots=True)
class _Tally:
    """What a file's table and the final check need of its results, added up result by result (none is kept)."""

    entries: int = 0
    failed_entries: int = 0
    """Entries that are the generator's recorded failed answers (`PlanEntry.failed`)."""
    scored: int = 0
    """Results with metrics (`partly` of them with an evaluator error as well)."""
    partly: int = 0
    metrics: dict[str, dict[str, _Metric]] = field(default_factory=dict)
    """Dimension -> metric label (`_values`) -> its values, in the order first met."""
    errors: list[str] = field(default_factory=list)
    """`uid: error` of every result with an error, in file order."""
    reasons: Counter[str] = field(default_factory=Counter)
    """The reasons of the results without metrics (`_reason`)."""

    @property
    def failures_only(self) -> bool:
        return self.entries > 0 and self.failed_entries == self.entries

    def add(self, entry: PlanEntry, result: Mapping[str, Any]) -> None:
        self.entries += 1
        self.failed_entries += entry.failed
        if "error" in result:
            self.errors.append(f"{result['query_uid']}: {result['error']}")
        if "metrics" not in result:
            self.reasons[_reason(str(result["error"]))] += 1
            return
        self.scored += 1
        self.partly += "error" in result
        for dimension in DIMENSIONS:
            metrics = self.metrics.setdefault(dimension, {})
            for label, value in _values(result, dimension):
                metrics.setdefault(label, _Metric()).add(value)


@dataclass(slots=True)
class _Metric:
    """One metric's values over a file's scored results: the sum and count of the numbers, the stand-ins counted."""

    total: float = 0.0
    present: int = 0
    unmeasured: int = 0

    def add(self, value: float | str | None) -> None:
        if isinstance(value, float):
            self.total += value
            self.present += 1
        elif value == NOT_MEASURED:
            self.unmeasured += 1


class _OfficialRows:
    """A file's official rows (`official_row`), spooled to a temporary file beside the CSV as they come, then
    written as the CSV once every column is known (`write_official_csv` over the spooled rows)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._spool = tempfile.TemporaryFile(dir=path.parent)
        self._columns: set[str] = set()

    def add(self, row: Mapping[str, Any]) -> None:
        self._columns.update(row)
        self._spool.write(orjson.dumps(row) + b"\n")

    def write(self) -> None:
        with self._spool:
            self._spool.seek(0)
            write_official_csv(self.path, (orjson.loads(line) for line in self._spool), self._columns)


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


def _nothing_scored(path: Path, tally: _Tally) -> str:
    """Why no plan of a file was scored: the commonest reasons, counted."""
    listed = "; ".join(f"{count} x {reason}" for reason, count in tally.reasons.most_common(3))
    more = f"; and {len(tally.reasons) - 3} other reasons" if len(tally.reasons) > 3 else ""
    return f"{path}: 0 of {tally.entries} plans scored: {listed}{more}"


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


def _query_uid(queries: Mapping[str, Mapping[str, Any]], uid: Any) -> str | None:
    query = query_of(queries, uid)
    return str(query["uid"]) if query is not None else None


def _print_table(path: Path, tally: _Tally, mode: str, distance: str, names: str) -> None:
    source = official_source(path)
    made_by = f" ({source.model} / {_strategy(source)})" if source else ""
    partly = (f", {tally.partly} of them only partly (an evaluator error: the dimensions before it kept)"
              if tally.partly else "")
    table = Table(title=f"TravelEval: {tally.scored} of {tally.entries} plans scored{partly} ({mode} mode, {distance} "
                        f"distances, names {names}); means over the scored plans")
    for column in ("dimension", "metric", "official key", "mean", "N", "not measured"):
        table.add_column(column, justify="left" if column in ("dimension", "metric", "official key") else "right")
    for dimension in DIMENSIONS:
        for metric, values in tally.metrics.get(dimension, {}).items():
            mean = (f"{values.total / values.present:.4f}" if values.present else
                    NOT_MEASURED if values.unmeasured else "-")
            table.add_row(DIMENSION_NAMES[dimension], paper_name(dimension, metric), metric, mean,
                          str(values.present), str(values.unmeasured or ""))
    console = Console(width=120)
    console.print(f"{path}{made_by}", markup=False, highlight=False)
    if tally.scored:
        console.print(table)
    else:  # no row to show: an empty table would print a blank one
        console.print(f"TravelEval: 0 of {tally.entries} plans scored", markup=False, highlight=False)
    for error in tally.errors:
        console.print(f"error: {error}", markup=False, soft_wrap=True)


def _values(result: Mapping[str, Any], dimension: str) -> Iterator[tuple[str, float | str | None]]:
    """A scored result's values of one dimension (a nested dict flattened to `metric.key`; null and non-finite values
    as None; a value the result lists as `not_measured`, the official code's stand-in, as `NOT_MEASURED`: the
    report's rule)."""
    unmeasured = result.get("not_measured") or {}
    for name, value in (result["metrics"].get(dimension) or {}).items():
        items = value.items() if isinstance(value, Mapping) else [("", value)]
        if f"{dimension}.{name}" in unmeasured:
            items = [(key, NOT_MEASURED) for key, _ in items] or [("P90", NOT_MEASURED), ("P95", NOT_MEASURED)]
        for key, item in items:
            label = f"{name}.{key}" if key else name
            number = float(item) if isinstance(item, int | float) and math.isfinite(item) else None
            yield label, NOT_MEASURED if item == NOT_MEASURED else number


def paper_name(dimension: str, key: str) -> str:
    """The paper's name of an official metric key (`metric_names`); a cost category's is its share's acronym."""
    category = key.removeprefix("cost_distribution.")
    if category != key:
        return f"{COST_NAMES.get(category, category)} (RMB)"
    return acronym(dimension, key)


def _strategy(source: Source) -> str:
    """The strategy a file name says; the official ReAct&Reflexion file holds two (`plan_files`)."""
    return "react/reflexion" if source.paired else source.strategy
