"""What one finished rollout leaves behind: the values the scheduler hands the results store."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.base import RolloutResult
from providers.interface import Usage
from runner.engine.expand import RolloutKey


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One LLM call a rollout made through the gateway."""

    model: str
    """Provider model string, e.g. `openai:gpt-4o-mini`."""
    cache_key: str | None
    hit: bool
    usage: Usage
    cost_usd: float | None
    """What this call cost (0 for a hit; None when no price is known)."""
    saved_usd: float | None
    """What a hit saved (the original call's cost); 0 for a miss."""
    latency_s: float
    retries: int
    error_type: str | None = None
    error: str | None = None
    batch_saved_usd: float | None = None
    """What sending it through the provider's batch API saved against the online price; None: not batched, or
    unpriced."""
    batched: bool = False
    """Sent through the provider's batch API (and priced at its batch rate)."""
    usage_problem: str | None = None
    """What was wrong with the usage the provider reported (missing, malformed, impossible): the call was charged,
    and `usage` holds, its worst case. None: the reported usage was believed (or the call was a hit)."""


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
