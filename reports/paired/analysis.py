"""A paired comparison as values: per group pair, each metric's paired statistics, the tasks that changed, the
error categories, and where the runs' calls part. `render.py` and `html.py` show them; `to_json` is `--json`.

Binary metrics get McNemar's exact test and Newcombe's paired interval; continuous ones the Wilcoxon signed-rank test
and a paired bootstrap interval of the mean difference (`stats`). Holm's correction runs over a group pair's binary
metrics, and separately over its continuous ones. Differences are B minus A.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, pvariance
from typing import Any

from benchmarks.base import Benchmark
from benchmarks.reporting import Outcome
from reports.collect import RolloutView, load_benchmark, rollout_path
from reports.paired import stats
from reports.paired.divergence import Divergence, divergence, first_difference, run_keys
from reports.paired.metrics import rollout_values
from reports.paired.pairing import Pairing, PairKey

ALPHA = 0.05
"""A difference is marked significant when its Holm-adjusted p-value is below this."""


@dataclass(slots=True)
class PerTask:
    """With several samples: the metric's mean difference over tasks (each task's samples averaged first)."""

    tasks: int
    difference: float
    ci95: tuple[float, float]
    within_share: float | None
    """The share of the paired differences' variance that lies between samples of one task (None: no variance)."""


@dataclass(slots=True)
class MetricComparison:
    """One metric of one group pair."""

    pairing: Pairing
    metric: str
    binary: bool
    n: int
    """Pairs where both rollouts have a value."""
    mean_a: float
    mean_b: float
    """Rates as fractions for a binary metric."""
    ci95: tuple[float, float]
    """Of mean_b - mean_a (binary: Newcombe, continuous: bootstrap)."""
    p_value: float
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    """Binary only: (both passed, A only, B only, neither)."""
    p_holm: float = 1.0
    per_task: PerTask | None = None

    @property
    def difference(self) -> float:
        return self.mean_b - self.mean_a

    @property
    def significant(self) -> bool:
        return self.p_holm < ALPHA


@dataclass(slots=True)
class Change:
    """A task whose headline outcome changed between A and B."""

    pairing: Pairing
    key: PairKey
    a: RolloutView
    b: RolloutView
    changed: list[tuple[str, str, bool | None, bool | None]]
    """Verdicts that differ: (group, constraint, passed in A, passed in B)."""
    first_difference: int | None
    regressed: bool
    """Passed in A and failed in B (else the reverse: improved)."""


@dataclass(slots=True)
class PairResult:
    """Everything compared for one group pair."""

    pairing: Pairing
    metrics: list[MetricComparison]
    headline: str | None
    """The benchmark's pass/fail metric (regressed/improved are read on it)."""
    regressed: list[Change]
    improved: list[Change]
    categories: list[tuple[str, int, int]]
    """(category, rollouts of A, of B) over the matched pairs, most frequent first."""
    first_differences: Counter[int | None]
    """Index of the first differing call -> pairs (None: the same requests throughout)."""
    divergence: Divergence


@dataclass(slots=True)
class Comparison:
    results: list[PairResult] = field(default_factory=list)
    seed: int = stats.BOOTSTRAP_SEED
    resamples: int = stats.BOOTSTRAP_RESAMPLES


def compare(pairings: Sequence[Pairing]) -> Comparison:
    """Every group pair's statistics."""
    keys: dict[int, set[str]] = {}
    results = []
    for pairing in pairings:
        a_keys = keys.setdefault(id(pairing.a.run), run_keys(pairing.a.run))
        results.append(_pair_result(pairing, load_benchmark(pairing.a.run.benchmark or pairing.a.benchmark), a_keys))
    return Comparison(results)


