"""The plugin interface the engine drives: a benchmark hands out tasks, strategies, tools and an evaluator.

The runner (`runner/`) knows nothing about travel. It loads a `Benchmark` by name (`benchmarks/registry.py`),
asks it for the tasks of a split and for its strategies, and runs every rollout key
`(benchmark, split, task, model, strategy, sample)` by calling the strategy:

    result = await strategy(task, model, tools)

`model` is a `providers.interface.ChatModel` already bound to one rollout: it routes every call through the
gateway (cache, spend cap, rate limits, retries) and fills in the run's model string, sampling parameters and
sample index, so a strategy builds `ChatRequest(model="", messages=..., stop=...)` and never sees a provider,
the cache or a budget (inspect_ai's solvers get `generate` the same way). `tools` is whatever `open_tools`
returned (TravelPlanner: the sandbox), shared by all rollouts of a run, so it must be safe to use concurrently.

Strategies never catch `providers.errors.LLMError`: the runner maps it to a generic status (`provider_error`,
`token_limit`, `budget_exhausted`, ...). Everything a rollout returns is JSON the runner stores and never reads;
statuses other than the generic ones below are opaque strings the benchmark documents in `statuses`.
"""

from __future__ import annotations

import importlib
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast, get_args, overload, runtime_checkable

import click
from pydantic import BaseModel

from benchmarks.reporting import ReportSections, RunView
from benchmarks.tasks import (
    BUDGET_EXHAUSTED,
    CALL_LIMIT,
    CRASHED,
    DELIVERED,
    GENERIC_STATUSES,
    INTERRUPTED,
    PROVIDER_ERROR,
    REPLAY_MISS,
    TOKEN_LIMIT,
    Evaluation,
    RolloutResult,
    Task,
    Verdict,
)
from datahome.fingerprints import fingerprints
from errors import UserError
from providers.interface import ChatModel

__all__ = [  # the contract's own names and the values it is about (`benchmarks.tasks`), exported here too
    "BUDGET_EXHAUSTED",
    "Benchmark",
    "CALL_LIMIT",
    "CRASHED",
    "Commands",
    "DELIVERED",
    "Demo",
    "DemoRun",
    "EachBatch",
    "Evaluation",
    "Evaluator",
    "ExpectedCalls",
    "GENERIC_STATUSES",
    "INTERRUPTED",
    "OfflineAnswers",
    "PROVIDER_ERROR",
    "Part",
    "PlannerCalls",
    "REPLAY_MISS",
    "REQUIRED_ATTRIBUTES",
    "Responder",
    "RolloutResult",
    "Strategy",
    "TOKEN_LIMIT",
    "Task",
    "Verdict",
    "import_target",
]


@runtime_checkable
class Strategy(Protocol):
    """One way of solving a task with an LLM (an agent loop, a prompt, a baseline)."""

    @property
    def name(self) -> str:
        """Unique within its benchmark; part of the rollout key and of the run spec's `strategies` list."""
        ...

    @property
    def description(self) -> str:
        """One line for `tripbench list`: what the strategy does."""
        ...

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        """Solves one task.

        Args:
            task: The task to solve.
            model: The rollout's LLM; every call goes through the run's gateway.
            tools: The object `Benchmark.open_tools` returned, shared by all rollouts.

        Returns:
            The rollout's result. LLM errors propagate to the runner, which records them as a status.
        """
        ...


