"""TravelEval's report sections, from the evaluations the runs stored (the official `detailed_metrics` of each plan),
in the paper's shapes: per agent (model and strategy) over every query of the run, compliance with the counts and
the delivery rate, six dimension scores with a radar per model (Figure 4), each dimension's metrics under the
paper's acronyms (`metric_names`); by paper tier (Figure 4(b-d), Table 4 / B4, Figure A1(b-d)); by progressive step
(Table 3); budget compliance per model and strategy (Figure 3); correlations between metrics (Figure 5); the cost
composition; Table 2 beside the paper's rule-based approaches, the strategy radars on Hard (Figure B1), the queue
model's sensitivity (Table A3) and the distance sources (Table B3(b)); and the queries no plan can satisfy.

Every mean follows the official analysis (`scored`: over the plans the evaluator scored); each table's note says
its rule. Several samples give a row per sample, then the mean, sd and 95 % interval across samples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.base import DELIVERED, GENERIC_STATUSES
from benchmarks.reporting import GroupView, Outcome, RolloutView, RunView, Section, outcome_table
from benchmarks.traveleval.agents.rules import PLANNERS
from benchmarks.traveleval.agents.statuses import STATUSES
from benchmarks.traveleval.evaluation import AS_WRITTEN, STANDARDIZED
from benchmarks.traveleval.metric_names import METRICS
from benchmarks.traveleval.report import overall, paper
from benchmarks.traveleval.report.aggregate import (
    CONSTRAINT_KEYS,
    NOT_MEASURED,
    Agent,
    Scored,
    agents,
    all_seven,
    mean_of,
    metric_mean,
    sampled,
    scored,
    value,
)
from benchmarks.traveleval.report.distance_sources import table_b3b
from benchmarks.traveleval.report.feasible import data_dir, unsatisfiable_section
from benchmarks.traveleval.report.overall import header
from benchmarks.traveleval.report.queue_sensitivity import table_a3
from benchmarks.traveleval.report.scores import DIMENSIONS, PER_PLAN
from benchmarks.traveleval.report.strategy_radar import strategy_radars
from benchmarks.traveleval.report.table2 import table2
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from errors import UserError

__all__ = ["CONSTRAINT_KEYS", "DIMENSIONS", "group_rates", "report_sections", "rollout_category", "rollout_facts",
           "rollout_metrics"]

PROTOCOL_NOTE = ("The official repository has no license: tripbench's prompts are its own wording of what the official "
                 "agents are sent.")
SEVEN = [metric for metric in METRICS if metric.binary]


def report_sections(runs: Sequence[RunView], mode: str, *, with_run: bool) -> list[Section]:
    groups = [g for run in runs for g in run.groups]
    found = agents(groups)
    with_samples = sampled(found)
    notes = [f"Evaluator: {mode}.", _distances(runs), _names(runs), *_evaluator_errors(found), *_not_measured(found),
             *_sampling(runs), PROTOCOL_NOTE]
    if not any(run.evaluated for run in runs):
        notes.append(f"No `{mode}` evaluations are stored: add it to the spec's `evaluate` and run again.")
    flags = {"with_run": with_run, "with_samples": with_samples}
    sections = [Section("TravelEval: six dimensions",
                        [overall.compliance_table(found, **flags), overall.scores_table(found, **flags),
                         *overall.dimension_tables(found, **flags, mode=mode)],
                        list(overall.radar_charts(found, with_run=with_run)), notes)]
    sections += [s for s in (paper.tier_section(found, **flags), paper.step_section(found, **flags)) if s is not None]
    fig3, chart = paper.budget_figure(found, with_run=with_run)
    sections.append(Section("Budget", [overall.budget_table(found, **flags), fig3], [chart]))
    sections.append(overall.cost_section(found, **flags))
    if (correlations := paper.correlation_section(found)) is not None:
        sections.append(correlations)
    sections.append(_paper_views(runs, found, **flags))
    if (impossible := unsatisfiable_section(runs)) is not None:
        sections.append(impossible)
    counted = [(g, Counter(view.status for view in g.rollouts)) for g in groups]
    sections.append(Section("How rollouts ended", [outcome_table(
        "te_statuses", "How rollouts ended", "status", counted, {**GENERIC_STATUSES, **STATUSES},
        with_run=with_run)]))
    return sections


def _paper_views(runs: Sequence[RunView], found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Section:
    """Table 2 beside the report's agents, Figure B1, Table A3 (the queue model) and Table B3(b) (distances)."""
    tables = [table2(found, with_run=with_run, with_samples=with_samples), table_a3()]
    notes = []
    folder = data_dir(runs)
    try:
        with Sandbox.open(ensure_index(folder)) as sandbox:
            tables.append(table_b3b(found, sandbox, folder, with_run=with_run))
    except (UserError, OSError) as exc:
        notes.append(f"Table B3(b) not computed: the sandbox could not be opened ({exc}).")
    return Section("The paper's Table 2, Figure B1, Table A3 and Table B3(b)", tables,
                   list(strategy_radars(found, with_run=with_run)), notes)


