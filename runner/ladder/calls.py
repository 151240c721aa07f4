"""What the gateway reports of each LLM call it answered (the rollout files it, the store keeps it)."""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields
from typing import Any

from providers.interface import Usage


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

    def __reduce__(self) -> tuple[type[CallRecord], tuple[Any, ...]]:
        # A replay's worker processes send every call of every rollout: rebuilt from its fields in order, a record
        # unpickles 3x faster than through the slots dataclass's `__setstate__`, which looks its fields up each time.
        return CallRecord, _call_record_fields(self)


_call_record_fields = operator.attrgetter(*(field.name for field in fields(CallRecord)))
