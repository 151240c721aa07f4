"""The paper's four strategies, as the official pipeline runs them (`agent/main.py`); none uses a tool.

* `direct`, `cot` and `react`: one call each (system: role, the strategy's instructions, the stations, the plan
  format; user: the query's uid and its Chinese request). The official `react` is a single call in which the model
  writes its own Thought / Action / Observation rounds and then the plan.
* `reflexion`: the `react` call, then, when it gave a plan, always one more call that critiques that plan and writes
  it again; the rollout's plan is the second. When the first answer holds no plan there is no second call (the
  official pipeline skips it too), and the rollout is a parse failure that says so. As the official critique, it is
  one lone system message showing the first answer's plan as the model wrote it (`plan.plan_text`), not as the run
  stores it. Its first call is `react`'s very request, so with the cache a run of both makes it once, as the official
  pipeline does (both plans come from one call there).

Every call writes a plan, so each is made as the Planner's (`providers.stages.PLANNER`): a model with
`batch = "planner"` sends them through its batch API, as `batch = true` does (the tool agents of `react.py` write theirs
in the `finish` step of their loop: none of their calls is marked, and they go online).

The instructions are in Chinese, as the official ones, unless the options say `language = "en"` (`prompts.PAPER_TEXTS`).
Every call sends the official sampling for the model unless the options say `sampling = "provider"` (`sampling.py`);
the answer is read with the options' parsing (`plan.read_plan`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from benchmarks.base import DELIVERED, RolloutResult, Task
from benchmarks.traveleval import prompts
from benchmarks.traveleval.agents.answer import conclude
from benchmarks.traveleval.agents.sampling import SamplingSource, official_sampling
from benchmarks.traveleval.plan import Parsing, plan_text
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import intercity_stations
from providers.interface import ChatModel, ChatRequest, ChatResponse, Message
from providers.stages import PLANNER, stage

DESCRIPTIONS: dict[str, str] = {
    "direct": "the paper's: the request, one call, the plan JSON",
    "cot": "the paper's: reasoning, then the plan JSON; one call",
    "react": "the paper's: one call, its own ReAct rounds, no tools",
    "reflexion": "the paper's: react, then 1 critique rewriting the plan",
}
"""What `tripbench list` says of each (at most 59 characters: its lines fit 80 columns)."""


@dataclass(frozen=True, slots=True)
class PaperStrategy:
    """`direct`, `cot`, `react` (one call) or `reflexion` (`critique`: a second call on the first plan)."""

    name: str
    kind: prompts.PaperKind
    critique: bool = False
    parsing: Parsing = "official"
    sampling: SamplingSource = "official"
    language: prompts.Language = "zh"

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self.name]

    @property
    def expected_calls(self) -> float:
        return 2.0 if self.critique else 1.0

    @property
    def planner_calls(self) -> float:
        """Every call writes a plan: each is the Planner's (`benchmarks.base.PlannerCalls`)."""
        return self.expected_calls

    @property
    def planner_share(self) -> None:
        """All of the tokens (the share of the calls: all of them)."""
        return None

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        sandbox: Sandbox = tools
        query = task.input
        stations = intercity_stations(sandbox, query["start_city"], query["target_city"])
        response = await self._ask(model, Message("system", prompts.paper_system(self.kind, stations, self.language)),
                                   Message("user", prompts.paper_user(query, self.kind, self.language)))
        steps: list[dict[str, Any]] = [{"call": self.kind}]
        # off the event loop: reading a plan out of a long hostile answer takes up to half a second (`plan.py`)
        first = await asyncio.to_thread(conclude, response.text, steps, task.id, response.finish_reason, self.parsing)
        if not self.critique:
            return first
        if first.status != DELIVERED:
            first.error = f"the first plan, so no critique followed: {first.error}"
            return first
        steps[0]["answer"] = response.text
        steps.append({"call": "critique"})
        critique = prompts.critique_prompt(plan_text(response.text), self.language)
        response = await self._ask(model, Message("system", critique))
        return await asyncio.to_thread(conclude, response.text, steps, task.id, response.finish_reason, self.parsing)

    async def _ask(self, model: ChatModel, *messages: Message) -> ChatResponse:
        temperature, max_tokens = (official_sampling(getattr(model, "name", "")) if self.sampling == "official"
                                   else (None, None))
        with stage(PLANNER):
            return await model.complete(ChatRequest(model="", messages=messages, temperature=temperature,
                                                    max_tokens=max_tokens))


def paper_strategies(parsing: Parsing, sampling: SamplingSource,
                     language: prompts.Language = "zh") -> list[PaperStrategy]:
    """`direct`, `cot`, `react`, `reflexion` with the run's parsing, sampling and language."""
    return [PaperStrategy("direct", "direct", parsing=parsing, sampling=sampling, language=language),
            PaperStrategy("cot", "cot", parsing=parsing, sampling=sampling, language=language),
            PaperStrategy("react", "react", parsing=parsing, sampling=sampling, language=language),
            PaperStrategy("reflexion", "react", critique=True, parsing=parsing, sampling=sampling, language=language)]
