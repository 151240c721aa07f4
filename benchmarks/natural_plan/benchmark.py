"""Natural Plan as the runner sees it: tasks, the `direct` strategy, scoring, and the official results file."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from benchmarks.base import (
    Benchmark,
    Commands,
    Demo,
    Evaluation,
    OfflineAnswers,
    Part,
    RolloutResult,
    Strategy,
    Task,
    Verdict,
)
from benchmarks.natural_plan import dataset
from benchmarks.natural_plan.agents.direct import DirectStrategy
from benchmarks.natural_plan.evaluation import SCORERS, Scored
from benchmarks.reporting import ReportSections
from datahome import default_home
from datahome.fingerprints import fingerprints
from errors import DataError

MODES = ("official",)
NAME = "natural-plan"


class NaturalPlanOptions(BaseModel):
    """The run spec's `[options]` table for Natural Plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Path | None = None
    """Folder holding the official files (default: `<tripbench home>/natural_plan`, where `data fetch` writes)."""
    shots: Literal[0, 5] = 5
    """The prompt sent: the records' `prompt_5shot` (the paper's setting) or `prompt_0shot`."""


class NaturalPlanBenchmark(Benchmark):
    """The `natural-plan` benchmark: Trip Planning, Meeting Planning and Calendar Scheduling."""

    name = NAME
    splits = dataset.SPLITS
    modes = MODES
    options_model = NaturalPlanOptions
    statuses: Mapping[str, str] = {}
    commands = Part[Commands]("benchmarks.natural_plan.commands")
    """`evaluate`, `fetch`, `import`."""
    demo = Part[Demo]("benchmarks.natural_plan.offline.demo")
    report = Part[ReportSections]("benchmarks.natural_plan.report")
    """Accuracy per task, by complexity, and the error breakdown."""
    offline = Part[OfflineAnswers]("benchmarks.natural_plan.offline.models")

    def load_tasks(self, split: str | Path, options: BaseModel) -> Sequence[Task]:
        """The tasks of a task name (`trip`, `meeting`, `calendar`), `all`, or an official-format records file."""
        opts = _options(options)
        if isinstance(split, Path):
            return dataset.tasks_of(dataset.read_records(split))
        return dataset.load_tasks(opts.data_dir or default_home() / "natural_plan", split)

    def strategies(self, options: BaseModel) -> Sequence[Strategy]:
        """`direct`: the official prompt, one call."""
        return [DirectStrategy(shots=_options(options).shots)]

    def data_fingerprints(self, split: str | Path, options: BaseModel) -> Mapping[str, str]:
        """The records file of each task the split holds."""
        if isinstance(split, Path):
            return fingerprints([split])
        folder = _options(options).data_dir or default_home() / "natural_plan"
        return fingerprints([dataset.find_file(folder, task) for task in (
            dataset.TASKS if split == dataset.ALL else (split,))])

    def open_tools(self, options: BaseModel) -> None:
        """No tools: every task is one prompt."""
        return None

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str,
                 options: BaseModel) -> list[Evaluation | None]:
        """Scores each answer by the official rules of its task (the gold plan is in the task: no option matters)."""
        if mode not in MODES:
            raise DataError(f"unknown Natural Plan evaluation mode {mode!r} (expected official)")
        return [evaluation(score_answer(task.input, result.answer))
                for task, result in zip(tasks, results, strict=True)]

    def submission(self, tasks: Sequence[Task], results: Sequence[RolloutResult]) -> Iterable[Mapping[str, Any]]:
        """One line per task: `{"id", "task", "answer"}` (`tripbench evaluate --benchmark natural-plan` reads it)."""
        for task, result in zip(tasks, results, strict=True):
            yield {"id": task.id, "task": task.input["task"], "answer": result.answer}


def score_answer(record: Mapping[str, Any], answer: str | None) -> Scored:
    """The official verdict on an answer (no answer: unsolved, unparseable)."""
    return SCORERS[record["task"]](record, answer or "")


def evaluation(scored: Scored) -> Evaluation:
    """A verdict as the runner stores it: one `solved` constraint, the reason, and the whole verdict as details."""
    return Evaluation((Verdict("solved", "solved", scored.solved, scored.reason),), details=scored.to_json())


def _options(options: BaseModel) -> NaturalPlanOptions:
    if isinstance(options, NaturalPlanOptions):
        return options
    return NaturalPlanOptions.model_validate(options.model_dump())
