"""What one finished rollout leaves behind: its key and the values the scheduler hands the results store."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.base import Evaluation, RolloutResult
from providers.interface import Usage
from runner.ladder.calls import CallRecord


@dataclass(frozen=True, slots=True, order=True)
class RolloutKey:
    """Identifies one rollout; unique within a run and stable across resumes."""

    benchmark: str
    split: str
    task: str
    model: str
    """The model's label (`ModelSpec.label`)."""
    strategy: str
    sample: int

    def __str__(self) -> str:
        return f"{self.benchmark}/{self.split}/{self.task}/{self.model}/{self.strategy}/{self.sample}"


@dataclass(slots=True)
class RolloutRecord:
    """A finished rollout: its key, the strategy's result and the calls it made, as the store commits it."""

    key: RolloutKey
    result: RolloutResult
    calls: list[CallRecord] = field(default_factory=list)
    error_type: str | None = None
    """Exception class that ended the rollout (e.g. `RateLimited`), None when the strategy returned normally."""
    started_at: float = 0.0
    finished_at: float = 0.0
    evaluations: dict[str, Evaluation] = field(default_factory=dict)
    """Its evaluations by evaluator mode, when it was scored where it ran (a replay's worker process): stored with
    it, so the run's scoring pass finds it done."""

    @property
    def cost_usd(self) -> float:
        """Money this rollout spent (calls with an unknown price count as 0)."""
        return sum(call.cost_usd or 0.0 for call in self.calls)

    @property
    def saved_usd(self) -> float:
        """Money the cache saved this rollout."""
        return sum(call.saved_usd or 0.0 for call in self.calls)

    @property
    def cache_hits(self) -> int:
        return sum(call.hit for call in self.calls)

    @property
    def retries(self) -> int:
        return sum(call.retries for call in self.calls)

    def tokens(self) -> Usage:
        """Tokens of all calls, hits included (what the rollout consumed, not what was billed)."""
        return Usage(
            input_tokens=sum(c.usage.input_tokens for c in self.calls),
            cached_input_tokens=sum(c.usage.cached_input_tokens for c in self.calls),
            output_tokens=sum(c.usage.output_tokens for c in self.calls),
        )
