"""The TravelEval prompts the offline models can answer: those of the tasks this process loaded.

The sandbox is not in the prompt: loading tasks (`remember`, which the benchmark calls) tells this module which data
folder holds each query's sandbox, so the models answer the prompts of a run's or the demo's tasks, and leave every
other prompt to the other benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.base import Task

_TASK_FIELDS = ("group", "step")
"""Fields a task adds to the query record (progressive split); not part of what identifies the query."""

_folders: dict[str, Path] = {}


def query_key(query: Mapping[str, Any]) -> str:
    """What identifies a query: its record without the task's own fields, as JSON with sorted keys."""
    return json.dumps({k: v for k, v in query.items() if k not in _TASK_FIELDS}, ensure_ascii=False, sort_keys=True)


def remember(tasks: Iterable[Task], data_dir: Path) -> None:
    """Lets the offline models answer the prompts of these tasks, from the sandbox of `data_dir` (built, if
    missing, at the first answer)."""
    folder = Path(data_dir).resolve()
    for task in tasks:
        _folders[query_key(task.input)] = folder


def folder_for(query: Mapping[str, Any]) -> Path | None:
    """The data folder of a remembered query (None: not one)."""
    return _folders.get(query_key(query))
