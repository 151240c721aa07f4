"""Where two runs part: per pair of rollouts, the first LLM call whose request differs, and what of B the cache of A
already holds.

Every stored call carries its cache key (the SHA-256 of its whole request, docs/architecture.md §3.1), so two
rollouts asked the same thing up to the first call whose keys differ: a prompt changed at step 3 shows as index 2 on
every pair that got that far. A call of B whose key is among A's calls could have been answered from A's cache; the
others are what re-running B from A's cache would send, at the price B paid for them (a hit's saved cost is that
price).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reports.collect import RolloutView, RunData
from runner.store.results import CallRecord


@dataclass(frozen=True, slots=True)
class Divergence:
    """B's calls against A's, over a set of paired rollouts (or one pair)."""

    calls: int
    """B's calls."""
    reusable: int
    """Those whose request A's run made too (its cache answers them)."""
    new_usd: float
    """What B's other calls cost (what re-running B from A's cache would spend)."""
    new_tokens: int

    @property
    def share(self) -> float | None:
        return self.reusable / self.calls if self.calls else None


def first_difference(a: Sequence[CallRecord], b: Sequence[CallRecord]) -> int | None:
    """Index of the first call whose request differs (one rollout making more calls than the other counts at the
    first extra call); None when both made the same requests. A call without a key (never sent) differs."""
    for n, (x, y) in enumerate(zip(a, b)):
        if x.cache_key is None or x.cache_key != y.cache_key:
            return n
    return None if len(a) == len(b) else min(len(a), len(b))


def run_keys(run: RunData) -> set[str]:
    """Every request key of a run's calls: what its cache holds of it."""
    return {call.cache_key for group in run.groups for view in group.rollouts for call in view.calls
            if call.cache_key is not None}


def divergence(views: Iterable[RolloutView], a_keys: set[str]) -> Divergence:
    """How much of the rollouts' calls (B's) A's cache answers, and what the rest cost."""
    calls = reusable = tokens = 0
    usd = 0.0
    for view in views:
        for call in view.calls:
            calls += 1
            if call.cache_key is not None and call.cache_key in a_keys:
                reusable += 1
            else:
                usd += (call.cost_usd or 0.0) + (call.saved_usd or 0.0)
                tokens += call.usage.input_tokens + call.usage.output_tokens
    return Divergence(calls, reusable, usd, tokens)