def _distances(runs: Sequence[RunView]) -> str:
    sources: Counter[str] = Counter()
    for run in runs:
        for g in run.groups:
            for view in g.rollouts:
                if view.evaluation is not None and (source := view.evaluation.details.get("distance")):
                    sources[str(source)] += 1
    if not sources:
        return "Distances: none recorded (no plan was scored)."
    listed = ", ".join(f"{source} ({count} plans)" for source, count in sources.most_common())
    return (f"Distances for the space and transfer metrics: {listed}; `amap` is the Gaode web API, `offline` the "
            "official Gaode caches when fetched, and the sandbox's coordinates in `corrected` mode.")


def _names(runs: Sequence[RunView]) -> str:
    """Whether the plans' places were renamed to the database's spelling before scoring, on how many plans."""
    done: Counter[str] = Counter()
    for run in runs:
        for g in run.groups:
            for view in g.rollouts:
                if view.evaluation is not None and "metrics" in view.evaluation.details:
                    done[str(view.evaluation.details.get("names", "not recorded"))] += 1
    listed = ", ".join(f"{way} ({count:,} plans)" for way, count in done.most_common()) or "no plan was scored"
    return (f"Place names: {listed}; `{STANDARDIZED}` is the official pipeline's POI matching (min score 60) before "
            f"its evaluator, the default; `{AS_WRITTEN}` the evaluator alone (`standardize_names = false`).")


def _scored(found: Sequence[Agent]) -> list[Scored]:
    """The plans of the agents that were scored (their metrics computed, in part at least)."""
    return [item for agent in found for item in agent.pooled if item.metrics is not None]


def _evaluator_errors(found: Sequence[Agent]) -> list[str]:
    """How many scored plans the evaluator failed on part way, and the commonest error."""
    errors: Counter[str] = Counter()
    plans = _scored(found)
    for item in plans:
        if (error := (item.view.evaluation.details if item.view.evaluation else {}).get("error")) is not None:
            errors[str(error).split(":")[0]] += 1
    total = len(plans)
    if not errors:
        return []
    where = ", ".join(f"in {stage} on {count:,}" for stage, count in errors.most_common())
    return [f"Evaluator errors: {sum(errors.values()):,} of {total:,} scored plans ({where}). As the official "
            "evaluator does, each keeps the dimensions computed before its error; the later ones have no value."]


def _not_measured(found: Sequence[Agent]) -> list[str]:
    """What was not measured, on how many plans, why, and how to measure it."""
    reasons: dict[str, Counter[str]] = {}
    plans = _scored(found)
    for item in plans:
        for key, why in item.not_measured.items():
            reasons.setdefault(key, Counter())[why] += 1
    total = len(plans)
    return [f"Not measured: {key} on {sum(whys.values()):,} of {total:,} scored plans ({whys.most_common(1)[0][0]}). "
            "It is shown as not measured, and left out of the dimension scores and radars."
            for key, whys in sorted(reasons.items())]


