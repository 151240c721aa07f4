"""TravelEval's query files: `data/queries/{easy,medium,hard,progressive}.json` under the TravelEval folder.

`easy`, `medium` and `hard` are `{"version", "description", "queries": [...]}` (200 / 400 / 400 queries, uids
T0001-T1000); `all` is the three in that order. `progressive` is `{"query_groups": [[q, q, q], ...]}`: 50 groups of
one trip with constraints added step by step (uids G01-1 .. G50-3). `full` is `all` then `progressive`: the 1,150
queries the paper's overall figures pool. A task's id is the query's `uid`, its input the
query object as the file has it; a progressive query also gets `group` ("G01") and `step` (1, 2, 3), by position.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.base import Task
from benchmarks.jsonl import read_json
from benchmarks.traveleval import paths
from errors import DataError, MissingInput

TIERS = ("easy", "medium", "hard")
ALL = "all"
PROGRESSIVE = "progressive"
FULL = "full"
SPLITS = (*TIERS, ALL, PROGRESSIVE, FULL)
FILES = {ALL: TIERS, FULL: (*TIERS, PROGRESSIVE)}
"""The query files of the splits that join several (any other split is its own file)."""
CONSTRAINT_BLOCKS = ("transportation", "accommodations", "diet", "attractions", "rhythm")
"""Each is `{}` or `{"preferences": [...], "constraints": [...]}` (wanted / excluded values of categories.json)."""
_FIELDS: Mapping[str, tuple[type, ...]] = {
    "uid": (str,), "tag": (str,), "start_city": (str,), "target_city": (str,), "days": (int,),
    "people_number": (int,), "budget": (int, float), "dates": (str,),
}
"""Fields the strategies and the evaluator read, with their JSON types."""


def load_tasks(data_dir: Path, split: str) -> list[Task]:
    """The tasks of a split from a TravelEval folder (`paths` layout).

    Raises:
        DataError: an unknown split, a missing or malformed query file.
    """
    if split not in SPLITS:
        raise DataError(f"unknown TravelEval split {split!r} (one of {', '.join(SPLITS)}); a query file is "
                        "`queries = FILE`")
    tasks: list[Task] = []
    for name in FILES.get(split, (split,)):
        path = paths.queries_dir(data_dir) / f"{name}.json"
        if not path.is_file():
            raise MissingInput(f"{path}: no such file (run `tripbench data fetch traveleval`, or `tripbench data "
                               "import DIR` for a folder holding the official data/ and database/)")
        tasks += read_queries(path)
    return tasks


def read_queries(path: Path) -> list[Task]:
    """The queries of one file of either format, checked.

    Raises:
        DataError: unreadable JSON, neither format, a query without a needed field or with a field of the wrong
            type, a malformed constraint block, a repeated uid (names the file, the query and the field).
    """
    data = read_json(path)
    found: list[tuple[str, Any, dict[str, Any]]]
    if isinstance(data, dict) and isinstance(data.get("queries"), list):
        found = [(f"queries[{i}]", query, {}) for i, query in enumerate(data["queries"])]
    elif isinstance(data, dict) and isinstance(data.get("query_groups"), list):
        found = []
        for g, group in enumerate(data["query_groups"]):
            if not isinstance(group, list):
                raise DataError(f"{path}: query_groups[{g}]: expected a list of queries, got {type(group).__name__}")
            found += [(f"query_groups[{g}][{s}]", query, {"group": f"G{g + 1:02d}", "step": s + 1})
                      for s, query in enumerate(group)]
    else:
        raise DataError(f"{path}: expected an object with a \"queries\" or \"query_groups\" list")
    tasks: list[Task] = []
    seen: set[str] = set()
    for where, query, extra in found:
        _check(query, f"{path}: {where}")
        if query["uid"] in seen:
            raise DataError(f"{path}: {where}: uid {query['uid']!r} appears twice")
        seen.add(query["uid"])
        tasks.append(Task(id=query["uid"], input={**query, **extra}))
    return tasks


def _check(query: Any, where: str) -> None:
    if not isinstance(query, dict):
        raise DataError(f"{where}: expected a query object, got {type(query).__name__}")
    where = f"{where} ({query['uid']})" if isinstance(query.get("uid"), str) else where
    for field, types in _FIELDS.items():
        value = query.get(field)
        if field not in query or not isinstance(value, types) or isinstance(value, bool):
            expected = "text" if types == (str,) else "an integer" if types == (int,) else "a number"
            found = "nothing" if field not in query else repr(value)
            raise DataError(f"{where}: {field}: expected {expected}, got {found}")
    for block in CONSTRAINT_BLOCKS:
        value = query.get(block, {})
        if not isinstance(value, dict):
            raise DataError(f"{where}: {block}: expected an object (preferences / constraints), got {value!r}")
        for key in ("preferences", "constraints"):
            items = value.get(key, [])
            if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
                raise DataError(f"{where}: {block}.{key}: expected a list of text, got {items!r}")
