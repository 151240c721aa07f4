"""Tasks and what a rollout of one returns: the generic statuses, the result, the verdicts of its evaluation.

The plugin contract (`benchmarks.base`) and the report views (`benchmarks.reporting`) are both built on these values,
which import nothing of either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Generic terminal statuses, set by strategies (DELIVERED) or by the runner (the rest).
DELIVERED = "delivered"
"""The strategy produced its answer."""
PROVIDER_ERROR = "provider_error"
"""An LLM call failed for good (retries exhausted, bad request); re-run on resume if the provider was unavailable."""
TOKEN_LIMIT = "token_limit"
"""The prompt no longer fits the model's context window."""
BUDGET_EXHAUSTED = "budget_exhausted"
"""The run's spend cap stopped the rollout; not a model failure, it runs again on resume with a higher cap."""
REPLAY_MISS = "replay_miss"
"""Cache mode `replay` and a call that is not in the cache."""
CALL_LIMIT = "call_limit"
"""The rollout reached the run's `max_calls` LLM calls (a safety net; benchmarks keep their own step limits)."""
CRASHED = "crashed"
"""The strategy raised an unexpected exception: a bug, recorded with its traceback, never fatal to the run."""
INTERRUPTED = "interrupted"
"""tripbench's own machinery stopped the rollout (a database or cache outage, a lost shard claim, the disk): no
result, it runs again on resume."""

GENERIC_STATUSES: Mapping[str, str] = {
    DELIVERED: "the strategy produced its answer",
    PROVIDER_ERROR: "an LLM call failed for good (re-run on resume if the provider was unavailable)",
    TOKEN_LIMIT: "the prompt no longer fits the context window",
    BUDGET_EXHAUSTED: "stopped by the spend cap (re-run on resume)",
    REPLAY_MISS: "replay mode and an uncached call",
    CALL_LIMIT: "reached the run's max_calls per rollout",
    CRASHED: "the strategy raised an unexpected exception",
    INTERRUPTED: "stopped by tripbench's own machinery (an outage, a lost claim): re-run on resume",
}


@dataclass(frozen=True, slots=True)
class Task:
    """One benchmark item, e.g. one TravelPlanner query."""

    id: str
    """Stable within its split: part of the rollout key, so resume and reports depend on it."""
    input: Mapping[str, Any]
    """JSON-serialisable record the strategies and the evaluator read (the runner stores it, never reads it)."""


@dataclass(slots=True)
class RolloutResult:
    """What a strategy returns for one task. Every field is JSON-serialisable."""

    status: str
    """`DELIVERED`, or a benchmark status listed in `Benchmark.statuses` (e.g. a dead-loop type)."""
    answer: str | None = None
    """The final text answer (TravelPlanner: the plan as the model wrote it)."""
    plan: Any = None
    """The structured answer the evaluator and the submission formatter read (JSON)."""
    steps: list[dict[str, Any]] = field(default_factory=list)
    """The trajectory, one JSON object per step (thought, action, observation, state, ...)."""
    error: str | None = None
    """Why the rollout ended early, in words; None when delivered."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """One constraint checked on one rollout's answer."""

    group: str
    """Constraint family, e.g. `commonsense` or `hard`."""
    constraint: str
    """Official constraint key, e.g. `is_valid_restaurants`."""
    passed: bool | None
    """None when the constraint does not apply to this task."""
    message: str | None = None


@dataclass(frozen=True, slots=True)
class Evaluation:
    """All verdicts on one rollout, plus benchmark-specific JSON details (e.g. the plan's total cost)."""

    verdicts: tuple[Verdict, ...]
    details: Mapping[str, Any] = field(default_factory=dict)
