"""Evaluator results in the official per-plan row shape: what the official evaluator appends to its Excel file
(`core/utils/result_writer.py` @ 3638d555), one row per plan, which its analysis (`run.py`) averages per column.

The official row is its result dict flattened with `_` between keys: `query_id`, `status` (`success` | `error`),
`error`, and `detailed_metrics_<dimension>_<metric>` (a nested dict one key further:
`detailed_metrics_space_CSM_P90`, `detailed_metrics_economy_cost_distribution_meals`; a list becomes its text).
Columns come in the official order: `query_id`, `status`, then each dimension's columns (accuracy, constraint,
time, space, economy, utility), sorted by name as the official writer sorts them, then the rest, sorted. A value the
official code leaves NaN, and a column a row lacks (an empty `CSM`), is an empty cell.

Left out: the wall-clock columns (`evaluation_time`, each dimension's `calculation_time`,
`evaluation_metadata_*`), which describe one machine's run and no plan. The official file's column order also
depends on which plan first had a column (pandas appends the columns a later row brings); here it is the order
above over every row's columns, so files of the same plans always agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.traveleval.evaluation import DIMENSIONS
from datahome.output_files import write_csv

HEAD = ("query_id", "status")
PREFIX = "detailed_metrics"


def official_row(result: Mapping[str, Any], query_id: str | None = None) -> dict[str, Any]:
    """One `evaluate_plan` result as the official row; `query_id` is the query's uid (the official row names the
    query, not the plan: a `_schemeN` plan gets its query's uid), default the plan's own."""
    row: dict[str, Any] = {"query_id": query_id if query_id is not None else result.get("query_uid"),
                           "status": "error" if "error" in result else "success",
                           "error": str(result.get("error", ""))}
    for dimension, metrics in (result.get("metrics") or {}).items():
        row.update(_flat(metrics, f"{PREFIX}_{dimension}"))
    return row


def _flat(value: Any, key: str) -> dict[str, Any]:
    """The official flattening: dicts one key further, lists of dicts one index further, other lists as text."""
    if isinstance(value, Mapping):
        return {name: item for sub, inner in value.items() for name, item in _flat(inner, f"{key}_{sub}").items()}
    if isinstance(value, list):
        if all(isinstance(item, Mapping) for item in value):  # an empty list too: no column, as officially
            return {name: item for index, inner in enumerate(value)
                    for name, item in _flat(inner, f"{key}_{index}").items()}
        return {key: str(value)}
    return {key: value}


def official_columns(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every column of `rows`, in the official order (module docstring)."""
    names = {name for row in rows for name in row}
    ordered = [name for name in HEAD if name in names]
    for dimension in DIMENSIONS:
        ordered += sorted(name for name in names if name.startswith(f"{PREFIX}_{dimension}_"))
    return ordered + sorted(names - set(ordered))


def write_official_csv(path: Path, rows: Iterable[Mapping[str, Any]], columns: Iterable[str] | None = None) -> Path:
    """`rows` (`official_row`s) as a CSV file of the official columns, replaced atomically; an absent or null value
    is an empty cell, a text that a spreadsheet would run as a formula is neutralised (`output_files.write_csv`).
    `columns`: every column name the rows hold, known beforehand, so the rows are read once (a stream of them)."""
    rows = rows if columns is not None else list(rows)
    ordered = official_columns([dict.fromkeys(columns)] if columns is not None else rows)
    return write_csv(path, ordered, ([row.get(name) for name in ordered] for row in rows))
