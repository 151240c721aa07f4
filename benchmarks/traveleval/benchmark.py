"""TravelEval as the runner sees it: the query splits, the paper's four strategies and two tool agents, the
six-dimension evaluator, and the plans file.

Tasks come from a split of the official query files (`dataset.SPLITS`) or from a query file of either official
format; a task's id is the query's uid and its input the query object (`dataset`). The paper's strategies
(`agents.paper`) follow the official protocol: what the model sees, the calls, sampling and answer parsing; the tool
agents (`agents.react`) get the sandbox (`open_tools`). All answer with a `FinalTravelPlan` (`plan.py`); `evaluate`
scores each delivered plan with the official metrics (`evaluation.evaluate_plan`): the whole result is the
evaluation's details, and each binary metric of the constraint dimension is a verdict. Prompts are tripbench's own
(`prompts.py`).

The settings that change what a model is sent or how its answer is read (`PROTOCOL`, `language`, `parsing`,
`sampling`) are
written into the run's stored spec (`identity`), so a run is never resumed under other ones, a run made before the
paper's protocol included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.base import (
    Benchmark,
    Commands,
    Demo,
    Evaluation,
    OfflineAnswers,
    Part,
    PlanFiles,
    RolloutResult,
    Strategy,
    Task,
    Verdict,
)
from benchmarks.reporting import ReportSections
from benchmarks.traveleval import dataset, paths
from benchmarks.traveleval.agents.paper import paper_strategies
from benchmarks.traveleval.agents.react import ReactLimits, react_tools, reflexion_tools
from benchmarks.traveleval.agents.rules import rule_strategies
from benchmarks.traveleval.agents.sampling import SamplingSource, official_sampling
from benchmarks.traveleval.agents.statuses import STATUSES
from benchmarks.traveleval.evaluation import CONSTRAINT_METRICS, MODES, Scorer
from benchmarks.traveleval.plan import Parsing
from benchmarks.traveleval.prompts import Language
from benchmarks.traveleval.sandbox.build import SCHEMA_VERSION, ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from datahome.fingerprints import fingerprints
from errors import DataError

NAME = "traveleval"
CONSTRAINT = "constraint"
"""The metric group whose metrics are binary: each is a verdict (1 passed, 0 failed)."""
PROTOCOL: Final = "paper-2"
"""The revision of what TravelEval's strategies send (prompts, calls): `paper-2`, the paper's protocol with the
official format's guidance and critique form (`paper-1` before). Runs made before it have another or none in their
spec, so they are not resumed with it."""


class TravelEvalOptions(BaseModel):
    """The run spec's `[options]` table for TravelEval."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Path | None = None
    """Folder in the official layout, `data/queries/` and `database/` (default: `<tripbench home>/traveleval`, where
    `data fetch` writes); the sandbox index is built there when missing or older than the database."""
    distance: Literal["amap", "offline", "auto"] = "auto"
    """Distances for the spatial and transfer metrics: the Gaode (AMap) web API (key from `AMAP_API_KEY`), the
    sandbox's coordinates, or `auto`: amap when a key is set, else offline."""
    parsing: Parsing = "official"
    """How a plan is read out of an answer: `official`, as the official pipeline (the first ```json block, else the
    whole text; one retry with single quotes made double; `query_uid` required), or `lenient` (any fenced block, else
    the largest JSON object in the text; a missing `query_uid` filled in), which fails less often than the paper."""
    sampling: SamplingSource = "official"
    """Sampling of the paper's strategies: `official` (temperature 1.3, 1.0 for Claude models, none for qwen3 models;
    max_tokens 8192) or `provider` (none sent: the provider's defaults). A spec's `[sampling]` or `models[]` values
    win over both."""
    language: Language = "zh"
    """The language of the paper strategies' instructions: `zh`, as the official prompts (the default), or `en`;
    both tripbench's own wording of the same content. The tool agents' are in English."""
    protocol: Literal["paper-2"] = PROTOCOL
    """What the strategies send (`PROTOCOL`); tripbench writes it into the run's spec, a spec need not."""
    max_steps: int = Field(default=30, ge=1)
    """react-tools: steps (model calls) per attempt."""
    max_retries: int = Field(default=3, ge=1)
    """react-tools: failed tool calls of one kind since the last successful one that end an attempt."""
    same_action_limit: int = Field(default=3, ge=2)
    """react-tools: identical tool calls in a row that end an attempt."""
    max_reflections: int = Field(default=3, ge=0)
    """reflexion-tools: new attempts after failed ones, each after a reflection."""
    rule_seed: int = 0
    """rule-based, rule-based-strict: seed of the planners' random choices (with the query uid)."""
    standardize_names: bool = True
    """Rename a plan's places to the database's spelling before scoring, as the official pipeline always does before
    its evaluator (`run.py`: its POI matcher, min score 60), in every mode; false: plans are scored as the model wrote
    them (the official evaluator alone). Each evaluation says which (`names`)."""


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
    plan_files = Part[PlanFiles]("benchmarks.traveleval.plan_files")
    """JSONL and the official `plans_<model>_<strategy>.json` arrays, for `tripbench import-plans`."""

    def load_tasks(self, split: str | Path, options: BaseModel) -> Sequence[Task]:
        """The tasks of a split (`easy`, `medium`, `hard`, `all`, `progressive`) or of an official query file.

        Raises:
            DataError: unknown split, missing or malformed query file.
        """
        if isinstance(split, Path):
            return dataset.read_queries(split)
        return dataset.load_tasks(_data_dir(_options(options)), split)

    def strategies(self, options: BaseModel) -> Sequence[Strategy]:
        """The paper's `direct`, `cot`, `react`, `reflexion`; beyond it, `react-tools` and `reflexion-tools`; the
        official repository's rule-based planners `rule-based` and `rule-based-strict` (no model call)."""
        opts = _options(options)
        limits = ReactLimits(max_steps=opts.max_steps, max_retries=opts.max_retries,
                             same_action_limit=opts.same_action_limit)
        return [*paper_strategies(opts.parsing, opts.sampling, opts.language), react_tools(limits, opts.parsing),
                reflexion_tools(limits, opts.max_reflections, opts.parsing), *rule_strategies(opts.rule_seed)]

    def identity(self, options: BaseModel) -> dict[str, str]:
        """The protocol, language, parsing and sampling: stored with the run's spec, compared on resume."""
        opts = _options(options)
        return {"protocol": opts.protocol, "language": opts.language, "parsing": opts.parsing,
                "sampling": opts.sampling}

    def model_settings(self, options: BaseModel, model: str) -> dict[str, str]:
        """What the paper's strategies send `model` (shown by `tripbench run --dry-run`)."""
        opts = _options(options)
        if opts.sampling == "official":
            temperature, max_tokens = official_sampling(model)
            sent = (f"temperature {'unset' if temperature is None else f'{temperature:.1f}'}, max_tokens "
                    f"{max_tokens} (official by model)")
        else:
            sent = "no temperature or max_tokens (the provider's defaults)"
        return {name: f"{sent}; {opts.parsing} parsing"
                for name in ("direct", "cot", "react", "reflexion")}

    def data_fingerprints(self, split: str | Path, options: BaseModel) -> Mapping[str, str]:
        """The query files of the split and every file of the database the sandbox is built from, with the index's
        schema version."""
        if isinstance(split, Path):
            return fingerprints([split])
        folder = _data_dir(_options(options))
        queries = [paths.queries_dir(folder) / f"{name}.json" for name in dataset.FILES.get(split, (split,))]
        database = sorted(path for path in paths.database_dir(folder).rglob("*") if path.is_file())
        return {**fingerprints([*queries, *database], relative_to=folder),
                "index schema version": str(SCHEMA_VERSION)}

    def open_tools(self, options: BaseModel) -> Sandbox:
        """The sandbox every rollout of the run shares (built first if missing or stale; safe across threads)."""
        return Sandbox.open(ensure_index(_data_dir(_options(options))))

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str,
                 options: BaseModel) -> list[Evaluation | None]:
        """Scores every result with the six metric groups over the options' sandbox and distances (pure: no LLM
        call; `TravelEvalEvaluator`)."""
        with closing(self.open_evaluator(options)) as evaluator:
            return evaluator.evaluate(tasks, results, mode)

    def open_evaluator(self, options: BaseModel) -> TravelEvalEvaluator:
        """One sandbox and one set of distances for every batch it scores, closed with it."""
        return TravelEvalEvaluator(_options(options))

    def submission(self, tasks: Sequence[Task], results: Sequence[RolloutResult]) -> Iterable[Mapping[str, Any]]:
        """The delivered plans, one `FinalTravelPlan` per line in task order (what `tripbench evaluate --benchmark
        traveleval` reads); a rollout without a plan has no line (its status is in the run's results)."""
        return (result.plan for result in results if result.plan is not None)