def _pair_result(pairing: Pairing, benchmark: Benchmark, a_keys: set[str]) -> PairResult:
    values = [(key, rollout_values(a, benchmark), rollout_values(b, benchmark)) for key, a, b in pairing.pairs]
    names = list(dict.fromkeys(name for _, x, y in values for name in (*x, *y)))
    metrics = [found for name in names if (found := _metric(pairing, name, values)) is not None]
    for binary in (True, False):
        family = [m for m in metrics if m.binary is binary]
        for m, adjusted in zip(family, stats.holm([m.p_value for m in family])):
            m.p_holm = adjusted
    headline = next((name for name in names for m in metrics if m.metric == name and m.binary), None)
    regressed: list[Change] = []
    improved: list[Change] = []
    for (key, x, y), (_, a, b) in zip(values, pairing.pairs):
        if headline is None or x.get(headline) is None or y.get(headline) is None or x[headline] == y[headline]:
            continue
        change = Change(pairing, key, a, b, _changed_verdicts(a, b), first_difference(a.calls, b.calls),
                        bool(x[headline]))
        (regressed if change.regressed else improved).append(change)
    categories: Counter[tuple[str, int]] = Counter()
    for _, a, b in pairing.pairs:
        categories[_category(a, benchmark), 0] += 1
        categories[_category(b, benchmark), 1] += 1
    names_seen = dict.fromkeys(name for name, _ in sorted(categories, key=lambda k: -categories[k]))
    return PairResult(pairing, metrics, headline, regressed, improved,
                      [(name, categories[name, 0], categories[name, 1]) for name in names_seen],
                      Counter(first_difference(a.calls, b.calls) for _, a, b in pairing.pairs),
                      divergence((b for _, _, b in pairing.pairs), a_keys))


def _metric(pairing: Pairing, name: str,
            values: Sequence[tuple[PairKey, Mapping[str, Outcome], Mapping[str, Outcome]]]) -> MetricComparison | None:
    kept = [(key, x[name], y[name]) for key, x, y in values if x.get(name) is not None and y.get(name) is not None]
    if not kept:
        return None
    binary = all(isinstance(a, bool) and isinstance(b, bool) for _, a, b in kept)
    xs = [float(a) for _, a, _ in kept if a is not None]
    ys = [float(b) for _, _, b in kept if b is not None]
    differences = [y - x for x, y in zip(xs, ys)]
    if binary:
        both = sum(bool(x and y) for x, y in zip(xs, ys))
        a_only = sum(bool(x and not y) for x, y in zip(xs, ys))
        b_only = sum(bool(y and not x) for x, y in zip(xs, ys))
        counts = (both, a_only, b_only, len(xs) - both - a_only - b_only)
        found = MetricComparison(pairing, name, True, len(kept), fmean(xs), fmean(ys),
                                 stats.newcombe_paired(*counts), stats.mcnemar_exact(a_only, b_only), counts)
    else:
        found = MetricComparison(pairing, name, False, len(kept), fmean(xs), fmean(ys),
                                 stats.bootstrap_mean_ci(differences), stats.wilcoxon_signed_rank(differences))
    if pairing.samples > 1:
        found.per_task = _per_task([key for key, _, _ in kept], differences)
    return found


def _per_task(keys: Sequence[PairKey], differences: Sequence[float]) -> PerTask:
    by_task: dict[tuple[str, str], list[float]] = {}
    for key, d in zip(keys, differences):
        by_task.setdefault(key[:2], []).append(d)
    means = [fmean(found) for found in by_task.values()]
    total = pvariance(differences) if len(differences) > 1 else 0.0
    within = fmean(pvariance(found) if len(found) > 1 else 0.0 for found in by_task.values())
    return PerTask(len(means), fmean(means), stats.bootstrap_mean_ci(means), within / total if total > 0 else None)


def _changed_verdicts(a: RolloutView, b: RolloutView) -> list[tuple[str, str, bool | None, bool | None]]:
    def verdicts(view: RolloutView) -> dict[tuple[str, str], bool | None]:
        found = view.evaluation.verdicts if view.evaluation is not None else ()
        return {(v.group, v.constraint): v.passed for v in found}
    x, y = verdicts(a), verdicts(b)
    return [(group, name, x.get((group, name)), y.get((group, name)))
            for group, name in dict.fromkeys((*x, *y)) if x.get((group, name)) != y.get((group, name))]


