"""The paper's views over a run: its tiers (Figure 4(b-d), Table 4 / B4, Figure A1(b-d)), the progressive steps
(Table 3), budget compliance per model and strategy (Figure 3) and the correlations between metrics (Figure 5).

The paper's tiers are the official analysis's (`run.py`): Easy = the easy queries and every progressive group's first
step (G1), Medium = medium and G2, Hard = hard and G3, told by uid as the official code does (T0001-T0200 and Gxx-1,
T0201-T0600 and Gxx-2, T0601-T1000 and Gxx-3), so T1002, a hard query outside those ranges, is in no tier but in
Overall; a query file's own uids of another form go by their step, else their tag. Overall is every query of the
run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from statistics import fmean

from benchmarks.reporting import Cell, Column, GroupedRates, Heatmap, Kind, Radar, Section, StackedShares, Table
from benchmarks.traveleval.metric_names import BY_KEY, DIMENSION_NAMES, METRICS, MetricName
from benchmarks.traveleval.report.aggregate import (
    COST_CATEGORIES,
    Agent,
    Scored,
    add_rows,
    add_sample_rows,
    all_seven,
    lead_columns,
    mean_of,
    metric_mean,
    partly_measured,
    plans,
    sample_means,
    value,
)
from benchmarks.traveleval.report.overall import COST_AXIS, RULE, cost_means, radar, shares_of
from benchmarks.traveleval.report.scores import DIMENSIONS, dimension_scores

TIERS = ("Easy", "Medium", "Hard")
TIER_RULE = ("Paper tiers, as the official analysis forms them, by uid: Easy = T0001-T0200 (the easy queries) + "
             "Gxx-1, Medium = T0201-T0600 + Gxx-2, Hard = T0601-T1000 + Gxx-3 (T1002, a hard query, is in no tier, as "
             "there); uids of another form by step, else tag. Overall = every query of the run.")
STEP_METRICS = ("fictitious_attraction_rate", "overall_time_utilization", "aqe")
"""Table 3's metrics: FAR, OTU, AQE."""
_UID = re.compile(r"T(\d{4})|G\d+-([123])")


def tier(item: Scored) -> str | None:
    """The paper tier of a rollout's query: `uid_tier` for a uid of the official form, else its progressive step,
    else its tag."""
    if _UID.fullmatch(item.uid):
        return uid_tier(item.uid)
    task = item.view.task
    found = task.input.get("step") if task is not None else None
    if isinstance(found, int) and 1 <= found <= len(TIERS):
        return TIERS[found - 1]
    tag = task.input.get("tag") if task is not None else None
    return tag.capitalize() if isinstance(tag, str) and tag.capitalize() in TIERS else None


def uid_tier(uid: str) -> str | None:
    """The official analysis's tier of a uid (`run.py`): T0001-T0200 and Gxx-1 Easy, T0201-T0600 and Gxx-2 Medium,
    T0601-T1000 and Gxx-3 Hard, any other uid none (T1002, a hard query, is in no tier there)."""
    found = _UID.fullmatch(uid)
    if found is None:
        return None
    if found[2] is not None:
        return TIERS[int(found[2]) - 1]
    number = int(found[1])
    return None if not 1 <= number <= 1000 else TIERS[0] if number <= 200 else TIERS[1] if number <= 600 else TIERS[2]


def step(item: Scored) -> int | None:
    task = item.view.task
    found = task.input.get("step") if task is not None else None
    return found if isinstance(found, int) else None


def _subset(samples: dict[int, list[Scored]], keep: Callable[[Scored], bool]) -> dict[int, list[Scored]]:
    return {n: [item for item in items if keep(item)] for n, items in samples.items()}


def _in_tier(name: str) -> Callable[[Scored], bool]:
    return lambda item: tier(item) == name


def _at_step(number: int) -> Callable[[Scored], bool]:
    return lambda item: step(item) == number


def _tiers_present(found: Sequence[Agent]) -> list[str]:
    return [name for name in TIERS if any(tier(item) == name for agent in found for item in agent.pooled)]


