"""The Natural Plan prompts the offline models can answer: those of the tasks they were built from.

The gold plan is in the record, not in the prompt: `KnownPrompts` maps the prompts (0- and 5-shot) of some tasks to
their records; built from no tasks (a mock server with no run behind it), it knows those of the data home's files.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from benchmarks.base import Task
from benchmarks.natural_plan import dataset
from datahome import default_home
from errors import DataError


def _digest(prompt: str) -> bytes:
    return hashlib.blake2b(prompt.encode(), digest_size=16).digest()


def _data_home_tasks() -> list[Task]:
    """The tasks of every Natural Plan file the data home holds (none there: none)."""
    tasks: list[Task] = []
    for task in dataset.TASKS:
        with contextlib.suppress(DataError):
            tasks += dataset.load_tasks(default_home() / "natural_plan", task)
    return tasks


class KnownPrompts:
    """The records behind the prompts of some tasks (no tasks: the data home's, read at the first question)."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._tasks: Iterable[Task] | None = tasks
        self._records: dict[bytes, Mapping[str, Any]] = {}

    def record_for(self, prompt: str) -> Mapping[str, Any] | None:
        """The record behind a prompt of a known task (None: not one)."""
        if self._tasks is not None:
            tasks, self._tasks = list(self._tasks), None
            for task in tasks or _data_home_tasks():
                for shots in ("prompt_0shot", "prompt_5shot"):
                    if isinstance(prompt_text := task.input.get(shots), str):
                        self._records[_digest(prompt_text)] = task.input
        return self._records.get(_digest(prompt))
