"""A run spec, expanded into the rollout keys the scheduler runs, in a stable order."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from benchmarks.base import Task
from errors import ConfigError
from runner.engine.spec import MAX_ROLLOUTS, RunSpec
from runner.store.records import RolloutKey


def split_name(spec: RunSpec) -> str:
    """The split element of rollout keys: the split, or the query file's name."""
    return spec.split if spec.split is not None else Path(spec.queries or "").name


def select_tasks(spec: RunSpec, tasks: Sequence[Task], source: str) -> list[Task]:
    """Applies the spec's `tasks` subset and `limit`, keeping dataset order unless `tasks` gives one.

    Raises:
        ConfigError: a task id in `tasks` is not in the split, or two tasks share an id.
    """
    by_id = {task.id: task for task in tasks}
    if len(by_id) != len(tasks):
        raise ConfigError(source, "split", "a split whose task ids are unique")
    chosen = list(tasks)
    if spec.tasks is not None:
        missing = [task_id for task_id in spec.tasks if task_id not in by_id]
        if missing:
            raise ConfigError(source, "tasks", "ids present in the split", ", ".join(missing[:5]))
        chosen = [by_id[task_id] for task_id in spec.tasks]
    return chosen[: spec.limit] if spec.limit is not None else chosen


def check_size(spec: RunSpec, tasks: int, source: str) -> None:
    """Refuses a run of more than `MAX_ROLLOUTS` rollouts before they are expanded (each is a key in memory).

    Raises:
        ConfigError: naming the product that is too large.
    """
    sizes = {"tasks": tasks, "models": len(spec.models), "strategies": len(spec.strategies), "samples": spec.samples}
    if math.prod(sizes.values()) > MAX_ROLLOUTS:
        field = max(sizes, key=lambda name: sizes[name])
        raise ConfigError(source, field, f"at most {MAX_ROLLOUTS:,} rollouts in a run (tasks x models x strategies "
                          "x samples)", " x ".join(f"{n:,} {name}" for name, n in sizes.items()))


def expand(spec: RunSpec, tasks: Sequence[Task], benchmark: str) -> list[RolloutKey]:
    """Every rollout of a run: tasks x models x strategies x samples.

    `benchmark` is the benchmark's own name (not the spec's import path), so keys survive a change of spelling.

    Ordered task by task, so early results cover every model and strategy, and each model's calls are spread
    over the whole run rather than bunched (which keeps every rate limiter busy at once).
    """
    split = split_name(spec)
    return [
        RolloutKey(benchmark, split, task.id, model.label, strategy, sample)
        for task in tasks
        for model in spec.models
        for strategy in spec.strategies
        for sample in range(spec.samples)
    ]