def _steps_present(found: Sequence[Agent]) -> list[int]:
    return sorted({s for agent in found for item in agent.pooled if (s := step(item)) is not None})


def _breakdown_columns(with_run: bool, with_samples: bool, by: str) -> tuple[Column, ...]:
    """A tier's or a step's row: counts, all seven, BCS and the six dimension scores."""
    return (*lead_columns(with_run, with_samples, by), Column("rollouts", Kind.INT), Column("plans scored", Kind.INT),
            Column("all seven", Kind.PCT), Column("BCS", Kind.PCT),
            *(Column(dimension, Kind.FLOAT) for dimension in DIMENSIONS))


def tier_section(found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Section | None:
    """Figure 4(b-d) as a table and radars, Table 4 / B4 per agent, Figure A1(b-d): by paper tier."""
    tiers = _tiers_present(found)
    if not tiers:
        return None
    table = Table("te_tiers", "Six dimensions by paper tier (Figure 4(b-d); %, scores 0..1)",
                  _breakdown_columns(with_run, with_samples, "tier"))
    bcs = BY_KEY["constraint", "budget_satisfaction"]
    for agent in found:
        for name in (*tiers, "Overall"):
            subset = agent.samples if name == "Overall" else _subset(agent.samples, _in_tier(name))
            add_rows(table, (*agent.cells(with_run), name), subset,
                     lambda items: [len(items), len(plans(items)), mean_of(items, all_seven),
                                    metric_mean(items, bcs), *dimension_scores(items)],
                     with_samples=with_samples)
    table.note = f"{TIER_RULE} {RULE} Dimension scores: the fixed scales above."
    radars = [radar(f"te_radar_tier_{name.lower()}", f"Six dimensions, {name} tier",
                    [dimension_scores([i for i in agent.pooled if tier(i) == name]) for agent in found],
                    [agent.label(with_run) for agent in found]) for name in tiers]
    tables = [table, *table4(found, tiers, with_run=with_run), cost_tiers(found, tiers, with_run=with_run)]
    charts: list[Radar | StackedShares] = [*radars]
    charts += [StackedShares(f"te_costs_{name.lower()}", f"What the money goes on, {name} tier (Figure A1)",
                             [(agent.label(with_run), shares) for agent in found
                              if (shares := shares_of([i for i in agent.pooled if tier(i) == name]))], COST_AXIS)
               for name in tiers]
    return Section("The paper's tiers", tables, list(charts), [TIER_RULE])


def table4(found: Sequence[Agent], tiers: Sequence[str], *, with_run: bool) -> list[Table]:
    """Table 4 / B4: every metric by tier, one table per agent (over all its samples' plans)."""
    tables = []
    for n, agent in enumerate(found):
        table = Table(f"te_table4_{n + 1}", f"Every metric by paper tier (Table 4 / B4): {agent.label(with_run)}",
                      (Column("metric"), Column("dimension"), Column("what"),
                       *(Column(name, Kind.FLOAT) for name in (*tiers, "Overall"))))
        subsets = [[i for i in agent.pooled if tier(i) == name] for name in tiers] + [agent.pooled]
        for metric in METRICS:
            scale = 100.0 if _is_rate(metric) else 1.0
            table.add(f"{metric.acronym}{' %' if scale == 100 else ''}", DIMENSION_NAMES[metric.dimension], metric.name,
                      *(_scaled(metric_mean(items, metric), scale) for items in subsets))
        for dimension, scores in zip(DIMENSIONS, zip(*(dimension_scores(items) for items in subsets), strict=True),
                                     strict=True):
            table.add(f"{dimension} score", DIMENSION_NAMES[dimension], "tripbench's fixed scale, 0..1", *scores)
        counts = ", ".join(f"{name} {len(plans(items))}" for name, items in zip((*tiers, "Overall"), subsets,
                                                                                strict=True))
        table.note = " ".join(filter(None, (f"Plans scored: {counts}. {RULE} Rates in %.",
                                            partly_measured([agent], METRICS, with_run=with_run))))
        tables.append(table)
    return tables


def _is_rate(metric: MetricName) -> bool:
    return metric.binary or metric.dimension in ("accuracy", "time")


def _scaled(cell: Cell, scale: float) -> Cell:
    return cell * scale if isinstance(cell, float) else cell


def cost_tiers(found: Sequence[Agent], tiers: Sequence[str], *, with_run: bool) -> Table:
    """Figure A1(b-d): each category's share of the money, per agent and tier."""
    table = Table("te_cost_tiers", "Cost composition by paper tier (Figure A1(b-d); % of the money, mean RMB)",
                  (*lead_columns(with_run, False, "tier"), Column("plans", Kind.INT),
                   *(Column(f"{key} %", Kind.PCT) for key in COST_CATEGORIES), Column("total", Kind.FLOAT)))
    for agent in found:
        for name in (*tiers, "Overall"):
            items = agent.pooled if name == "Overall" else [i for i in agent.pooled if tier(i) == name]
            count, _, total, shares = cost_means(items)
            table.add(*agent.cells(with_run), name, count, *shares, total)
    table.note = f"{TIER_RULE} Over all samples' scored plans; shares of the mean plan's recomputed cost."
    return table


def step_section(found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Section | None:
    """G1 -> G2 -> G3 with deltas, and Table 3 (FAR, OTU, AQE with relative changes)."""
    steps = _steps_present(found)
    if not steps:
        return None
    table = Table("te_progressive", "Progressive groups, step by step (G1 -> G2 -> G3; deltas in points)",
                  (*_breakdown_columns(with_run, with_samples, "step"), Column("Δ all seven", Kind.DELTA),
                   Column("Δ BCS", Kind.DELTA)))
    bcs = BY_KEY["constraint", "budget_satisfaction"]
    for agent in found:
        before: dict[int, tuple[Cell, Cell]] = {}
        for s in steps:
            rows: dict[int, list[Cell]] = {}
            for n, items in _subset(agent.samples, _at_step(s)).items():
                now = (mean_of(items, all_seven), metric_mean(items, bcs))
                previous = before.get(n)
                rows[n] = [len(items), len(plans(items)), *now, *dimension_scores(items),
                           *(_minus(a, b) if previous is not None else None
                             for a, b in zip(now, previous or now, strict=True))]
                before[n] = now
            add_sample_rows(table, (*agent.cells(with_run), f"G{s}"), rows, with_samples=with_samples)
    table.note = (f"{RULE} Deltas: each step against the step before (the same trips, one more constraint block), "
                  "in percentage points.")
    return Section("Progressive steps", [table, table3(found, steps, with_run=with_run, with_samples=with_samples)])


def _minus(a: Cell, b: Cell) -> Cell:
    return a - b if isinstance(a, float) and isinstance(b, float) else None


def table3(found: Sequence[Agent], steps: Sequence[int], *, with_run: bool, with_samples: bool) -> Table:
    """Table 3: FAR, OTU and AQE at each step, and each later step's change relative to the step before (%), as the
    paper's own figures are (FAR 0.020 -> 0.179 -> 0.104 is -41.7 % at G3: G3 against G2)."""
    metrics = [BY_KEY[dimension, key] for dimension, key in (("accuracy", STEP_METRICS[0]), ("time", STEP_METRICS[1]),
                                                              ("utility", STEP_METRICS[2]))]
    pairs = list(zip(steps, steps[1:]))
    columns = [Column(f"{metric.acronym} G{s}", Kind.PCT if _is_rate(metric) else Kind.FLOAT)
               for metric in metrics for s in steps]
    columns += [Column(f"{metric.acronym} Δ% G{s}", Kind.DELTA) for metric in metrics for _, s in pairs]
    table = Table("te_table3", "FAR, OTU and AQE as constraints are added (Table 3; Δ%: change relative to the step "
                  "before)", (*lead_columns(with_run, with_samples), *columns))

    def row(items: Sequence[Scored]) -> list[Cell]:
        at = {(metric.key, s): metric_mean([i for i in items if step(i) == s], metric)
              for metric in metrics for s in steps}
        return [*(at[metric.key, s] for metric in metrics for s in steps),
                *(_relative(at[metric.key, s], at[metric.key, before]) for metric in metrics for before, s in pairs)]

    for agent in found:
        add_rows(table, agent.cells(with_run), agent.samples, row, with_samples=with_samples)
    table.note = (f"{RULE} Δ%: (value at the step - value at the step before) / value at the step before, in %, as "
                  "the paper's Table 3 (G2 against G1, G3 against G2); blank when the step before is 0.")
    return table


def _relative(now: Cell, first: Cell) -> Cell:
    return (now - first) / first if isinstance(now, float) and isinstance(first, float) and first else None


def budget_figure(found: Sequence[Agent], *, with_run: bool) -> tuple[Table, GroupedRates]:
    """Figure 3: BCS per model (rows) and strategy (columns), the mean across samples."""
    models = list(dict.fromkeys(f"{a.run}: {a.model}" if with_run else a.model for a in found))
    strategies = list(dict.fromkeys(agent.strategy for agent in found))
    bcs = BY_KEY["constraint", "budget_satisfaction"]
    cells = {(f"{a.run}: {a.model}" if with_run else a.model, a.strategy):
             sample_means(a, lambda items: metric_mean(items, bcs)) for a in found}
    table = Table("te_fig3", "Budget compliance (BCS, %) per model and strategy (Figure 3)",
                  (Column("model"), *(Column(strategy, Kind.PCT) for strategy in strategies)))
    for model in models:
        table.add(model, *(cells.get((model, strategy)) for strategy in strategies))
    table.note = f"{RULE} With several samples, the mean of the samples' rates."
    chart = GroupedRates("te_fig3", "Budget compliance (BCS) per model and strategy", models,
                         [(strategy, [_rate(cells.get((model, strategy))) for model in models])
                          for strategy in strategies])
    return table, chart


def _rate(cell: Cell) -> float | None:
    return cell if isinstance(cell, float) else None


CORRELATED = [metric for metric in METRICS if not metric.binary or metric.key == "budget_satisfaction"]
"""Figure 5's metrics: every non-binary metric, and BCS."""
MIN_PAIRS = 3


def correlation_section(found: Sequence[Agent]) -> Section | None:
    """Figure 5: Pearson's r between metrics over every scored plan of the report (all agents and samples)."""
    items = [item for agent in found for item in plans(agent.pooled)]
    if len(items) < MIN_PAIRS:
        return None
    columns = {metric: [value(item, metric) for item in items] for metric in CORRELATED}
    kept = [metric for metric in CORRELATED if sum(isinstance(v, float) for v in columns[metric]) >= MIN_PAIRS]
    if len(kept) < 2:
        return None
    varies = [a for a in kept if any(pearson(columns[a], columns[b]) is not None for b in kept if b is not a)]
    kept = varies  # a metric constant over the plans correlates with nothing
    if len(kept) < 2:
        return None
    matrix = [[pearson(columns[a], columns[b]) for b in kept] for a in kept]
    table = Table("te_correlations", "Correlations between metrics (Figure 5; Pearson's r over scored plans)",
                  (Column("metric"), *(Column(metric.acronym, Kind.FLOAT) for metric in kept)))
    for metric, row in zip(kept, matrix, strict=True):
        table.add(metric.acronym, *row)
    table.note = (f"Over the {len(items):,} scored plans of the report (every agent and sample), each pair over the "
                  "plans where both are measured; blank: fewer than 3 such plans or a constant metric. Metrics never "
                  "measured, or constant over the plans, are left out.")
    chart = Heatmap("te_correlations", "Correlations between metrics (Pearson's r)", [m.acronym for m in kept], matrix)
    return Section("Correlations between metrics", [table], [chart])


def pearson(xs: Sequence[float | str | None], ys: Sequence[float | str | None]) -> float | None:
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if isinstance(x, float) and isinstance(y, float)]
    if len(pairs) < MIN_PAIRS:
        return None
    mx, my = fmean(x for x, _ in pairs), fmean(y for _, y in pairs)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    syy = sum((y - my) ** 2 for _, y in pairs)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None
