"""Table 2 of the paper as one table: its nine metrics for its two rule-based planners (Approach A and B, the
paper's figures) beside the same nine for every agent of the report.

Approach A is the official `core/utils/baseline.py` (tripbench's `rule-based`), Approach B `baseline_constraints.py`
(`rule-based-strict`): the paper's own text says A leads in Utility and B in BCS, TTCS and Temporality, and its Table
B3 gives the same STR, DTU and OTU for them (docs/fidelity/traveleval.md §9).
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.reporting import Column, Kind, Table
from benchmarks.traveleval.metric_names import BY_KEY, MetricName
from benchmarks.traveleval.report.aggregate import Agent, add_rows, lead_columns, metric_mean, partly_measured, plans
from benchmarks.traveleval.report.overall import RULE

NINE: tuple[MetricName, ...] = tuple(BY_KEY[key] for key in (
    ("constraint", "budget_satisfaction"), ("constraint", "travel_time_satisfaction"), ("time", "average_tour_ratio"),
    ("time", "daily_time_utilization"), ("time", "overall_time_utilization"), ("utility", "diversity"),
    ("utility", "ads"), ("utility", "aqe"), ("utility", "profit")))
"""Table 2's metrics, in its order: BCS, TTCS, STR, DTU, OTU, EDI, ADS, AQE, Profit."""
PAPER: dict[str, tuple[float, ...]] = {
    "rule-based": (0.6273, 0.0096, 0.4979, 0.1212, 0.0608, 0.6547, 0.7649, 0.9882, 5.998),
    "rule-based-strict": (0.9217, 0.4487, 0.7677, 0.3029, 0.0649, 0.5829, 0.5129, 0.7479, 5.502),
}
"""The paper's Table 2 by the tripbench strategy that rebuilds each approach (its percentages as fractions)."""
APPROACH = {"rule-based": "Approach A", "rule-based-strict": "Approach B"}
PAPER_RUN = "paper"


def table2(found: Sequence[Agent], *, with_run: bool, with_samples: bool) -> Table:
    """The paper's two rows first, then one row per agent (per sample with several), each over its scored plans."""
    table = Table("te_table2", "Table 2's nine metrics: the paper's rule-based approaches beside this report",
                  (*lead_columns(with_run, with_samples), Column("plans", Kind.INT),
                   *(Column(metric.acronym, Kind.FLOAT if metric.key == "profit" else Kind.PCT) for metric in NINE)))
    blank = ("",) if with_samples else ()
    for strategy, figures in PAPER.items():
        lead = ((PAPER_RUN,) if with_run else ()) + (f"{PAPER_RUN} (Table 2)", f"{APPROACH[strategy]} = {strategy}")
        table.add(*lead, *blank, None, *figures)
    for agent in found:
        add_rows(table, agent.cells(with_run), agent.samples,
                 lambda items: [len(plans(items)), *(metric_mean(items, metric) for metric in NINE)],
                 with_samples=with_samples)
    paper = ("The paper's rows are its Table 2 (Approach A: the official baseline.py, tripbench's rule-based; "
             "Approach B: baseline_constraints.py, rule-based-strict), planned with Gaode's transit times; the paper "
             "gives no plan count. docs/fidelity/traveleval.md §9 says what differs.")
    table.note = " ".join(filter(None, (RULE, paper, partly_measured(found, NINE, with_run=with_run))))
    return table

