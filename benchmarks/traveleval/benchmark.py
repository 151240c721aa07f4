"""TravelEval as the runner sees it: the query splits, four strategies over the sandbox, the six-dimension evaluator,
and the plans file.

Tasks come from a split of the official query files (`dataset.SPLITS`) or from a query file of either official
format; a task's id is the query's uid and its input the query object (`dataset`). Strategies get the sandbox
(`open_tools`) and answer with a `FinalTravelPlan` (`plan.py`); `evaluate` scores each delivered plan with the
official metrics (`evaluation.evaluate_plan`): the whole result is the evaluation's details, and each binary metric
of the constraint dimension is a verdict. Prompts are tripbench's own (`prompts.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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
from benchmarks.reporting import ReportSections
from benchmarks.traveleval import dataset, paths
from benchmarks.traveleval.agents.direct import COT, DIRECT
from benchmarks.traveleval.agents.react import ReactLimits, react, reflexion
from benchmarks.traveleval.agents.statuses import STATUSES
from benchmarks.traveleval.evaluation import CONSTRAINT_METRICS, MODES, open_scorer
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from errors import DataError

NAME = "traveleval"
CONSTRAINT = "constraint"
"""The metric group whose metrics are binary: each is a verdict (1 passed, 0 failed)."""


class TravelEvalOptions(BaseModel):
    """The run spec's `[options]` table for TravelEval."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Path | None = None
    """Folder in the official layout, `data/queries/` and `database/` (default: `<tripbench home>/traveleval`, where
    `data fetch` writes); the sandbox index is built there when missing or older than the database."""
    distance: Literal["amap", "offline", "auto"] = "auto"
    """Distances for the spatial and transfer metrics: the Gaode (AMap) web API (key from `AMAP_API_KEY`), the
    sandbox's coordinates, or `auto`: amap when a key is set, else offline."""
    max_steps: int = Field(default=30, ge=1)
    """ReAct steps (model calls) per attempt."""
    max_retries: int = Field(default=3, ge=1)
    """Failed tool calls of one kind since the last successful one that end a ReAct attempt."""
    same_action_limit: int = Field(default=3, ge=2)
    """Identical tool calls in a row that end a ReAct attempt."""
    max_reflections: int = Field(default=3, ge=0)
    """reflexion: new attempts after failed ones, each after a reflection."""
    standardize_names: bool = False
    """Rename a plan's places to the database's spelling before scoring, as the official pipeline's POI cleaning does
    before its evaluator (`run.py`); off: plans are scored as the model wrote them (the evaluator alone)."""


class TravelEvalBenchmark(Benchmark):
    """The `traveleval` benchmark (onlycwy11/TravelEval): six-dimension quality of plans for ten Chinese cities."""

    name = NAME
    splits = dataset.SPLITS
    modes = MODES
    """`official` (the official numbers, quirks included) and `corrected` (`evaluation.modes`)."""
    options_model = TravelEvalOptions
    statuses: Mapping[str, str] = STATUSES
    commands = Part[Commands]("benchmarks.traveleval.commands")
    """`evaluate`, `tool`, `fetch`, `import`."""
    demo = Part[Demo]("benchmarks.traveleval.offline.demo")
    report = Part[ReportSections]("benchmarks.traveleval.report")
    """The paper's views: six dimensions by model and strategy, tier, progressive step; radar charts; budget
    satisfaction and cost composition."""
    offline = Part[OfflineAnswers]("benchmarks.traveleval.offline.models")

    def load_tasks(self, split: str | Path, options: BaseModel) -> Sequence[Task]:
        """The tasks of a split (`easy`, `medium`, `hard`, `all`, `progressive`) or of an official query file.

        Raises:
            DataError: unknown split, missing or malformed query file.
        """
        if isinstance(split, Path):
            return dataset.read_queries(split)
        return dataset.load_tasks(_data_dir(_options(options)), split)

    def strategies(self, options: BaseModel) -> Sequence[Strategy]:
        """`direct`, `cot`, `react`, `reflexion`."""
        opts = _options(options)
        limits = ReactLimits(max_steps=opts.max_steps, max_retries=opts.max_retries,
                             same_action_limit=opts.same_action_limit)
        return [DIRECT, COT, react(limits), reflexion(limits, opts.max_reflections)]

    def open_tools(self, options: BaseModel) -> Sandbox:
        """The sandbox every rollout of the run shares (built first if missing or stale; safe across threads)."""
        return Sandbox.open(ensure_index(_data_dir(_options(options))))

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str,
                 options: BaseModel) -> list[Evaluation | None]:
        """Scores every result with the six metric groups over the options' sandbox and distances (pure: no LLM
        call).

        A delivered plan gets the evaluator's result as details and one verdict per constraint metric; a rollout
        without a plan gets every constraint verdict failed, and details saying why, so rates count it.
        """
        if mode not in MODES:
            raise DataError(f"unknown TravelEval evaluation mode {mode!r} (expected one of {', '.join(MODES)})")
        opts = _options(options)
        with open_scorer(_data_dir(opts), distance=opts.distance, standardize_names=opts.standardize_names) as scorer:
            return [evaluation(scorer.score(result.plan, task.input, mode) if result.plan is not None else
                               {"query_uid": task.id, "error": f"no plan ({result.status}: {result.error})"},
                               CONSTRAINT_METRICS)
                    for task, result in zip(tasks, results, strict=True)]

    def submission(self, tasks: Sequence[Task], results: Sequence[RolloutResult]) -> Iterable[Mapping[str, Any]]:
        """The delivered plans, one `FinalTravelPlan` per line in task order (what `tripbench evaluate --benchmark
        traveleval` reads); a rollout without a plan has no line (its status is in the run's results)."""
        return (result.plan for result in results if result.plan is not None)


def evaluation(details: Mapping[str, Any], constraint_metrics: Sequence[str]) -> Evaluation:
    """An evaluator result as the runner stores it: the result itself as details, and a verdict per binary metric of
    the constraint dimension (all failed, with the reason, when the plan could not be scored)."""
    error = details.get("error")
    if error is not None:
        verdicts = tuple(Verdict(CONSTRAINT, key, False, str(error)) for key in constraint_metrics)
    else:
        verdicts = tuple(Verdict(CONSTRAINT, key, None if value is None else value == 1)
                         for key, value in details["metrics"][CONSTRAINT].items())
    return Evaluation(verdicts, details=dict(details))


def _options(options: BaseModel) -> TravelEvalOptions:
    if isinstance(options, TravelEvalOptions):
        return options
    return TravelEvalOptions.model_validate(options.model_dump())


def data_dir_of(options: BaseModel) -> Path:
    """The data folder a run's options name (default: the data home's)."""
    return _data_dir(_options(options))


def _data_dir(options: TravelEvalOptions) -> Path:
    return options.data_dir or paths.data_dir()