@runtime_checkable
class Benchmark(Protocol):
    """A benchmark as the runner sees it, every part of the contract in one place. Found by name through
    `benchmarks.registry.get_benchmark`.

    A plugin subclasses this protocol (`class MyBenchmark(Benchmark): ...`) and so inherits the defaults of the
    optional parts (no splits named, `official` mode only, no commands, demo, report sections, offline models, extra
    models or model settings). The required methods are abstract, so the registry refuses a subclass that leaves one
    out, naming it. Its commands, demo, report sections and offline answers are `Part`s: named by import path and
    imported on first use, so a run never loads the report or data code of its benchmark, nor anything of another.
    """

    name: str
    """Registry name, e.g. `travelplanner`; the first element of every rollout key."""
    options_model: type[BaseModel]
    """Pydantic model of the run spec's `[options]` table (data paths, step limits, ...); `extra="forbid"`."""
    statuses: Mapping[str, str]
    """Benchmark-specific terminal statuses -> one-line description (reports list them beside the generic ones)."""
    splits: Sequence[str] = ()
    """The split names it offers (a spec naming another is refused up front); empty: any name `load_tasks` takes."""
    modes: Sequence[str] = ("official",)
    """Its evaluator modes, the first the default."""
    commands: Commands | None = None
    """Its own command-line commands and data home."""
    demo: Demo | None = None
    """Its share of `tripbench demo`."""
    report: ReportSections | None = None
    """Its own report sections (`benchmarks.reporting.ReportSections`); without them a report shows the generic
    status table for its runs."""
    offline: OfflineAnswers | None = None
    """Its answers for the offline models `offline:oracle` and `offline:noisy` (`benchmarks.offline`)."""
    plan_files: PlanFiles | None = None
    """Reading answers made outside tripbench into rollouts (`tripbench import-plans`)."""

    @abstractmethod
    def load_tasks(self, split: str | Path, options: BaseModel) -> Sequence[Task]:
        """Returns the tasks of a split name (`train`, `validation`, `test`) or of a query file (a `Path`).

        Raises:
            errors.DataError: the split or file is missing or malformed (names the file and line).
        """
        ...

    @abstractmethod
    def strategies(self, options: BaseModel) -> Sequence[Strategy]:
        """Returns every strategy the benchmark offers, configured by the run's options."""
        ...

    @abstractmethod
    def open_tools(self, options: BaseModel) -> Any:
        """Returns the tools all strategies share for a run; the runner calls its `close()` at the end if any."""
        ...

    @abstractmethod
    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str,
                 options: BaseModel) -> list[Evaluation | None]:
        """Scores results (pure, no LLM call); item i scores `results[i]` on `tasks[i]`.

        Args:
            tasks: The tasks, aligned with `results`.
            results: Stored rollout results, possibly re-loaded from a finished run.
            mode: Evaluator mode, e.g. `official` or `strict`.
            options: The run's options (where the sandbox is, which distances to use, ...): all the evaluation reads
                besides its arguments, never what an earlier call left.

        Returns:
            One evaluation per result; None where the task hides its constraints (a test split).
        """
        ...

    def open_evaluator(self, options: BaseModel) -> Evaluator:
        """An evaluator that scores batch after batch of results with what it opens once (a sandbox, distances): the
        runner scores a run's stored rollouts a batch at a time through one, and closes it. Default: `evaluate` for
        each batch (for a benchmark whose scoring opens nothing costly)."""
        return EachBatch(self, options)

    @abstractmethod
    def submission(self, tasks: Sequence[Task], results: Sequence[RolloutResult]) -> Iterable[Mapping[str, Any]]:
        """Formats results as the benchmark's official submission file, one JSON object per line, in task order."""
        ...

    def extra_models(self, options: BaseModel) -> Sequence[str]:
        """Models its strategies call besides the one under test (a plan parser's), which the run's gateway must
        serve too (resolved, priced and cached like the spec's models)."""
        return ()

    def model_settings(self, options: BaseModel, model: str) -> Mapping[str, str]:
        """Strategy name -> what it sends and stops at for `model`, where its strategies choose settings by model as
        official code does (shown by `tripbench run --dry-run`)."""
        return {}

    def identity(self, options: BaseModel) -> Mapping[str, Any]:
        """Settings of `options` that change results, as option values (JSON): the runner writes them into the run's
        stored spec (`options`) whether the spec gave them or not, so resuming under other ones, or a run made
        before a setting existed, is refused (`RunSpec.result_fields`). Default: none."""
        return {}

    def data_fingerprints(self, split: str | Path, options: BaseModel) -> Mapping[str, str]:
        """What a run of `split` reads besides its spec, by a name the same on every machine -> the sha256 of its
        bytes (`datahome.fingerprints`), and `index schema version` -> the version of any index it reads: part of
        the run's identity (data changed under a run is refused) and of its provenance. Default: the query file."""
        return fingerprints([split]) if isinstance(split, Path) else {}


class Evaluator(Protocol):
    """A benchmark's scoring, opened once for many batches of results (`Benchmark.open_evaluator`); close it after."""

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str) -> list[Evaluation | None]:
        """As `Benchmark.evaluate`, with the options the evaluator was opened with."""
        ...

    def close(self) -> None:
        """Releases what it opened; the evaluator is not used after."""
        ...


@dataclass(frozen=True, slots=True)
class EachBatch:
    """The default `Evaluator`: the benchmark's `evaluate` for each batch, nothing kept between them."""

    benchmark: Benchmark
    options: BaseModel

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str) -> list[Evaluation | None]:
        return self.benchmark.evaluate(tasks, results, mode, self.options)

    def close(self) -> None:
        pass