def _sampling(runs: Sequence[RunView]) -> list[str]:
    """The sampling each run's spec sets per model, and where the rest came from: the official values of the model's
    family (the run's `sampling` option, `official`) or the provider's defaults (`provider`, or a run made before the
    paper's protocol was the default)."""
    notes = []
    for run in runs:
        asked = {group.model for group in run.groups if group.strategy not in PLANNERS}  # a rule planner asks no model
        found: Mapping[str, Mapping[str, Any]] = {model: settings for model, settings in (
            run.sampling).items() if model in asked}
        rest = ("the official values of the model (temperature 1.3, 1.0 for Claude, none for qwen3; max_tokens 8192)"
                if run.options.get("sampling") == "official" else "the provider's defaults")
        shown = "; ".join(f"{model}: " + ", ".join([*(f"{k} = {v} (spec)" for k, v in settings.items()),
                                                    f"unset: {rest}"]) for model, settings in found.items())
        if shown:
            notes.append(f"Sampling ({run.label}): {shown}.")
    return notes


def rollout_category(view: RolloutView) -> str:
    """How a rollout ended: its status if not delivered, else whether every constraint held (or the first that
    failed), or the evaluator's error."""
    if view.status != DELIVERED:
        return view.status
    item = scored(view)
    if not item.evaluated:
        return DELIVERED
    if item.metrics is None:
        return "not scored"
    failed = [metric.key for metric in SEVEN if value(item, metric) != 1.0]
    return f"failed {failed[0]}" if failed else "all constraints met"


def rollout_metrics(view: RolloutView) -> Mapping[str, Outcome]:
    """One rollout's metrics for a paired comparison: all seven constraints met first, delivery, each constraint
    (a rollout evaluated without a scored plan failing them, as a success rate counts it), then every other metric
    and the six dimension scores of its scored plan (None without one, or where not measured)."""
    item = scored(view)
    plan = item.metrics is not None

    def met(found: float | None) -> bool | None:
        return None if not item.evaluated else plan and found == 1.0

    found: dict[str, Outcome] = {"all seven": met(all_seven(item)), "delivered": view.status == DELIVERED}
    found.update({header(metric): met(_number(value(item, metric))) for metric in SEVEN})
    found.update({header(metric): _number(value(item, metric)) for metric in METRICS if not metric.binary})
    found.update({f"{dimension} score": _number(PER_PLAN[dimension](item)) for dimension in DIMENSIONS})
    return found


def _number(found: float | str | None) -> float | None:
    return found if isinstance(found, float) else None


def rollout_facts(view: RolloutView) -> list[tuple[str, str]]:
    """Every metric of a rollout's scored plan, for its page: (the acronym and words, the value)."""
    item = scored(view)
    if item.metrics is None:
        return []
    facts = []
    for metric in METRICS:
        found = value(item, metric)
        shown = NOT_MEASURED if found == NOT_MEASURED else "–" if found is None else f"{found:.4g}"
        facts.append((f"{header(metric)} ({metric.dimension}.{metric.key})", shown))
    costs = overall.costs(item)
    if costs:
        facts.append(("cost composition (RMB)", ", ".join(f"{key} {amount:,.0f}" for key, amount in costs.items())))
    return facts


def group_rates(run: RunView, groups: Sequence[GroupView | None]) -> list[Mapping[str, float | None] | None]:
    """The seven compliance rates and all seven together, per group, over its scored plans (for `report
    --compare`)."""
    rates: list[Mapping[str, float | None] | None] = []
    for g in groups:
        if g is None or not run.evaluated:
            rates.append(None)
            continue
        items = [scored(view) for view in g.rollouts]
        cells = {header(metric): metric_mean(items, metric) for metric in SEVEN}
        cells["all seven"] = mean_of(items, all_seven)
        rates.append({key: cell if isinstance(cell, float) else None for key, cell in cells.items()})
    return rates
