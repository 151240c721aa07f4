"""TravelPlanner as the runner sees it: tasks, strategies, the sandbox, evaluation and the submission file.

Tasks come from a split name (`train`, `validation`, `test`: the Hugging Face split files under the data folder,
`<data_dir>/queries/<split>.{jsonl,csv,parquet}`) or from a query file in the same layout. A task's `input` is the
query record in the Hugging Face field layout (native JSON values), so every strategy and the evaluator read it
with `dataset.query_from_record`; its id is the 1-based row number, the official `idx`.

Sole planning reads the record's `reference_information`. The staged validation split has none (the dataset's is
in a file too large to stage); when a split lacks it and `queries/<split>_ref_routes.jsonl` exists, the task gets
the route's cities (`reference_route`) and the strategies rebuild the information with the sandbox tools
(`reference.py`). What differs from the dataset's own: leg dates follow the every-other-day schedule (true for
44 of the 45 train queries), and flight entries come from the staged flights table, which is partial (many
validation legs read `There is no flight from ...` where the full table has flights) and merged from two sources
(other rows, other order). Everything else is the same tool output: rebuilt for the 15 three-day train queries,
every city and ground-transport entry equals the dataset's and 8 of 15 are identical in full
(`test_rebuilt_reference_information_matches_the_dataset_on_3_day_train_queries`). Runs on rebuilt information
are not comparable with published sole-planning numbers; each task says its source (`reference_source`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

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
from benchmarks.travelplanner import taxonomy
from benchmarks.travelplanner.agents.react import ReactLimits
from benchmarks.travelplanner.agents.sole_planning import ReactPlannerLimits
from benchmarks.travelplanner.agents.strategies import (
    LLM_PREFIX,
    RULES,
    SOLE_PLANNING,
    SolePlanningStrategy,
    TwoStageStrategy,
)
from benchmarks.travelplanner.dataset import Query, find_split_file, load_queries, query_from_record
from benchmarks.travelplanner.evaluation import MODES, make_evaluator
from datahome import default_home
from datahome.fingerprints import fingerprints
from errors import DataError
from sandbox_index import Sandbox, open_sandbox, travelplanner_index_path
from sandbox_index.sandbox import index_fingerprints

SPLITS = ("train", "validation", "test")


class TravelPlannerOptions(BaseModel):
    """The run spec's `[options]` table for TravelPlanner."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Path | None = None
    """Folder holding `queries/<split>.*` (default: `<tripbench home>/travelplanner`, where `data fetch` writes)."""
    index: Path | None = None
    """The sandbox index (default: `<tripbench home>/travelplanner.sqlite`)."""
    synthetic_flights: bool = False
    """Let the tools see synthetic flight rows (performance work only; never for scoring)."""
    max_steps: int = 30
    """Two-stage ReAct step limit (official 30)."""
    react_max_prompt_tokens: int | None = None
    """Two-stage prompt limit; unset: the official value by model, 15,000 for gpt-3.5 models, 30,000 otherwise."""
    react_temperature: float | None = None
    """Two-stage ReAct temperature; unset: the official value by model, 1.0 for gpt-3.5 models, 0 otherwise."""
    planner_max_prompt_tokens: int = 12_000
    """Planner prompts above this answer `Max Token Length Exceeded.` without a call (official 12,000)."""
    sole_planning_max_steps: int = 30
    sole_planning_max_prompt_tokens: int = 14_000
    """react / reflexion prompt limit (official 14,000)."""
    parser: str = Field(default=RULES, pattern=r"^(rules|llm:\S+:\S+)$")
    """How final answers become plans: `rules` (the rules parser, no LLM call) or `llm:MODEL`, the official extraction
    prompt sent to MODEL for every answer (the paper: `llm:openai:gpt-4-1106-preview`)."""
    greedy_seed: int = 0


