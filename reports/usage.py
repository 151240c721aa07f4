"""Cost and usage per (model, strategy): money spent and saved, tokens, calls, cache hits, retries, latency."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.base import BUDGET_EXHAUSTED
from benchmarks.reporting import Column, Kind, Table, group_columns, outcome_table
from reports.collect import Group


@dataclass(frozen=True, slots=True)
class Usage:
    """What one group consumed."""

    rollouts: int
    calls: int
    hits: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    spent_usd: float
    saved_usd: float
    batch_saved_usd: float
    """What sending calls through a batch API saved against their online price."""
    batched_calls: int
    unpriced_calls: int
    """Calls sent to a model without a known price (counted as $0)."""
    untrusted_calls: int
    """Calls whose reply had no trustworthy usage (missing, malformed, impossible): charged at their worst case."""
    retries: int
    latency_p50_s: float | None
    latency_p95_s: float | None
    """Over calls that reached the provider (cache hits excluded), retries and backoff included."""
    cut_by_cap: int
    """Rollouts the spend cap stopped (they run again on resume with a higher cap)."""

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.calls if self.calls else None


def usage_of(group: Group) -> Usage:
    calls = [call for view in group.rollouts for call in view.calls]
    sent = sorted(call.latency_s for call in calls if not call.hit)
    return Usage(
        rollouts=len(group.rollouts),
        calls=len(calls),
        hits=sum(call.hit for call in calls),
        input_tokens=sum(call.usage.input_tokens for call in calls),
        cached_input_tokens=sum(call.usage.cached_input_tokens for call in calls),
        output_tokens=sum(call.usage.output_tokens for call in calls),
        spent_usd=sum(view.stored.cost_usd for view in group.rollouts),
        saved_usd=sum(view.stored.saved_usd for view in group.rollouts),
        batch_saved_usd=sum(call.batch_saved_usd or 0.0 for call in calls),
        batched_calls=sum(call.batched for call in calls),
        unpriced_calls=sum(call.cost_usd is None and not call.hit for call in calls),
        untrusted_calls=sum(call.usage_problem is not None for call in calls),
        retries=sum(call.retries for call in calls),
        latency_p50_s=percentile(sent, 0.50),
        latency_p95_s=percentile(sent, 0.95),
        cut_by_cap=sum(view.stored.status == BUDGET_EXHAUSTED for view in group.rollouts),
    )


def percentile(ordered: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile of sorted values; None for none."""
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def cost_table(groups: Sequence[Group], *, with_run: bool) -> Table:
    """Cost and usage per (model, strategy)."""
    table = Table("cost", "Cost and usage", (
        *group_columns(with_run), Column("rollouts", Kind.INT),
        Column("calls", Kind.INT), Column("cache hits %", Kind.PCT), Column("input tokens", Kind.INT),
        Column("cached input", Kind.INT), Column("output tokens", Kind.INT), Column("spent", Kind.USD),
        Column("saved by cache", Kind.USD), Column("saved by batch", Kind.USD), Column("retries", Kind.INT),
        Column("latency p50", Kind.SECONDS),
        Column("latency p95", Kind.SECONDS), Column("cut by cap", Kind.INT)))
    unpriced = untrusted = 0
    for g in groups:
        u = usage_of(g)
        unpriced += u.unpriced_calls
        untrusted += u.untrusted_calls
        table.add(*g.cells(with_run), u.rollouts, u.calls, u.hit_rate,
                  u.input_tokens, u.cached_input_tokens, u.output_tokens, u.spent_usd, u.saved_usd,
                  u.batch_saved_usd if u.batched_calls else None, u.retries,
                  u.latency_p50_s, u.latency_p95_s, u.cut_by_cap)
    table.note = ("Tokens count every call, cache hits included; spent counts what reached a provider; latency is "
                  "over calls that did (retries and backoff included); saved by batch is what calls sent through a "
                  "provider's batch API saved against the online price (blank: none was).")
    if unpriced:
        table.note += f" {unpriced} call(s) went to a model without a known price and count as $0."
    if untrusted:
        table.note += (f" {untrusted} call(s) had no trustworthy usage (missing, malformed or impossible): their "
                       "tokens and cost are their worst case.")
    return table


def status_table(groups: Sequence[Group], descriptions: Mapping[str, str], *, with_run: bool) -> Table:
    """Terminal statuses per (model, strategy), for any benchmark."""
    counted = [(g, Counter(view.status for view in g.rollouts)) for g in groups]
    return outcome_table("statuses", "How rollouts ended", "status", counted, descriptions, with_run=with_run)
