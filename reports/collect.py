"""What a report reads from run directories: rollouts grouped per (run, model, strategy, split, sample).

Reports never call an LLM or an evaluator: everything comes from the results stores (`runner.store.results.load_run`),
including the verdicts the run's evaluator stored per mode. A group is one submission's worth of rollouts, the
unit of the paper's Table 3 row.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.base import Benchmark, Evaluation, Task
from benchmarks.registry import get_benchmark
from errors import UserError
from runner.store.outputs import output_folders
from runner.store.provenance import provenance
from runner.store.results import CallRecord, RunResults, StoredRollout, load_run
from runner.store.summary import run_state


@dataclass(frozen=True, slots=True)
class RolloutView:
    """One stored rollout with everything a report shows about it."""

    stored: StoredRollout
    task: Task | None
    """The task as the run saw it (None if the store lacks it)."""
    steps: list[dict[str, Any]]
    calls: list[CallRecord]
    evaluated: str | None
    """The report's evaluator mode when the rollout has an evaluation of it stored, else None (not evaluated)."""
    results: RunResults = field(compare=False, repr=False)
    """The run's store, left open to read the plan and the evaluation at each ask (`plan`, `evaluation`): a report
    of a gigabyte of plans holds one at a time; closed when the run's views are dropped."""

    @property
    def status(self) -> str:
        return self.stored.status

    @property
    def answer(self) -> str | None:
        return self.stored.answer

    @property
    def plan(self) -> Any:
        """The delivered plan (JSON values), None when there is none; read from the store at each access."""
        return self.results.plan(self.stored)

    @property
    def evaluation(self) -> Evaluation | None:
        """The stored evaluation in the report's mode, None when not evaluated; read from the store at each access
        (but for the last few read): its decoded details are a few KB a rollout."""
        return None if self.evaluated is None else self.results.evaluation(self.stored.id, self.evaluated)

    @property
    def task_id(self) -> str:
        return self.stored.key.task


def rollout_path(run: int, view: RolloutView) -> str:
    """Where a rollout's page is, relative to `report.html` (`run`: the run's place among the report's)."""
    return f"rollouts/{run}/{view.stored.id}.html"


@dataclass(slots=True)
class Group:
    """The rollouts of one (run, model, strategy, split, sample): one submission file."""

    run: str
    """The run's label: its directory name."""
    run_dir: Path
    benchmark: str
    split: str
    model: str
    strategy: str
    sample: int
    samples: int
    """Samples per task in the run (the sample index is shown only when > 1)."""
    planned: int
    """Tasks the run saw (one split or query file per run): what the rates divide by."""
    outputs: Path
    """The folder the run writes this group's files to (`runner.store.outputs`)."""
    rollouts: list[RolloutView] = field(default_factory=list)

    @property
    def label(self) -> str:
        """`model / strategy`, with the sample when the run drew several."""
        sample = f" #{self.sample}" if self.samples > 1 else ""
        return f"{self.model} / {self.strategy}{sample}"

    def cells(self, with_run: bool) -> tuple[str, ...]:
        """The values of `reports.table.group_columns`: run (when several are reported), model, strategy."""
        return ((self.run,) if with_run else ()) + (self.model, self.strategy)

    @property
    def submission(self) -> Path:
        """Where the run wrote this group's official submission file."""
        name = "submission.jsonl" if self.samples == 1 else f"submission.sample-{self.sample}.jsonl"
        return self.outputs / name


