"""The files a run leaves besides its store: per (model, strategy), the benchmark's submission and the trajectories.

    RUN_DIR/outputs/<model>/<strategy>/submission.jsonl         the benchmark's official format, task order
    RUN_DIR/outputs/<model>/<strategy>/submission.sample-K.jsonl  one per sample when samples > 1
    RUN_DIR/outputs/<model>/<strategy>/trajectories.jsonl       one line per rollout: status, answer, plan, steps

A submission is written only once every task of its (model, strategy, sample) has a final result; files are
replaced atomically, so a reader never sees half a file.

Folder names are the labels' slugs. Labels whose slugs would clash (`org/model` and `org:model`, or `GPT` and `gpt`
on a case-insensitive file system) each get `-<sha256 prefix of the label>` instead, so no model's files overwrite
another's; a run without such a clash keeps the plain names.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from benchmarks.base import Benchmark, Task
from benchmarks.registry import get_benchmark
from benchmarks.reporting import slug
from runner.outcomes import RERUN_STATUSES
from runner.store.results import RunResults, StoredResults, StoredRollout

OUTPUTS = "outputs"


def folder_names(labels: Iterable[str]) -> dict[str, str]:
    """A distinct folder name per label, the same for the same set of labels (see the module docstring)."""
    names = {label: slug(label) for label in labels}
    digits = 8
    # A suffixed name can itself meet another label's slug; suffixes grow until none clash (64 digits always do:
    # two labels' full digests differ).
    while clashing := _clashing(names):
        names.update({label: f"{slug(label)}-{hashlib.sha256(label.encode()).hexdigest()[:digits]}"
                      for label in clashing})
        digits = min(2 * digits, 64)
    return names


def _clashing(names: Mapping[str, str]) -> list[str]:
    by_name: dict[str, list[str]] = {}
    for label, name in names.items():
        by_name.setdefault(name.casefold(), []).append(label)
    return [label for labels in by_name.values() if len(labels) > 1 for label in labels]


def output_folders(results: RunResults) -> dict[tuple[str, str], Path]:
    """`RUN_DIR/outputs/<model>/<strategy>` of every (model, strategy) with stored rollouts.

    Names are chosen among the stored labels and the latest spec's, so they do not change as a run's models
    store their first rollouts.
    """
    pairs = {(r.key.model, r.key.strategy) for r in results.rollouts}
    models = folder_names({model for model, _ in pairs} | {label for label in results.spec.labels if label})
    strategies = folder_names({strategy for _, strategy in pairs} | set(results.spec.strategies))
    return {(model, strategy): results.run_dir / OUTPUTS / models[model] / strategies[strategy]
            for model, strategy in pairs}


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("wb") as handle:
        for row in rows:
            handle.write(orjson.dumps(row, option=orjson.OPT_NON_STR_KEYS) + b"\n")
    os.replace(temporary, path)


def write_outputs(results: RunResults, benchmark: Benchmark, tasks: Sequence[Task], split: str,
                  samples: int) -> tuple[list[Path], list[str]]:
    """Writes the submission and trajectory files of every (model, strategy) of one split.

    Args:
        results: The run's stored results.
        benchmark: Formats the submission.
        tasks: The run's tasks, in split order.
        split: The split element of the keys to export.
        samples: Samples per task in the spec.

    Returns:
        The files written, and one note per submission left out because rollouts are missing.
    """
    groups: dict[tuple[str, str], list[StoredRollout]] = {}
    for rollout in results.rollouts:
        if rollout.key.benchmark == benchmark.name and rollout.key.split == split:
            groups.setdefault((rollout.key.model, rollout.key.strategy), []).append(rollout)
    order = {task.id: position for position, task in enumerate(tasks)}
    folders = output_folders(results)
    written: list[Path] = []
    notes: list[str] = []
    for (model, strategy), rollouts in sorted(groups.items()):
        rollouts.sort(key=lambda r: (order.get(r.key.task, len(order)), r.key.sample))
        folder = folders[model, strategy]
        _write_jsonl(folder / "trajectories.jsonl", (_trajectory(results, r) for r in rollouts))
        written.append(folder / "trajectories.jsonl")
        finals: dict[int, dict[str, StoredRollout]] = {}  # sample -> task -> its final rollout
        for r in rollouts:
            if r.status not in RERUN_STATUSES:
                finals.setdefault(r.key.sample, {})[r.key.task] = r
        for sample in range(samples):
            final = finals.get(sample, {})
            missing = sum(task.id not in final for task in tasks)
            if missing:
                notes.append(f"{model} / {strategy}{_sample_label(sample, samples)}: no submission yet, "
                             f"{missing} of {len(tasks)} tasks unfinished")
                continue
            path = folder / f"submission{_sample_label(sample, samples, '.sample-')}.jsonl"
            # the results read one at a time, as the lines are written (`StoredResults`)
            _write_jsonl(path, benchmark.submission(tasks, StoredResults(results, [final[task.id] for task in tasks])))
            written.append(path)
    return written, notes


def write_merged_outputs(results: RunResults) -> tuple[list[Path], list[str]]:
    """`write_outputs` for a sharded run read as one (`load_run` of its folder): no shard holds a whole submission,
    so they are written from the merged stores into the run directory, with the tasks the shards stored.

    Returns:
        As `write_outputs`; nothing for a run without a session yet.
    """
    splits = sorted({rollout.key.split for rollout in results.rollouts})
    if not results.sessions or len(splits) != 1:
        return [], []
    benchmark = get_benchmark(results.spec.benchmark)
    return write_outputs(results, benchmark, results.tasks(), splits[0], results.spec.samples)


def _sample_label(sample: int, samples: int, prefix: str = " sample ") -> str:
    return f"{prefix}{sample}" if samples > 1 else ""


def _trajectory(results: RunResults, rollout: StoredRollout) -> dict[str, Any]:
    return {
        "task": rollout.key.task, "sample": rollout.key.sample, "status": rollout.status,
        "error_type": rollout.error_type, "error": rollout.error, "answer": rollout.answer,
        "plan": results.plan(rollout),
        "steps": results.steps(rollout.id), "calls": rollout.calls, "cache_hits": rollout.cache_hits,
        "cost_usd": rollout.cost_usd,
    }
