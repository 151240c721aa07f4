"""The TravelEval queries the offline models can answer: those of the tasks they were built from, by uid.

A prompt names its query only by uid (`prompts.find_uid`), as the official agents' prompts do: `KnownQueries` holds
each known uid's query and the data folder of its sandbox, so the models answer the prompts of a run's or the demo's
tasks and leave every other prompt to the other benchmarks. Built with no tasks (a standalone `tripbench
mock-server`), it looks uids up in the data home's query files, read at the first look-up (`in_data_home`).
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
    """The queries of some tasks by uid, and the data folder of their sandbox (built, if missing, at the first
    answer)."""

    def __init__(self, tasks: Iterable[Task], data_dir: Path) -> None:
        self.folder = Path(data_dir).resolve()
        self._queries: dict[str, dict[str, Mapping[str, Any]]] = {}
        """uid -> query key -> query, last seen last: two query files may use one uid for other queries."""
        self._home: Path | None = None
        """A data home whose queries are still to be read, at the first look-up."""
        self._add(tasks)

    @classmethod
    def in_data_home(cls, data_dir: Path) -> KnownQueries:
        """The queries of every split of a data home, read at the first look-up (none when it has no TravelEval
        data)."""
        known = cls((), data_dir)
        known._home = known.folder
        return known

    def _add(self, tasks: Iterable[Task]) -> None:
        for task in tasks:
            same_uid = self._queries.setdefault(str(task.input.get("uid", task.id)), {})
            key = query_key(task.input)
            same_uid.pop(key, None)  # seen again: the last
            same_uid[key] = task.input

    def query_for(self, uid: str, prompt: str = "") -> Mapping[str, Any] | None:
        """The query of a uid (None: not a known one). Of several queries with this uid, the one whose request the
        prompt quotes, else the one seen last."""
        if self._home is not None:
            home, self._home = self._home, None
            self._add(_home_tasks(home))
        found = list(self._queries.get(uid, {}).values())
        quoted = [query for query in found if query.get("nature_language") and query["nature_language"] in prompt]
        return (quoted or found)[-1] if found else None


def _home_tasks(data_dir: Path) -> list[Task]:
    """The tasks of every split of the data home `data_dir` (none without TravelEval data)."""
    from benchmarks.traveleval import dataset
    from errors import UserError

    tasks: list[Task] = []
    for split in ("all", "progressive"):
        try:
            tasks += dataset.load_tasks(data_dir, split)
        except UserError:  # no data there: nothing to answer from
            break
    return tasks
