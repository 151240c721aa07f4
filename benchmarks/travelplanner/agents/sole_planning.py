"""Sole-planning mode: the planner gets the query's reference information and plans (docs/fidelity/travelplanner.md §5).

Four official strategies: `direct` and `cot` are one Planner call (§3.8) with `PLANNER_INSTRUCTION` /
`COT_PLANNER_INSTRUCTION`; `react` (`ReactPlanner`) alternates Thought / Action / Observation with two actions,
`CostEnquiry[one-day plan]` (priced by `tools.cost_enquiry`, §3.9) and `Finish[plan]`; `reflexion`
(`ReactReflectPlanner`) adds a reflection call whenever three CostEnquiry errors in a row have terminated the
environment. Quirks are reproduced and marked `# official quirk, docs/fidelity/travelplanner.md §5`.

The CostEnquiry argument is model text. The official code `eval`s it; we read it with `ast.literal_eval` and
never execute it. The two agree on every literal (dicts, strings, numbers, True/False/None, lists). They differ on
non-literals: JSON `null`/`true`/`false` and other bare names make `eval` raise NameError, which the official code
does not catch, so the whole run aborts; calls, arithmetic and comprehensions (`dict(a=1)`, `2*3`) would be
evaluated by `eval` and accepted. We end the rollout on every non-literal, with status `costenquiry_crash`,
instead of running model text; on JSON literals this is what the official run does.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from benchmarks.travelplanner.agents.planner_tool import format_step, halt_reason, run_planner, user_request
from benchmarks.travelplanner.prompts import (
    COT_PLANNER_INSTRUCTION,
    PLANNER_INSTRUCTION,
    REACT_PLANNER_INSTRUCTION,
    REACT_REFLECT_PLANNER_INSTRUCTION,
    REFLECT_INSTRUCTION,
    REFLECTION_HEADER,
)
from benchmarks.travelplanner.tools import cost_enquiry, parse_action
from providers.interface import ChatModel
from sandbox_index import Sandbox

PLANNER_TEMPLATES = {"direct": PLANNER_INSTRUCTION, "cot": COT_PLANNER_INSTRUCTION}

REACT_STOP = ("Action", "Thought", "Observation")
# official quirk, docs/fidelity/travelplanner.md §5: the reflexion stop list has a malformed third entry, so it never
# stops at "Observation".
REFLEXION_STOP = ("Action", "Thought", "Observation,'\n")

NOT_JSON = "The sub plan can not be parsed into json format, please check."
NOT_ONE_DAY = "The sub plan can not be parsed into json format, please check. Only one day plan is supported."
FINISHED = "The plan is finished."
NOT_SUPPORTED = "Action {action_type} is not supported."
COST_ERROR_PREFIX = "Sorry, the cost of your plan is not available"
MAX_COST_RETRIES = 3


@dataclass(frozen=True, slots=True)
class ReactPlannerLimits:
    """Limits and LLM settings of the react and reflexion planners (docs/fidelity/travelplanner.md §5)."""

    max_steps: int = 30
    max_prompt_tokens: int = 14_000
    max_tokens: int = 1024
    temperature: float | None = 0.0


@dataclass(slots=True)
class PlannerRun:
    """One sole-planning run: the answer, the scratchpad and a per-step log."""

    answer: str
    scratchpad: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    halted: str | None = None
    """`max_steps` or `token_limit` when the loop stopped on a limit; None otherwise."""
    crash: str | None = None
    """Why the official code would have aborted the run here (an uncaught CostEnquiry exception)."""


class CostEnquiryCrash(Exception):
    """A CostEnquiry argument on which the official code raises an uncaught exception (the run aborts)."""


async def plan_once(model: ChatModel, strategy: str, text: str, query: str) -> PlannerRun:
    """The `direct` and `cot` strategies: one Planner call (docs/fidelity/travelplanner.md §5).

    Args:
        model: The rollout's model.
        strategy: `direct` or `cot`.
        text: The reference information as the prompt shows it.
        query: The dataset query.
    """
    return PlannerRun(answer=await run_planner(model, PLANNER_TEMPLATES[strategy], text, query))


class ReactPlanner:
    """`react` and, with `reflect=True`, `reflexion` (docs/fidelity/travelplanner.md §5). One instance per rollout."""

    def __init__(self, model: ChatModel, sandbox: Sandbox, *, reflect: bool = False,
                 limits: ReactPlannerLimits | None = None) -> None:
        self.model = model
        self.sandbox = sandbox
        self.reflect = reflect
        self.limits = limits or ReactPlannerLimits()
        self.text = ""
        self.query = ""
        self.scratchpad = ""
        self.answer = ""
        self.step_n = 1
        self.finished = False
        self.steps: list[dict[str, Any]] = []
        self.reflections: list[str] = []
        self.cost_failures = 0
        self.terminated = False

    async def run(self, text: str, query: str) -> PlannerRun:
        """Runs the loop until Finish, a limit, or an argument the official code would crash on.

        Args:
            text: The reference information as the prompt shows it.
            query: The dataset query.
        """
        self.text, self.query = text, query
        halted = None
        while not self.finished:
            halted = self._halted()
            if halted:
                break
            try:
                await self._step()
            except CostEnquiryCrash as crash:
                return PlannerRun(answer="", scratchpad=self.scratchpad, steps=self.steps, crash=str(crash))
            # official quirk, docs/fidelity/travelplanner.md §5: `terminated` stays set until a CostEnquiry succeeds, so
            # every later step (whatever its action) triggers one more reflection.
            if self.reflect and self.terminated and not self.finished:
                await self._reflect()
        return PlannerRun(answer=self.answer, scratchpad=self.scratchpad, steps=self.steps, halted=halted)

    def prompt(self) -> str:
        """The agent prompt, rebuilt for every call."""
        if self.reflect:
            return REACT_REFLECT_PLANNER_INSTRUCTION.format(text=self.text, query=self.query,
                                                            scratchpad=self.scratchpad,
                                                            reflections=format_reflections(self.reflections))
        return REACT_PLANNER_INSTRUCTION.format(text=self.text, query=self.query, scratchpad=self.scratchpad)

    def _halted(self) -> str | None:
        return halt_reason(self.step_n, self.limits.max_steps, self.prompt, self.limits.max_prompt_tokens)

    async def _ask(self, prompt: str) -> str:
        request = user_request(prompt, max_tokens=self.limits.max_tokens,
                               stop=REFLEXION_STOP if self.reflect else REACT_STOP,
                               temperature=self.limits.temperature)
        return format_step((await self.model.complete(request)).text)

    async def _step(self) -> None:
        k = self.step_n
        entry: dict[str, Any] = {"step": k, "thought": "", "action": "", "observation": ""}
        self.steps.append(entry)
        self.scratchpad += f"\nThought {k}:"
        entry["thought"] = await self._ask(self.prompt())
        self.scratchpad += " " + entry["thought"]
        self.scratchpad += f"\nAction {k}:"
        action = await self._ask(self.prompt())
        entry["action"] = action
        self.scratchpad += " " + action
        self.scratchpad += f"\nObservation {k}: "

        action_type, argument = parse_action(action)
        if action_type == "CostEnquiry":
            observation = self._cost_enquiry(argument or "")
        elif action_type == "Finish":
            # official quirk, docs/fidelity/travelplanner.md §5: outputs lost their newlines, so the plan arrives on one
            # line.
            self.finished = True
            self.answer = argument or ""
            observation = FINISHED
        else:
            observation = NOT_SUPPORTED.format(action_type=action_type)  # `None` for an unparsable action
        self.step_n += 1
        self.scratchpad += observation
        entry["observation"] = observation

    def _cost_enquiry(self, argument: str) -> str:
        sub_plan = parse_sub_plan(argument)
        if isinstance(sub_plan, str):
            return sub_plan  # parse errors never count as environment errors (docs/fidelity/travelplanner.md §5)
        try:
            result = cost_enquiry(self.sandbox, sub_plan, reflect=self.reflect)
        except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
            # official quirk, docs/fidelity/travelplanner.md §5: a missing `people_number`, a non-text field or a meal
            # priced with a `people_number` that is no number aborts the official run.
            raise CostEnquiryCrash(f"CostEnquiry failed on the sub plan: {type(exc).__name__}: {exc}") from None
        # The reflexion environment's retry counter (docs/fidelity/travelplanner.md §3.9): errors count, a success
        # resets it.
        if result.startswith(COST_ERROR_PREFIX):
            self.cost_failures += 1
            if self.cost_failures >= MAX_COST_RETRIES:
                self.terminated = True
        else:
            self.cost_failures = 0
            self.terminated = False
        return f"Cost: {result}"

    async def _reflect(self) -> None:
        prompt = REFLECT_INSTRUCTION.format(text=self.text, query=self.query, scratchpad=self.scratchpad)
        reflection = await self._ask(prompt)
        self.reflections.append(reflection)
        self.steps.append({"step": self.step_n - 1, "reflection": reflection})


def parse_sub_plan(argument: str) -> dict[str, Any] | str:
    """Reads a CostEnquiry argument: the dict, or the official observation for an unreadable one.

    Raises:
        CostEnquiryCrash: for non-literal arguments (see the module docstring for how this differs from `eval`).
    """
    try:
        value = ast.literal_eval(argument)
    except SyntaxError:
        return NOT_JSON
    except (ValueError, TypeError, MemoryError, RecursionError) as exc:
        raise CostEnquiryCrash(f"CostEnquiry argument is not a Python literal ({exc})") from None
    if not isinstance(value, dict):
        return NOT_ONE_DAY
    return value


def format_reflections(reflections: list[str]) -> str:
    """The `{reflections}` block of the reflexion prompt: '' before the first reflection (docs/fidelity/travelplanner.md
    §5)."""
    if not reflections:
        return ""
    return REFLECTION_HEADER + "Reflections:\n- " + "\n- ".join(r.strip() for r in reflections)
