"""Each rollout's values of the metrics a comparison pairs: its benchmark's own (`rollout_metrics` of its report
part, the headline pass/fail first), then what every run stores (cost, tokens, calls, time).

A benchmark without report sections gets two: passed (delivered, and every verdict of its stored evaluation held)
and delivered (the rollout's status).
"""

from __future__ import annotations

from collections.abc import Mapping

from benchmarks.base import DELIVERED, Benchmark
from benchmarks.reporting import Outcome
from reports.collect import RolloutView

USAGE = ("cost ($)", "input tokens", "output tokens", "LLM calls", "wall time (s)")
"""The continuous metrics every rollout has, whatever its benchmark."""


def rollout_values(view: RolloutView, benchmark: Benchmark) -> dict[str, Outcome]:
    """The rollout's metrics in display order: the benchmark's (headline first), then `USAGE`."""
    own = benchmark.report.rollout_metrics(view) if benchmark.report is not None else _generic(view)
    stored = view.stored
    usage: Mapping[str, Outcome] = dict(zip(USAGE, (
        float(stored.cost_usd), float(stored.usage.input_tokens), float(stored.usage.output_tokens),
        float(stored.calls), max(0.0, stored.finished_at - stored.started_at))))
    return {**own, **usage}


def _generic(view: RolloutView) -> dict[str, Outcome]:
    """Passed (a rollout that delivered nothing fails, evaluated or not; one that did and was not evaluated has no
    value), then delivered."""
    delivered = view.stored.status == DELIVERED
    verdicts = view.evaluation.verdicts if view.evaluation is not None else None
    passed = None if verdicts is None and delivered else delivered and all(
        verdict.passed is not False for verdict in verdicts or ())
    return {"passed": passed, "delivered": delivered}
