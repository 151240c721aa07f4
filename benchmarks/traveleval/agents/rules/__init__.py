"""The official repository's two rule-based planners as strategies that need no model (docs/fidelity/traveleval.md
§8): `rule-based` (`core/utils/baseline.py`, plans file `our-method`) and `rule-based-strict`
(`core/utils/baseline_constraints.py`, `our-method-strict-1`). Each builds a `FinalTravelPlan` from the sandbox
alone; any model string works in a spec (e.g. `offline:oracle`) and no call is made. Their random choices (the day
order of clusters, the strict planner's visit lengths) are seeded by (`rule_seed`, query uid); the k-means starts by
the uid alone, as the official k-means has a fixed `random_state`. The answer is the plan as compact JSON.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.base import DELIVERED, RolloutResult, Task
from benchmarks.traveleval.agents.rules import preference, strict
from benchmarks.traveleval.agents.statuses import NO_PLAN
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from providers.interface import ChatModel

Planner = Callable[[Sandbox, dict[str, Any], int], "dict[str, Any] | str"]
PLANNERS: dict[str, tuple[Planner, str]] = {
    "rule-based": (preference.plan, "official rule-based planner (our-method), no LLM"),
    "rule-based-strict": (strict.plan, "official constraint-first planner (strict-1), no LLM"),
}


@dataclass(frozen=True, slots=True)
class RuleStrategy:
    """`rule-based` or `rule-based-strict`: a plan from the sandbox by the official planner's rules, no model call."""

    name: str
    seed: int = 0
    expected_calls: float = 0.0

    @property
    def description(self) -> str:
        return PLANNERS[self.name][1]

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        planner = PLANNERS[self.name][0]
        # off the event loop: k-means and the day routes take a few milliseconds a query
        made = await asyncio.to_thread(planner, tools, dict(task.input), self.seed)
        step: dict[str, Any] = {"strategy": self.name, "seed": self.seed}
        if isinstance(made, str):
            return RolloutResult(NO_PLAN, steps=[step], error=made)
        return RolloutResult(DELIVERED, answer=json.dumps(made, ensure_ascii=False), plan=made, steps=[step])


def rule_strategies(seed: int) -> list[RuleStrategy]:
    return [RuleStrategy(name, seed) for name in PLANNERS]
