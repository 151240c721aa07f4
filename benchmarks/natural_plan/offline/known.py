"""The Natural Plan prompts the offline models can answer: those of the tasks this process loaded.

The gold plan is in the record, not in the prompt: loading tasks (`remember`, which the benchmark calls) tells this
module the records behind their prompts, so the models answer the prompts of a run's or the demo's tasks, and, in a
process that loaded none (`tripbench mock-server --reply oracle`), those of the data home's files.
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

_records: dict[bytes, Mapping[str, Any]] = {}


def _digest(prompt: str) -> bytes:
    return hashlib.blake2b(prompt.encode(), digest_size=16).digest()


def remember(tasks: Iterable[Task]) -> None:
    """Lets the offline models answer the prompts (0- and 5-shot) of these tasks."""
    for task in tasks:
        for shots in ("prompt_0shot", "prompt_5shot"):
            if isinstance(prompt := task.input.get(shots), str):
                _records[_digest(prompt)] = task.input


def _remember_data_home() -> None:
    """Remembers the tasks of every Natural Plan file the data home holds (none there: nothing)."""
    for task in dataset.TASKS:
        with contextlib.suppress(DataError):
            remember(dataset.load_tasks(default_home() / "natural_plan", task))


def record_for(prompt: str) -> Mapping[str, Any] | None:
    """The record behind a prompt of a remembered task (None: not one)."""
    record = _records.get(_digest(prompt))
    if record is None and not _records:
        _remember_data_home()
        record = _records.get(_digest(prompt))
    return record
