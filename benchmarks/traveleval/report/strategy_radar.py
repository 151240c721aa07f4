"""The paper's Figure B1: per model, its strategies on the Hard tier over every metric, each normalised across the
strategies drawn (the paper: "normalized across 26 metrics"; tripbench has the 24 scalar metrics of `METRICS`).

Normalisation is min-max per metric over the outlines of one radar, turned so that 1 is the best of them (a
lower-is-better metric is flipped); a metric equal for all is drawn at 1; a metric not measured for any is left
out. A model with one strategy has nothing to compare and gets no radar.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.reporting import Cell, Radar
from benchmarks.traveleval.metric_names import METRICS, MetricName
from benchmarks.traveleval.report.aggregate import Agent, metric_mean, number
from benchmarks.traveleval.report.paper import tier

TIER = "Hard"


def normalised(rows: Sequence[Sequence[Cell]], metrics: Sequence[MetricName]
               ) -> tuple[list[int], list[list[float | None]]]:
    """(the metrics kept, by index; each row's normalised values of them): min-max per metric, 1 the best."""
    kept = [n for n in range(len(metrics)) if any(number(row[n]) is not None for row in rows)]
    out: list[list[float | None]] = [[] for _ in rows]
    for n in kept:
        values = [number(row[n]) for row in rows]
        known = [v for v in values if v is not None]
        low, high = min(known), max(known)
        for row_out, v in zip(out, values, strict=True):
            if v is None:
                row_out.append(None)
            elif high == low:
                row_out.append(1.0)
            else:
                share = (v - low) / (high - low)
                row_out.append(1 - share if metrics[n].lower_better else share)
    return kept, out


def strategy_radars(found: Sequence[Agent], *, with_run: bool) -> list[Radar]:
    """One radar per model that has at least two strategies with plans on the Hard tier."""
    models: dict[str, list[Agent]] = {}
    for agent in found:
        models.setdefault(f"{agent.run}: {agent.model}" if with_run else agent.model, []).append(agent)
    charts = []
    for n, (model, members) in enumerate(models.items()):
        rows = [[metric_mean([i for i in agent.pooled if tier(i) == TIER], metric) for metric in METRICS]
                for agent in members]
        drawn = [(agent, row) for agent, row in zip(members, rows, strict=True)
                 if any(number(cell) is not None for cell in row)]
        if len(drawn) < 2:
            continue
        kept, values = normalised([row for _, row in drawn], METRICS)
        charts.append(Radar(f"te_fig_b1_{n + 1}", f"Strategies on the {TIER} tier, every metric normalised "
                            f"(Figure B1; 1 = the best of these): {model}",
                            [METRICS[k].acronym for k in kept],
                            [(agent.strategy, row) for (agent, _), row in zip(drawn, values, strict=True)]))
    return charts