def _category(view: RolloutView, benchmark: Benchmark) -> str:
    return benchmark.report.rollout_category(view) if benchmark.report is not None else view.stored.status


def to_json(comparison: Comparison) -> dict[str, Any]:
    """The `--json` object: comparisons (one per group pair and metric), regressed, improved, unmatched, divergence."""
    out: dict[str, Any] = {"bootstrap": {"seed": comparison.seed, "resamples": comparison.resamples},
                           "comparisons": [], "regressed": [], "improved": [],
                           "unmatched": {"a": [], "b": []}, "divergence": []}
    for result in comparison.results:
        pairing = result.pairing
        sides = {"a": pairing.a.name, "b": pairing.b.name}
        out["comparisons"] += [{"benchmark": pairing.a.benchmark, "metric": m.metric, **sides, **_numbers(m)}
                               for m in result.metrics]
        out["regressed"] += [_change(change, result.headline) for change in result.regressed]
        out["improved"] += [_change(change, result.headline) for change in result.improved]
        for side, keys in (("a", pairing.a_unmatched), ("b", pairing.b_unmatched)):
            name = getattr(pairing, side).name
            out["unmatched"][side] += [{**name, "split": split, "task": task, "sample": sample}
                                       for split, task, sample in keys]
        found = result.divergence
        out["divergence"].append({**sides, "pairs": len(pairing.pairs),
                                  "first_difference": {("same" if index is None else str(index)): count
                                                       for index, count in sorted(result.first_differences.items(),
                                                                                  key=_index_order)},
                                  "b_calls": found.calls, "reusable_calls": found.reusable,
                                  "reusable_share": found.share, "rerun_b_usd": found.new_usd,
                                  "rerun_b_tokens": found.new_tokens})
    return out


def _index_order(item: tuple[int | None, int]) -> int:
    return -1 if item[0] is None else item[0]


def _numbers(m: MetricComparison) -> dict[str, Any]:
    scale = 100.0 if m.binary else 1.0  # rates and their differences in percentage points, as the report shows them
    found: dict[str, Any] = {"kind": "binary" if m.binary else "continuous", "n": m.n,
                             "difference": scale * m.difference, "ci95": [scale * m.ci95[0], scale * m.ci95[1]],
                             "p_value": m.p_value, "p_holm": m.p_holm, "significant": m.significant}
    if m.binary:
        both, a_only, b_only, neither = m.counts
        found.update({"a_only": a_only, "b_only": b_only, "both": both, "neither": neither,
                      "rate_a": 100 * m.mean_a, "rate_b": 100 * m.mean_b, "test": "McNemar exact",
                      "ci_method": "Newcombe paired (method 10)"})
    else:
        found.update({"mean_a": m.mean_a, "mean_b": m.mean_b, "test": "Wilcoxon signed-rank",
                      "ci_method": "paired bootstrap (percentile)"})
    if m.per_task is not None:
        found["per_task"] = {"tasks": m.per_task.tasks, "difference": scale * m.per_task.difference,
                             "ci95": [scale * m.per_task.ci95[0], scale * m.per_task.ci95[1]],
                             "between_samples_share": m.per_task.within_share}
    return found


def _change(change: Change, headline: str | None) -> dict[str, Any]:
    split, task, sample = change.key
    return {"benchmark": change.pairing.a.benchmark, "split": split, "task": task, "sample": sample,
            "metric": headline, "a": change.pairing.a.name, "b": change.pairing.b.name,
            "changed": [{"group": group, "constraint": name, "a": x, "b": y} for group, name, x, y in change.changed],
            "first_difference": change.first_difference,
            "rollouts": {"a": change.a.stored.id, "b": change.b.stored.id},
            "pages": {"a": rollout_page(change.pairing.a.run.run_dir, change.a),
                      "b": rollout_page(change.pairing.b.run.run_dir, change.b)}}


def rollout_page(run_dir: Path, view: RolloutView) -> str:
    """The rollout's page in its run's own report (`tripbench report RUN` writes it there)."""
    return str(run_dir / "report" / rollout_path(0, view))