@dataclass(slots=True)
class RunData:
    """One run directory, read for a report."""

    label: str
    run_dir: Path
    tasks: list[Task]
    """The tasks the run saw, in split order."""
    groups: list[Group]
    state: str
    """The latest session's state: `running`, `completed`, `interrupted`, `budget`, `failed` or `killed`."""
    spent_usd: float
    """Money the run spent over all its sessions (re-run rollouts included)."""
    mode: str
    """Evaluator mode of the verdicts read."""
    evaluated: bool
    """Whether any verdict of `mode` was stored (False: pass-rate tables are left out, with a note)."""
    spec_modes: tuple[str, ...] = ()
    """The evaluator modes the run's spec asks for."""
    planned: int = 0
    """Rollouts the latest session planned (finished ones included)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The benchmark options of the run's spec (`[options]`)."""
    benchmark: str = ""
    """The spec's `benchmark`: a registry name or a `module:attribute` path (what `get_benchmark` takes)."""
    sampling: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Model label -> the sampling settings its spec sets (`[sampling]` under the model's own); unset ones are the
    benchmark's official values."""
    models: dict[str, str] = field(default_factory=dict)
    """Each model's label -> its model string (`offline:oracle`, `openai:gpt-4o-mini`, ...)."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """What made its numbers (`runner.store.provenance`): versions, data digests, request settings, sessions."""

    @property
    def finished(self) -> int:
        return sum(len(g.rollouts) for g in self.groups)

    @property
    def partial(self) -> bool:
        """The run is still going, or stopped before every planned rollout finished: its figures cover the finished
        rollouts only."""
        return self.state == "running" or self.finished < self.planned


def collect_run(run_dir: str | os.PathLike[str], mode: str = "official", *, trajectories: bool = True) -> RunData:
    """Reads a run directory into groups of rollouts, in the run's model order, then strategy, split, sample.

    Args:
        run_dir: The run directory (a `str` from a notebook works as well as a `Path`).
        mode: Evaluator mode whose stored verdicts are read.
        trajectories: Read each rollout's steps and calls; False leaves them empty (a summary that needs the
            rollouts' rows and verdicts only, read in a fraction of the time).

    Raises:
        UserError: not a run directory, or a run with no finished rollout yet.
    """
    run_dir = Path(run_dir)
    results = load_run(run_dir, plans=False)
    try:
        return _collect(run_dir, results, mode, trajectories)
    except BaseException:
        results.close()
        raise


def _collect(run_dir: Path, results: RunResults, mode: str, trajectories: bool) -> RunData:
    """`collect_run` of an open store."""
    if not results.rollouts:
        raise UserError(f"{run_dir}: no finished rollout yet; nothing to report")
    task_list = results.tasks()
    tasks = {task.id: task for task in task_list}
    positions = {task_id: n for n, task_id in enumerate(tasks)}
    evaluated = results.evaluated(mode)
    calls: dict[int, list[CallRecord]] = {}
    for stored in results.calls() if trajectories else ():
        calls.setdefault(stored.rollout_id, []).append(stored.call)
    steps = results.all_steps() if trajectories else {}
    spec = results.spec
    samples = spec.samples
    folders = output_folders(results)
    # N per group: its own planned tasks (a run extended by another spec plans each group as its spec did)
    latest = {(model.label, strategy) for model in spec.models for strategy in spec.strategies}
    drawn: dict[tuple[str, str], int] = {}  # samples per task of each (model, strategy)
    for rollout in results.rollouts:
        pair = (rollout.key.model, rollout.key.strategy)
        drawn[pair] = max(drawn.get(pair, samples if pair in latest else 1), rollout.key.sample + 1)
    planned_tasks = {pair: n // drawn[pair] for pair in drawn
                     if (n := results.planned.get(pair[0], {}).get(pair[1]))}
    groups: dict[tuple[str, str, str, str, int], Group] = {}
    for rollout in results.rollouts:
        key = rollout.key
        group_key = (key.benchmark, key.split, key.model, key.strategy, key.sample)
        group = groups.get(group_key)
        if group is None:
            group = groups[group_key] = Group(run_dir.name, run_dir, key.benchmark, key.split, key.model,
                                              key.strategy, key.sample, samples,
                                              planned_tasks.get((key.model, key.strategy), len(tasks)),
                                              folders[key.model, key.strategy])
        group.rollouts.append(RolloutView(rollout, tasks.get(key.task),
                                          steps.get(rollout.id, []),
                                          calls.get(rollout.id, []), mode if rollout.id in evaluated else None,
                                          results))
    model_order = spec.labels
    for group in groups.values():
        group.rollouts.sort(key=lambda view: positions.get(view.stored.key.task, len(positions)))
    ordered = sorted(groups.values(), key=lambda g: (_index(model_order, g.model), g.model, g.strategy,
                                                     g.split, g.sample))
    state = run_state(results) or "running"
    planned = sum(n for strategies in results.planned.values() for n in strategies.values())
    return RunData(run_dir.name, run_dir, task_list, ordered, state, results.spent_usd, mode, bool(evaluated),
                   spec.evaluate, planned, dict(spec.options), spec.benchmark,
                   {model.label: dict(model.sampling) for model in spec.models},
                   {model.label: model.model for model in spec.models}, provenance(results))


def collect_runs(run_dirs: Sequence[str | os.PathLike[str]], mode: str = "official") -> list[RunData]:
    """`collect_run` for each directory; labels made unique when two runs share a directory name."""
    runs = [collect_run(run_dir, mode) for run_dir in run_dirs]
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label} ({seen[run.label]})"
            for group in run.groups:
                group.run = run.label
    if not runs:
        raise UserError("no run directory given")
    return runs


@functools.cache
def load_benchmark(reference: str) -> Benchmark:
    """The benchmark a run's spec names (`get_benchmark`), loaded once however many sections and rollouts ask."""
    return get_benchmark(reference)


def benchmarks_of(runs: Sequence[RunData]) -> dict[str, str]:
    """The benchmarks of the runs' groups, in order of first appearance: name -> what `get_benchmark` takes."""
    return {group.benchmark: run.benchmark or group.benchmark for run in runs for group in run.groups}


def _index(order: list[Any], value: str) -> int:
    return order.index(value) if value in order else len(order)