class TravelEvalEvaluator:
    """TravelEval's scoring of batch after batch of results (`base.Evaluator`): it owns the scorer (sandbox,
    distances, name matcher, and what the sandbox keeps), opened at the first batch and closed by `close`.

    A delivered plan gets the evaluator's result as details and one verdict per constraint metric; a rollout
    without a plan gets every constraint verdict failed, and details saying why, so rates count it.
    """

    def __init__(self, options: TravelEvalOptions) -> None:
        self.options = options
        self.scorer: Scorer | None = None
        """The open scorer: None before the first batch and after `close`."""

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str) -> list[Evaluation | None]:
        """Scores each result on its task in `mode`.

        Raises:
            DataError: an unknown mode.
            UserError: distances that cannot be opened (`amap` without a key), missing data.
        """
        if mode not in MODES:
            raise DataError(f"unknown TravelEval evaluation mode {mode!r} (expected one of {', '.join(MODES)})")
        if self.scorer is None:
            self.scorer = Scorer.open(_data_dir(self.options), distance=self.options.distance,
                                      standardize_names=self.options.standardize_names)
        scorer = self.scorer
        return [evaluation(scorer.score(result.plan, task.input, mode) if result.plan is not None else
                           {"query_uid": task.id, "error": f"no plan ({result.status}: {result.error})"},
                           CONSTRAINT_METRICS)
                for task, result in zip(tasks, results, strict=True)]

    def close(self) -> None:
        """Closes the scorer, if one was opened."""
        scorer, self.scorer = self.scorer, None
        if scorer is not None:
            scorer.close()


def evaluation(details: Mapping[str, Any], constraint_metrics: Sequence[str]) -> Evaluation:
    """An evaluator result as the runner stores it: the result itself as details, and a verdict per binary metric of
    the constraint dimension (all failed, with the reason, when the plan could not be scored or the evaluator failed
    before the constraint dimension)."""
    error = details.get("error")
    if error is not None and CONSTRAINT not in (details.get("metrics") or {}):
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