@runtime_checkable
class ExpectedCalls(Protocol):
    """An optional part of a `Strategy`: the LLM calls one rollout makes, which `tripbench run --dry-run` assumes
    until the run has finished rollouts of the strategy to take a mean of (a spec's `expected_calls` wins over both)."""

    @property
    def expected_calls(self) -> float:
        """Calls per rollout: exact for single-call strategies, a documented typical count for agents."""
        ...


@runtime_checkable
class PlannerCalls(Protocol):
    """An optional part of a `Strategy`: how many of a rollout's calls are the Planner's (made under
    `providers.stages.stage(PLANNER)`), which `tripbench run --dry-run` assumes a `batch = "planner"` model sends
    through its batch API (a strategy without it marks none)."""

    @property
    def planner_calls(self) -> float:
        """The Planner's calls per rollout."""
        ...

    @property
    def planner_share(self) -> float | None:
        """The share of a rollout's tokens its Planner calls hold, a documented typical figure (None: their share of
        the rollout's calls)."""
        ...


class Commands(Protocol):
    """An optional part of a `Benchmark`: its own command-line commands and data home.

    `tripbench evaluate|check-submission|tool [--benchmark NAME] ARGS` run the benchmark's command of that name with
    ARGS; `tripbench data fetch|import` its `fetch` / `import` command; `tripbench data info` asks `data_info`.
    """

    def by_name(self) -> Mapping[str, click.Command]:
        """Command name (`evaluate`, `check-submission`, `tool`, `fetch`, `import`) -> its click command."""
        ...

    def holds_data(self, folder: Path) -> bool:
        """Whether `folder` holds this benchmark's data (`tripbench data import FOLDER` picks the benchmark by it)."""
        ...

    def data_info(self, home: Path) -> Mapping[str, Any]:
        """What the data home holds for this benchmark, as JSON values; reads only, creates nothing."""
        ...

    def holds_answers(self, path: Path) -> bool:
        """Whether `path` is a file of answers this benchmark's `evaluate` scores (`tripbench evaluate FILE` without
        --benchmark picks the benchmark by it); reads only its start (`benchmarks.answers_files`)."""
        ...


@dataclass(frozen=True, slots=True)
class ImportedPlan:
    """One answer made outside tripbench, as `tripbench import-plans` stores it: a rollout without LLM calls (its
    result: `ImportedPlans.results`)."""

    task: str
    """The task id it answers."""
    model: str
    strategy: str
    sample: int
    """Which answer of (task, model, strategy) it is, from 0."""


@dataclass(slots=True)
class ImportedPlans:
    """What plan files held, ready to be stored as one run of one split."""

    split: str
    """The split whose tasks the plans answer (a run is one split)."""
    plans: list[ImportedPlan]
    results: Callable[[], Iterator[RolloutResult]]
    """The answers' results, in the order of `plans`, read from the files again at each call, one at a time (a file
    of a gigabyte is never held whole): `DELIVERED` with the plan, or the benchmark's failure status when the source
    recorded a failed answer."""
    skipped: list[str] = field(default_factory=list)
    """Entries that were not imported, each `where: why` (unreadable, an unknown task, another split)."""


class PlanFiles(Protocol):
    """An optional part of a `Benchmark`: answers made elsewhere (another harness, the official code) read as
    rollouts, which `tripbench import-plans` stores as a run that `tripbench report` reports like any other."""

    def read_plans(self, paths: Sequence[Path], options: BaseModel, *, model: str | None, strategy: str | None,
                   split: str | None) -> ImportedPlans:
        """The answers of `paths`, each with its task, model, strategy and sample.

        Args:
            paths: The files, in order (a later answer to the same task, model and strategy is the next sample).
            options: The benchmark's options (where its data is).
            model: The model label for every answer (None: from each file's name, where its format says it).
            strategy: The strategy for every answer (None: likewise).
            split: The split of the run (None: the smallest holding every answer's task).

        Raises:
            UserError: a file that cannot be read at all, or a model or strategy neither given nor named by a file.
        """
        ...


@dataclass(frozen=True, slots=True)
class DemoRun:
    """One run of `tripbench demo`: its spec, written by the benchmark, and what the demo prints of its report."""

    name: str
    """The run's folder under the demo's `runs/` (unique across benchmarks)."""
    spec: Path
    headline: str
    """The name of the report table the demo prints for this benchmark."""


