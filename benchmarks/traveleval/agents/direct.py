"""`direct` and `cot`: one call (system: role, rules, the trip's stations, the plan format; user: the query and
the task), the answer parsed into the plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.base import RolloutResult, Task
from benchmarks.traveleval import prompts
from benchmarks.traveleval.agents.answer import conclude
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import intercity_stations
from providers.interface import ChatModel, ChatRequest, Message


@dataclass(frozen=True, slots=True)
class SinglePromptStrategy:
    """One call; `task` is the instruction that makes it `direct` (the plan only) or `cot` (reasoning first)."""

    name: str
    description: str
    task: str

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        sandbox: Sandbox = tools
        query = task.input
        system = prompts.system_prompt(intercity_stations(sandbox, query["start_city"], query["target_city"]))
        request = ChatRequest(model="", messages=(Message("system", system),
                                                  Message("user", prompts.request_prompt(query, self.task))))
        response = await model.complete(request)
        return conclude(response.text, [{"prompt": self.name}], task.id, response.finish_reason)


DIRECT = SinglePromptStrategy("direct", "the query and the plan format, one call, the plan JSON only",
                              prompts.DIRECT_TASK)
COT = SinglePromptStrategy("cot", "zero-shot chain of thought, then the plan JSON, one call", prompts.COT_TASK)
