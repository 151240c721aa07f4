"""`react-tools` and `reflexion-tools`, tool agents beyond the paper: a Thought / Action / Observation loop over the
sandbox tools (`tools.py`) that ends with the `finish` action and the plan (the format is in `prompts.py`).

Every step re-sends one user message with the query, the tools, the plan format and the scratchpad of earlier steps,
and stops the model before it writes an observation itself. An attempt ends with the plan (parsed as `direct`'s),
or on a limit: `max_steps` steps, `max_retries` failed calls of one kind (invalid actions, bad arguments) since the
last successful call, or the same call `same_action_limit` times in a row (not executed the last time).

`reflexion-tools` is the same loop with up to `max_reflections` more attempts: after an attempt that failed (any status
but `delivered`, or a plan that contradicts the query on its face, `reflexion.plan_problems`), the model is asked
to reflect on it, and the next attempt's prompt lists every reflection so far. The rollout keeps the last attempt's
outcome and every attempt's steps.

The paper's `react` and `reflexion` (`paper.py`) differ: one call in which the model imagines its own observations,
then always one critique call that writes the plan again. Here observations come from the sandbox, and a reflection
follows only a failed attempt. These agents send the provider's sampling defaults (a spec's `[sampling]` applies).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchmarks.base import RolloutResult, Task
from benchmarks.traveleval import prompts
from benchmarks.traveleval.agents import statuses
from benchmarks.traveleval.agents.answer import conclude
from benchmarks.traveleval.agents.reflexion import failure_of, reflect
from benchmarks.traveleval.plan import Parsing
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import (
    ARGUMENT_ERROR,
    INVALID_ACTION,
    TOOLS_TEXT,
    ToolError,
    intercity_stations,
    run_tool,
)
from providers.interface import ChatModel, ChatRequest, Message

DEAD_LOOPS = {INVALID_ACTION: statuses.INVALID_ACTION_DEAD_LOOP, ARGUMENT_ERROR: statuses.ARGUMENT_ERROR_DEAD_LOOP}


@dataclass(frozen=True, slots=True)
class ReactLimits:
    max_steps: int = 30
    """Steps (model calls) per attempt."""
    max_retries: int = 3
    """Failed calls of one kind since the last successful one that end the attempt."""
    same_action_limit: int = 3
    """Identical tool calls in a row that end the attempt."""


@dataclass(frozen=True, slots=True)
class Attempt:
    result: RolloutResult
    scratchpad: str
    """The attempt's steps as the model saw them (a reflection reads it)."""


async def react_attempt(model: ChatModel, sandbox: Sandbox, task: Task, limits: ReactLimits,
                        reflections: tuple[str, ...] = (), number: int = 1, parsing: Parsing = "official") -> Attempt:
    """One ReAct attempt at a task.

    Args:
        model: The rollout's model.
        sandbox: The run's sandbox.
        task: The task; its input is the query object.
        limits: When the attempt gives up.
        reflections: Lessons from earlier attempts, shown in the prompt.
        number: The attempt's number, recorded in each step.
        parsing: How the plan after `finish` is read (`plan.read_plan`).
    """
    query = task.input
    stations = intercity_stations(sandbox, query["start_city"], query["target_city"])
    scratchpad = ""
    steps: list[dict[str, Any]] = []
    failures: Counter[str] = Counter()
    last_call, repeats = "", 0

    def end(status: str, error: str) -> Attempt:
        return Attempt(RolloutResult(status, steps=steps, error=error), scratchpad)

    for n in range(1, limits.max_steps + 1):
        prompt = prompts.react_prompt(query, TOOLS_TEXT, stations, scratchpad, reflections)
        request = ChatRequest(model="", messages=(Message("system", prompts.PLANNER_ROLE), Message("user", prompt)),
                              stop=(prompts.OBSERVATION_STOP,))
        response = await model.complete(request)
        reply = response.text
        entry: dict[str, Any] = {"attempt": number, "step": n}
        steps.append(entry)
        error: ToolError | None
        try:
            action = prompts.parse_action(reply)
        except prompts.ActionError as exc:
            entry["reply"] = reply
            observation, error = str(exc), INVALID_ACTION
            last_call, repeats = "", 0  # "in a row" means with nothing else between
        else:
            entry.update(thought=action.thought, action=action.name, arguments=action.arguments)
            if action.name == prompts.FINISH:
                scratchpad += prompts.format_step(n, reply, None)
                concluded = await asyncio.to_thread(conclude, action.answer, steps, task.id, response.finish_reason,
                                                    parsing)  # off the loop, as `paper.py` reads its plans
                return Attempt(concluded, scratchpad)
            call = action.name + json.dumps(action.arguments, sort_keys=True, ensure_ascii=False)
            repeats = repeats + 1 if call == last_call else 1
            last_call = call
            if repeats >= limits.same_action_limit:
                scratchpad += prompts.format_step(n, reply, None)
                return end(statuses.SAME_ACTION_DEAD_LOOP, f"{action.name} with the same arguments {repeats} times "
                                                           "in a row")
            outcome = run_tool(sandbox, action.name, action.arguments)
            observation, error = outcome.observation, outcome.error
        entry.update(observation=observation, error=error)
        scratchpad += prompts.format_step(n, reply, observation)
        if error is None:
            failures.clear()
            continue
        failures[error] += 1
        if failures[error] >= limits.max_retries:
            return end(DEAD_LOOPS[error], f"{failures[error]} {error.replace('_', ' ')}s since the last successful "
                                          f"call; the last: {observation}")
    return end(statuses.MAX_STEPS, f"no finish action in {limits.max_steps} steps")


@dataclass(frozen=True, slots=True)
class ReactStrategy:
    """`react-tools` (`max_reflections` 0) and `reflexion-tools` (a reflection and a new attempt after each failed
    one)."""

    name: str
    description: str
    limits: ReactLimits = ReactLimits()
    max_reflections: int = 0
    parsing: Parsing = "official"

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        reflections: tuple[str, ...] = ()
        steps: list[dict[str, Any]] = []
        for number in range(1, self.max_reflections + 2):
            attempt = await react_attempt(model, tools, task, self.limits, reflections, number, self.parsing)
            steps += attempt.result.steps
            failure = failure_of(attempt.result, task.input)
            if failure is None or number > self.max_reflections:
                break
            reflection = await reflect(model, task.input, attempt.scratchpad, failure)
            steps.append({"attempt": number, "failure": failure, "reflection": reflection})
            reflections = (*reflections, reflection)
        attempt.result.steps = steps
        return attempt.result


def react_tools(limits: ReactLimits, parsing: Parsing = "official") -> ReactStrategy:
    return ReactStrategy("react-tools", "beyond the paper: ReAct over the sandbox tools", limits, parsing=parsing)


def reflexion_tools(limits: ReactLimits, max_reflections: int, parsing: Parsing = "official") -> ReactStrategy:
    return ReactStrategy("reflexion-tools", f"beyond the paper: react-tools; reflects, retries ({max_reflections} "
                         "max)", limits, max_reflections, parsing)