class Demo(Protocol):
    """An optional part of a `Benchmark`: its share of `tripbench demo` (no download, no API key)."""

    def demo_runs(self, out: Path, mock_url: str, *, seed: int) -> Sequence[DemoRun]:
        """Generates a small world under `out/worlds/<benchmark>/` and writes the specs of its runs as
        `out/<run>.toml`, with `cache_dir = "cache"` so every run of the demo shares `out/cache`.

        Args:
            out: The demo's folder.
            mock_url: The OpenAI-compatible base URL of the demo's mock server (the offline models behind HTTP).
            seed: The world's seed.
        """
        ...

    def demo_checks(self, run: RunView) -> list[str]:
        """Lines the demo prints after a run of this benchmark (e.g. the noisy model's mistakes found again)."""
        ...


@dataclass(frozen=True, slots=True)
class Responder:
    """A benchmark's answers for the offline models (`benchmarks.offline`) to the prompts of some tasks."""

    validate: Callable[[str], None]
    """Raises `UserError` for a model name (`noisy?seed=2`) this benchmark's offline models cannot take."""
    reply: Callable[[str, str], str | None]
    """(model name, prompt) -> the reply, or None when the prompt is not this benchmark's."""
    fallback: bool = False
    """Answers any prompt: asked after every other benchmark's."""
    unrecognised: str | None = None
    """A fallback's reply to a prompt it does not recognise: the mock server refuses such a request instead."""
    explain: Callable[[Sequence[Task], Sequence[str], Any], list[str | None]] | None = None
    """(tasks, their strategies, the run's tools: `Benchmark.open_tools`) -> for each, why `offline:oracle` cannot
    pass it, from the benchmark's data (a flight the table lacks, a budget below the cheapest plan), None where it
    should pass: reports and the end of a run say it where the oracle fails (`reports.oracle`)."""
    close: Callable[[], None] | None = None
    """Releases what the answers opened (a sandbox), called when the run that built them ends; a later answer may
    open it again (a mock server answers for several runs)."""


class OfflineAnswers(Protocol):
    """An optional part of a `Benchmark`: its answers for the offline models (`benchmarks.offline`), built from what
    they answer."""

    def responder(self, tasks: Sequence[Task], options: BaseModel | None) -> Responder:
        """The answers to the prompts of `tasks`, loaded with the run's `options`; with no tasks and no options (a mock
        server with no run behind it), to those the benchmark finds in the data home, if any."""
        ...


P = TypeVar("P")


class Part(Generic[P]):
    """An optional part of a `Benchmark`, named by import path (`module`, or `module:attribute`) and imported the
    first time it is asked for; the class's declaration costs no import:

        class MyBenchmark(Benchmark):
            report = Part[ReportSections]("mypkg.report")  # a module whose functions implement the protocol
    """

    def __init__(self, target: str) -> None:
        self.target = target
        self._what = f"part {target!r}"
        self._loaded: P | None = None

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._what = f"{owner.__name__}.{name}"

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Part[P]: ...
    @overload
    def __get__(self, instance: object, owner: type[Any]) -> P: ...
    def __get__(self, instance: object | None, owner: type[Any]) -> Part[P] | P:
        if instance is None:
            return self
        if self._loaded is None:
            loaded = import_target(self.target, self._what)
            # `Part[X](...)` keeps X on the instance: a part lacking what X declares fails here, naming it, not later
            declared = get_args(getattr(self, "__orig_class__", None))
            if declared:
                _check_part(loaded, declared[0], f"{self._what} ({self.target})")
            self._loaded = cast(P, loaded)
        return self._loaded


REQUIRED_ATTRIBUTES = ("name", "options_model", "statuses")
"""The members of `Benchmark` with no default besides its abstract methods (a subclass may set them in `__init__`)."""


def _check_part(loaded: object, declared: Any, what: str) -> None:
    """Raises `UserError` when `loaded` lacks a member of the protocol `declared`, or is no instance of the class."""
    if not isinstance(declared, type):
        return
    expected = f"{declared.__module__}.{declared.__qualname__}"
    if getattr(declared, "_is_protocol", False):
        members = {name for name in (*vars(declared), *getattr(declared, "__annotations__", {}))
                   if not name.startswith("_")}
        if missing := sorted(name for name in members if not hasattr(loaded, name)):
            raise UserError(f"{what} lacks {', '.join(missing)} of {expected}")
    elif not isinstance(loaded, declared):
        raise UserError(f"{what} is a {type(loaded).__name__}, expected a {expected}")


def import_target(target: str, what: str) -> Any:
    """The object at `module:attribute`, or the module itself when `target` names no attribute.

    Raises:
        UserError: the module cannot be imported or lacks the attribute (the message starts with `what`).
    """
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"{what}: cannot import {module_name}: {exc}") from exc
    if not attribute:
        return module
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise UserError(f"{what}: {module_name} has no attribute {attribute!r}") from None

