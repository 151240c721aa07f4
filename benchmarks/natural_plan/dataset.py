"""Natural Plan's data files: one JSON object per task, keyed by example id, records as the official repository has
them (`prompt_0shot`, `prompt_5shot`, `golden_plan`, the task's own fields, `pred_5shot_pro`).

A split is a task name (`trip`, `meeting`, `calendar`) or `all` (the three, in that order). The files are
`<data_dir>/<stem>.json` (what `tripbench data fetch natural-plan` writes) or, failing that, `<stem>_100.json`
(the 100-record samples staged for tests). A task's id is the official example id, its input the record without
the stored model answers (`pred_*`), plus `task`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.base import Task
from benchmarks.jsonl import read_json
from errors import DataError, MissingInput

FILE_STEMS: Mapping[str, str] = {"trip": "trip_planning", "meeting": "meeting_planning",
                                 "calendar": "calendar_scheduling"}
"""Task name -> the official file's stem (`data/<stem>.json` in the repository)."""
TASKS = tuple(FILE_STEMS)
ALL = "all"
SPLITS = (*TASKS, ALL)
REQUIRED: Mapping[str, tuple[str, ...]] = {
    "trip": ("cities", "durations", "num_cities"),
    "meeting": ("constraints", "dist_matrix", "num_people"),
    "calendar": ("num_people", "num_days"),
}
"""Fields each task's scoring and reports read, besides the prompts and `golden_plan`."""
GROUP_FIELDS: Mapping[str, tuple[str, ...]] = {"trip": ("num_cities",), "meeting": ("num_people",),
                                               "calendar": ("num_people", "num_days")}
"""The fields the official scripts group accuracy by: cities, people, people x days."""


def find_file(data_dir: Path, task: str) -> Path:
    """The task's records under `data_dir`: the full file, else the staged sample.

    Raises:
        DataError: neither exists.
    """
    stem = FILE_STEMS[task]
    for name in (f"{stem}.json", f"{stem}_100.json"):
        if (data_dir / name).is_file():
            return data_dir / name
    raise MissingInput(f"{data_dir}: no {stem}.json (run `tripbench data fetch natural-plan`, or `tripbench data "
                       "import DIR` for a folder holding the official files)")


def task_of(example_id: str, record: Mapping[str, Any]) -> str | None:
    """The task a record belongs to, by its official id prefix, else by its fields."""
    for task, stem in FILE_STEMS.items():
        if example_id.startswith(stem):
            return task
    for task, fields in REQUIRED.items():
        if all(name in record for name in fields) and (task != "calendar" or "dist_matrix" not in record):
            return task
    return None


def read_records(path: Path, task: str | None = None) -> dict[str, dict[str, Any]]:
    """The records of an official-format file, checked for the fields scoring needs.

    Args:
        path: A JSON object of records keyed by example id.
        task: The task every record must belong to (None: each record's own, by id or fields).

    Raises:
        DataError: unreadable JSON, not an object of records, or a record without a needed field (names it).
    """
    data = read_json(path)
    return records_from(data, path, task)


def records_from(data: Any, path: Path, task: str | None = None) -> dict[str, dict[str, Any]]:
    """`read_records` on a file's parsed JSON (`path` names it in errors)."""
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object of records keyed by example id, got {type(data).__name__}")
    records: dict[str, dict[str, Any]] = {}
    for example_id, record in data.items():
        if not isinstance(record, dict):
            raise DataError(f"{path}: {example_id}: expected an object, got {type(record).__name__}")
        kind = task or task_of(example_id, record)
        if kind is None:
            raise DataError(f"{path}: {example_id}: not a trip, meeting or calendar record (fields: "
                            f"{', '.join(sorted(record))})")
        missing = [name for name in ("golden_plan", *REQUIRED[kind]) if name not in record]
        if missing:
            raise DataError(f"{path}: {example_id}: missing field(s) {', '.join(missing)} of a {kind} record")
        records[example_id] = {**record, "task": kind}
    return records


def load_tasks(data_dir: Path, split: str) -> list[Task]:
    """The tasks of a split (a task name or `all`) from `data_dir`.

    Raises:
        DataError: an unknown split, a missing or malformed file.
    """
    if split not in SPLITS:
        raise DataError(f"unknown split {split!r} ({', '.join(SPLITS)}); a records file is `queries = FILE`")
    tasks: list[Task] = []
    for task in TASKS if split == ALL else (split,):
        tasks += tasks_of(read_records(find_file(data_dir, task), task))
    return tasks


def tasks_of(records: Mapping[str, Mapping[str, Any]]) -> list[Task]:
    """Records as tasks: the id is the example id, the input the record without stored answers."""
    return [Task(id=example_id, input={k: v for k, v in record.items() if not k.startswith("pred_")})
            for example_id, record in records.items()]


def group_of(record: Mapping[str, Any]) -> str:
    """The official accuracy group of a record, e.g. `3 cities`, `4 people`, `2 people x 1 day(s)`."""
    task = record["task"]
    if task == "trip":
        return f"{record['num_cities']} cities"
    if task == "meeting":
        return f"{record['num_people']} people"
    return f"{record['num_people']} people x {record['num_days']} day(s)"


def group_key(group: str) -> tuple[int, ...]:
    """Sort key of `group_of` labels: by their numbers."""
    return tuple(int(part) for part in group.replace("(s)", "").split() if part.isdigit())


def answers_of(records: Mapping[str, Mapping[str, Any]], field: str) -> dict[str, str]:
    """The answers a file stores in `field` (the official scripts read `pred_5shot_pro`).

    Raises:
        DataError: a record without the field, or with something other than text in it.
    """
    answers: dict[str, str] = {}
    for example_id, record in records.items():
        value = record.get(field)
        if not isinstance(value, str):
            found = "no such field" if field not in record else f"a {type(value).__name__}"
            raise DataError(f"{example_id}: field {field!r}: expected the model's answer as text, found {found}")
        answers[example_id] = value
    return answers


def sorted_groups(groups: Sequence[str]) -> list[str]:
    return sorted(set(groups), key=group_key)
