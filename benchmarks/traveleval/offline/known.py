"""The TravelEval queries the offline models can answer: those of the tasks they were built from.

The sandbox is not in the prompt: `KnownQueries` tells which data folder holds each known query's sandbox, so the
models answer the prompts of a run's or the demo's tasks, and leave every other prompt to the other benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.base import Task

_TASK_FIELDS = ("group", "step")
"""Fields a task adds to the query record (progressive split); not part of what identifies the query."""


def query_key(query: Mapping[str, Any]) -> str:
    """What identifies a query: its record without the task's own fields, as JSON with sorted keys."""
    return json.dumps({k: v for k, v in query.items() if k not in _TASK_FIELDS}, ensure_ascii=False, sort_keys=True)


class KnownQueries:
    """The queries of some tasks and the data folder of their sandbox (built, if missing, at the first answer)."""

    def __init__(self, tasks: Iterable[Task], data_dir: Path) -> None:
        folder = Path(data_dir).resolve()
        self._folders = {query_key(task.input): folder for task in tasks}

    def folder_for(self, query: Mapping[str, Any]) -> Path | None:
        """The data folder of a known query (None: not one)."""
        return self._folders.get(query_key(query))
