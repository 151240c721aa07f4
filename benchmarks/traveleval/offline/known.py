"""The TravelEval prompts the offline models can answer: those of the tasks this process loaded, by uid.

A prompt names its query only by uid (`prompts.find_uid`), as the official agents' prompts do: loading tasks
(`remember`, which the benchmark calls) tells this module each uid's query and the data folder of its sandbox. A
process that loaded none (a standalone `tripbench mock-server`) looks the uid up once in the data home's query
files (`query_for`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.base import Task

_TASK_FIELDS = ("group", "step")
"""Fields a task adds to the query record (progressive split); not part of what identifies the query."""

_queries: dict[str, dict[str, tuple[Mapping[str, Any], Path]]] = {}
"""uid -> query key -> (query, data folder), newest last: two query files may use one uid for other queries."""
_looked_in_home = False


def query_key(query: Mapping[str, Any]) -> str:
    """What identifies a query: its record without the task's own fields, as JSON with sorted keys."""
    return json.dumps({k: v for k, v in query.items() if k not in _TASK_FIELDS}, ensure_ascii=False, sort_keys=True)


def remember(tasks: Iterable[Task], data_dir: Path) -> None:
    """Lets the offline models answer the prompts of these tasks, from the sandbox of `data_dir` (built, if
    missing, at the first answer)."""
    folder = Path(data_dir).resolve()
    for task in tasks:
        same_uid = _queries.setdefault(str(task.input.get("uid", task.id)), {})
        key = query_key(task.input)
        same_uid.pop(key, None)  # loaded again: the newest
        same_uid[key] = (task.input, folder)


def query_for(uid: str, prompt: str = "") -> tuple[Mapping[str, Any], Path] | None:
    """The query of a uid and its data folder (None: not one this process knows, nor the data home). Of several
    queries with this uid, the one whose request the prompt quotes, else the one loaded last."""
    global _looked_in_home
    if uid not in _queries and not _looked_in_home:
        _looked_in_home = True
        _remember_home()
    found = list(_queries.get(uid, {}).values())
    quoted = [entry for entry in found if entry[0].get("nature_language") and entry[0]["nature_language"] in prompt]
    return (quoted or found)[-1] if found else None


def _remember_home() -> None:
    """The data home's TravelEval queries, every split (none when it has no TravelEval data)."""
    from benchmarks.traveleval import dataset, paths
    from errors import UserError

    data_dir = paths.data_dir()
    for split in ("all", "progressive"):
        try:
            remember(dataset.load_tasks(data_dir, split), data_dir)
        except UserError:  # no data there: nothing to answer from
            return
