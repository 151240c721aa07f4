"""The LLM strategies as the runner sees them: task and model in, `RolloutResult` out.

`two-stage` runs the ReAct agent (docs/fidelity/travelplanner.md §4); `direct`, `cot`, `react` and `reflexion` are the
sole-planning strategies (docs/fidelity/travelplanner.md §5). Each turns its final answer into a structured plan
(`parsing.parse_answer`: the rules parser, or the official extraction prompt sent to the `parser` option's model) and
ends with one terminal status: `delivered` or one of `taxonomy.STATUSES`. LLM errors are not caught: the runner records
them (provider error, spend cap, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.base import DELIVERED, TOKEN_LIMIT, RolloutResult, Task
from benchmarks.travelplanner import taxonomy
from benchmarks.travelplanner.agents.parsing import parse_answer
from benchmarks.travelplanner.agents.planner_tool import PLANNER_TOKEN_LIMIT_ANSWER
from benchmarks.travelplanner.agents.react import ReactAgent, ReactLimits
from benchmarks.travelplanner.agents.sole_planning import ReactPlanner, ReactPlannerLimits, plan_once
from benchmarks.travelplanner.reference import Route, reference_information
from errors import DataError
from providers.interface import ChatModel
from sandbox_index import Sandbox

SOLE_PLANNING = ("direct", "cot", "react", "reflexion")
SOLE_PLANNING_HELP = {
    "direct": "one Planner call",
    "cot": "one call, thinking step by step",
    "react": "ReAct with CostEnquiry, then Finish",
    "reflexion": "react, reflecting on CostEnquiry errors",
}
AGENT_CALLS = {"two-stage": 41.0, "react": 2.0, "reflexion": 2.0}
"""Calls per rollout `--dry-run` assumes for the agents before a run has its own mean: what `offline:oracle` (a
competent agent) makes on the demo world (`tripbench demo`, then `tripbench status RUN_DIR --json`: calls / done);
weaker models take more steps, up to their `max_steps`. The single-call strategies make one call, greedy none."""
PLANNER_SHARE = 0.09
"""The share of a two-stage rollout's tokens its Planner call holds, which `--dry-run` assumes for `batch = "planner"`:
what `offline:oracle` spends on the validation queries (`python perf/batch_hybrid.py`: 9 % of 200 rollouts' tokens);
the tool agent's steps, each resending the instructions and the scratchpad, hold the rest."""
RULES = "rules"
LLM_PREFIX = "llm:"
HALTS = {"max_steps": taxonomy.MAX_STEPS, "token_limit": TOKEN_LIMIT}


@dataclass(frozen=True, slots=True)
class TwoStageStrategy:
    """`two-stage`: the ReAct agent collects information into its notebook, then calls the Planner."""

    limits: ReactLimits = field(default_factory=ReactLimits)
    parser: str = RULES
    """`rules`, or `llm:MODEL` for the official extraction prompt sent to MODEL."""
    name: str = "two-stage"
    description: str = "tool agent (ReAct over the search tools), then the Planner"

    @property
    def expected_calls(self) -> float:
        """`AGENT_CALLS`, plus the extraction call of an `llm:` parser."""
        return AGENT_CALLS[self.name] + (self.parser != RULES)

    @property
    def planner_calls(self) -> float:
        """The Planner tool's one call, after the tool agent's steps (`benchmarks.base.PlannerCalls`)."""
        return 1.0

    @property
    def planner_share(self) -> float:
        """`PLANNER_SHARE`."""
        return PLANNER_SHARE

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        run = await ReactAgent(model, tools, self.limits).run(task.input["query"])
        return await conclude(run.answer, run.steps, halted=run.halted, extractor=extractor(model, self.parser))


@dataclass(frozen=True, slots=True)
class SolePlanningStrategy:
    """`direct`, `cot`, `react` or `reflexion` over the query's reference information (docs/fidelity/travelplanner.md
    §5)."""

    name: str
    limits: ReactPlannerLimits = field(default_factory=ReactPlannerLimits)
    parser: str = RULES

    @property
    def description(self) -> str:
        return "sole planning (no tools): " + SOLE_PLANNING_HELP[self.name]

    @property
    def expected_calls(self) -> float:
        """One call for `direct` and `cot`, `AGENT_CALLS` for the agents; plus the extraction call of an `llm:`
        parser."""
        return AGENT_CALLS.get(self.name, 1.0) + (self.parser != RULES)

    @property
    def planner_calls(self) -> float:
        """`direct` and `cot` are one Planner call; the agents' steps are not the Planner's
        (`benchmarks.base.PlannerCalls`)."""
        return 0.0 if self.name in AGENT_CALLS else 1.0

    @property
    def planner_share(self) -> None:
        """The Planner's share of the calls (all of them, but an `llm:` parser's extraction call)."""
        return None

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        text = reference_text(task, tools)
        query = task.input["query"]
        if self.name in ("direct", "cot"):
            run = await plan_once(model, self.name, text, query)
        else:
            planner = ReactPlanner(model, tools, reflect=self.name == "reflexion", limits=self.limits)
            run = await planner.run(text, query)
        if run.crash:
            return RolloutResult(status=taxonomy.COSTENQUIRY_CRASH, answer=None, steps=run.steps, error=run.crash)
        return await conclude(run.answer, run.steps, halted=run.halted, extractor=extractor(model, self.parser))


def extractor(model: ChatModel, parser: str) -> ChatModel | None:
    """The model the extraction prompt goes to: None for the rules parser; for `llm:MODEL`, MODEL through the
    rollout's gateway (`RolloutModel.using`: cached, rate-limited and priced like the rollout's own calls)."""
    if parser == RULES:
        return None
    using = getattr(model, "using", None)
    return model if using is None else using(parser.removeprefix(LLM_PREFIX))


async def conclude(answer: str, steps: list[dict[str, Any]], *, halted: str | None,
                   extractor: ChatModel | None) -> RolloutResult:
    """The terminal status of a finished agent run, and its structured plan when it delivered one.

    Args:
        answer: The final answer ('' when the agent stopped without one).
        steps: The step log; a two-stage early stop is read from its last state (docs/fidelity/travelplanner.md §10).
        halted: `max_steps` / `token_limit` when the loop stopped on a limit.
        extractor: The model the extraction prompt goes to, or None for the rules parser.
    """
    category, tool = taxonomy.stop_from_steps(steps)
    if category is not None:
        reason = f"{category} ({tool})" if tool else category
        return RolloutResult(status=category, answer=answer or None, steps=steps, error=reason)
    if halted is not None:
        return RolloutResult(status=HALTS[halted], answer=None, steps=steps, error=f"halted: {halted}")
    if answer == PLANNER_TOKEN_LIMIT_ANSWER:
        return RolloutResult(status=taxonomy.PLANNER_TOKEN_LIMIT, answer=answer, steps=steps,
                             error="the Planner prompt exceeded 12,000 tokens")
    if not answer.strip():
        return RolloutResult(status=taxonomy.EMPTY_ANSWER, answer=answer, steps=steps, error="empty answer")
    parsed = await parse_answer(answer, extractor)
    steps = [*steps, {"parse": parsed.method, "error": parsed.error}]
    if parsed.plan is None:
        return RolloutResult(status=taxonomy.PARSE_FAILURE, answer=answer, steps=steps, error=parsed.error)
    return RolloutResult(status=DELIVERED, answer=answer, plan=parsed.plan, steps=steps)


def reference_text(task: Task, sandbox: Sandbox) -> str:
    """The sole-planning `text`: the dataset's reference information as its Python repr (docs/fidelity/travelplanner.md
    §5).

    Where the dataset's reference information is not at hand (the staged validation split), it is rebuilt from
    the query's reference route (`reference_route`, the visited cities) with the sandbox tools; see
    `benchmarks.travelplanner.benchmark` for how that differs from the dataset's.

    Raises:
        DataError: the task has neither.
    """
    given = task.input.get("reference_information")
    if isinstance(given, str):
        return given
    if isinstance(given, list):
        return str(given)  # equals the dataset string (checked on all 45 train queries)
    route = task.input.get("reference_route")
    if not route:
        raise DataError(f"task {task.id}: no reference_information (and no reference route) for sole planning")
    path = Route.every_other_day(task.input["org"], tuple(route), tuple(task.input["date"]))
    return str(reference_information(sandbox, path))