class TravelPlannerBenchmark(Benchmark):
    """The `travelplanner` benchmark (Xie et al., ICML 2024)."""

    name = "travelplanner"
    splits = SPLITS
    modes = tuple(MODES)
    options_model = TravelPlannerOptions
    statuses: Mapping[str, str] = taxonomy.STATUSES
    commands = Part[Commands]("benchmarks.travelplanner.commands")
    """`evaluate`, `check-submission`, `tool`, `fetch`, `import`."""
    demo = Part[Demo]("benchmarks.travelplanner.offline.demo")
    report = Part[ReportSections]("benchmarks.travelplanner.report")
    """Paper Tables 3-5 and Figure 2."""
    offline = Part[OfflineAnswers]("benchmarks.travelplanner.offline.models")
    """The oracle and noisy agents (the demo; a greedy run, which needs some model and no key)."""

    def load_tasks(self, split: str | Path, options: BaseModel) -> Sequence[Task]:
        """Tasks of a split name or a query file; see the module docstring.

        Raises:
            DataError: missing or malformed query file.
        """
        opts = _options(options)
        if isinstance(split, str) and split not in SPLITS:  # a query file comes as a Path (the spec's `queries`)
            raise DataError(f"unknown split {split!r} ({', '.join(SPLITS)}); a query file is `queries = FILE`")
        if isinstance(split, Path):
            path = split
            routes_file = path.with_name(f"{path.stem}_ref_routes.jsonl")
        else:
            data_dir = opts.data_dir or default_home() / "travelplanner"
            path = find_split_file(data_dir, split)
            routes_file = path.parent / f"{split}_ref_routes.jsonl"
        queries = load_queries(path)
        routes = _read_routes(routes_file, len(queries)) if routes_file.is_file() else {}
        return [Task(id=str(n), input=task_record(q, routes.get(n))) for n, q in enumerate(queries, start=1)]

    def strategies(self, options: BaseModel) -> Sequence[Strategy]:
        """`two-stage`, the sole-planning `direct`, `cot`, `react`, `reflexion`, and the `greedy` baseline."""
        from benchmarks.travelplanner.agents.greedy import GreedyStrategy

        opts = _options(options)
        react = ReactLimits(max_steps=opts.max_steps, max_prompt_tokens=opts.react_max_prompt_tokens,
                            planner_max_prompt_tokens=opts.planner_max_prompt_tokens,
                            temperature=opts.react_temperature)
        planner = ReactPlannerLimits(max_steps=opts.sole_planning_max_steps,
                                     max_prompt_tokens=opts.sole_planning_max_prompt_tokens)
        return [TwoStageStrategy(limits=react, parser=opts.parser),
                *(SolePlanningStrategy(name=name, limits=planner, parser=opts.parser) for name in SOLE_PLANNING),
                GreedyStrategy(seed=opts.greedy_seed)]

    def extra_models(self, options: BaseModel) -> list[str]:
        """The `llm:` parser's model."""
        parser = _options(options).parser
        return [parser.removeprefix(LLM_PREFIX)] if parser.startswith(LLM_PREFIX) else []

    def model_settings(self, options: BaseModel, model: str) -> dict[str, str]:
        """The two-stage agent's settings for `model`: the official values by model name (docs/fidelity/travelplanner.md
        §4.2) unless the options set them."""
        opts = _options(options)
        limits = ReactLimits(max_prompt_tokens=opts.react_max_prompt_tokens,
                             temperature=opts.react_temperature).for_model(model)
        source = "" if opts.react_temperature is not None and opts.react_max_prompt_tokens else " (official by model)"
        return {"two-stage": f"temperature {limits.temperature:g}, prompt limit {limits.max_prompt_tokens:,} tokens"
                             f"{source}, max_tokens {limits.max_tokens}, stop at a newline"}

    def data_fingerprints(self, split: str | Path, options: BaseModel) -> dict[str, str]:
        """The query file (and its reference routes), the database tables the index was built from, its schema."""
        opts = _options(options)
        path = split if isinstance(split, Path) else find_split_file(
            opts.data_dir or default_home() / "travelplanner", split)
        routes = (path.with_name(f"{path.stem}_ref_routes.jsonl") if isinstance(split, Path)
                  else path.parent / f"{split}_ref_routes.jsonl")
        read = [path, *([routes] if routes.is_file() else [])]
        return {**fingerprints(read), **index_fingerprints(_index_path(opts))}

    def open_tools(self, options: BaseModel) -> Sandbox:
        """The read-only sandbox every rollout of the run shares (safe across threads)."""
        opts = _options(options)
        return open_sandbox(_index_path(opts), synthetic=opts.synthetic_flights)

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str,
                 options: BaseModel) -> list[Evaluation | None]:
        """Scores each result with the `official` (default) or `strict` evaluator over the options' sandbox; None
        where labels are hidden."""
        if mode not in MODES:
            raise DataError(f"unknown TravelPlanner evaluation mode {mode!r} (expected one of {', '.join(MODES)})")
        queries = [query_from_record(task.input, f"task {task.id}") for task in tasks]
        if not any(query.has_labels for query in queries):
            return [None] * len(queries)
        with open_sandbox(_index_path(_options(options))) as sandbox:
            evaluator = make_evaluator(sandbox, mode)
            return [_evaluation(evaluator.evaluate(query, result.plan)) if query.has_labels else None
                    for query, result in zip(queries, results, strict=True)]

    def submission(self, tasks: Sequence[Task], results: Sequence[RolloutResult]) -> Iterable[Mapping[str, Any]]:
        """The official submission lines (docs/fidelity/travelplanner.md §6.3): `{"idx", "query", "plan"}` in task
        order, null plan if none."""
        for number, (task, result) in enumerate(zip(tasks, results, strict=True), start=1):
            yield {"idx": number, "query": task.input["query"], "plan": result.plan or None}


def task_record(query: Query, route: list[str] | None = None) -> dict[str, Any]:
    """A query as a task input: its Hugging Face record with native JSON values (no annotated plan)."""
    record: dict[str, Any] = {
        "org": query.org, "dest": query.dest, "days": query.days, "visiting_city_number": query.visiting_city_number,
        "date": list(query.date), "people_number": query.people_number,
        "local_constraint": query.local_constraint.as_dict() if query.local_constraint else None,
        "budget": query.budget, "query": query.query, "level": query.level,
    }
    if query.reference_information is not None:
        record["reference_information"] = query.reference_information
        record["reference_source"] = "dataset"
    elif route:
        record["reference_route"] = route
        record["reference_source"] = "rebuilt from the reference route"
    return record


def _options(options: BaseModel) -> TravelPlannerOptions:
    if isinstance(options, TravelPlannerOptions):
        return options
    return TravelPlannerOptions.model_validate(options.model_dump())


def _index_path(options: TravelPlannerOptions) -> Path:
    return options.index or travelplanner_index_path()


def _read_routes(path: Path, count: int) -> dict[int, list[str]]:
    """`{"idx", "annotated_route_cities"}` lines -> idx -> cities (the staged validation reference routes)."""
    routes: dict[int, list[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                idx, cities = int(row["idx"]), row["annotated_route_cities"]
            except (ValueError, KeyError, TypeError) as exc:
                raise DataError(f"{path}:{number}: expected {{'idx', 'annotated_route_cities'}}: {exc}") from None
            if not (1 <= idx <= count) or not isinstance(cities, list) or not all(isinstance(c, str) for c in cities):
                raise DataError(f"{path}:{number}: idx 1..{count} and a list of city names expected")
            routes[idx] = cities
    return routes


def _evaluation(verdict: Any) -> Evaluation:
    verdicts = [Verdict(group, key, result[0], result[1])
                for group, box in (("commonsense", verdict.commonsense), ("hard", verdict.hard)) if box
                for key, result in box.items()]
    details = {"delivered": verdict.delivered, "total_cost": verdict.total_cost, "verdict": verdict.to_json()}
    return Evaluation(verdicts=tuple(verdicts), details=details)
