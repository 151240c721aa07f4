"""The paper's Table B3(b): the distances between consecutive stops of the plans' daily routes as the official source
gives them (Gaode's driving km, from the official caches the data folder holds) beside the great-circle
("geodesic") km of the same legs, per agent.

The legs are the ones the route penalty takes (`evaluation.route_distances`), the plans' places renamed as they were
scored. The report makes no Gaode call: a leg the caches do not hold has no source distance, and the table says on
how many legs each mean rests.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from benchmarks.reporting import Cell, Column, Kind, Table
from benchmarks.traveleval.evaluation.distance import open_distances
from benchmarks.traveleval.evaluation.route_distances import RouteDistances, route_distances
from benchmarks.traveleval.report.aggregate import Agent, Scored, lead_columns, plans
from benchmarks.traveleval.report.table2 import APPROACH
from benchmarks.traveleval.sandbox.sandbox import Sandbox

PAPER_KM = {"rule-based": (13.3085, 9.0460), "rule-based-strict": (23.8097, 17.0517)}
"""The paper's Table B3 distances (API, geodesic; its mean inter-attraction km) of Approach A and B, by the strategy
that rebuilds each (`table2`)."""


def table_b3b(found: Sequence[Agent], sandbox: Sandbox, data_dir: Path, *, with_run: bool) -> Table:
    """One row per agent over all its samples' scored plans."""
    table = Table("te_table_b3b", "Distances between consecutive stops: the official source against geodesic "
                  "(Table B3(b); km per leg)",
                  (*lead_columns(with_run, False), Column("plans", Kind.INT), Column("legs", Kind.INT),
                   Column("legs with a source km", Kind.INT), Column("source km", Kind.FLOAT),
                   Column("geodesic km, same legs", Kind.FLOAT), Column("geodesic / source - 1", Kind.DELTA),
                   Column("geodesic km, all legs", Kind.FLOAT)))
    for strategy, (api, geodesic) in PAPER_KM.items():
        table.add(*(("paper",) if with_run else ()), "paper (Table B3)", f"{APPROACH[strategy]} = {strategy}", None,
                  None, None, api, geodesic, geodesic / api - 1, None)
    distances = open_distances("offline", data_dir)
    try:
        for agent in found:
            legs = _Legs()
            for item in plans(agent.pooled):
                if (route := _route(item, sandbox, distances)) is not None:
                    legs.add(route)
            table.add(*agent.cells(with_run), *legs.row())
    finally:
        distances.close()
    table.note = ("Legs: consecutive stops of each day's route that poi.json locates (starting point, activities, "
                  "ending point), as the route penalty takes them. Source km: Gaode's driving distance from the "
                  "official caches in <data>/amap_cache/ (no call is made); geodesic: the great-circle distance. "
                  "The paper's rows are its Table B3 for its two rule-based approaches (with Gaode's API).")
    return table


def _route(item: Scored, sandbox: Sandbox, distances: Any) -> RouteDistances | None:
    """A scored plan's routes, in the city whose sandbox scored it (the plan's destination, else the query's)."""
    plan = item.view.plan
    itinerary = plan.get("itinerary") if isinstance(plan, Mapping) else None
    if not isinstance(itinerary, Mapping):
        return None
    details = item.view.evaluation.details if item.view.evaluation is not None else {}
    renamed = details.get("renamed")
    if isinstance(renamed, Mapping) and renamed:
        itinerary = _renamed(itinerary, renamed)
    summary = itinerary.get("summary")
    city = summary.get("destination") if isinstance(summary, Mapping) else None
    task = item.view.task
    if not isinstance(city, str) and task is not None:
        city = task.input.get("target_city")
    if not isinstance(city, str):
        return None
    try:
        return route_distances(itinerary, city, sandbox, distances)
    except (KeyError, TypeError, ValueError, AttributeError):  # a plan the evaluator scored only in part
        return None


def _renamed(value: Any, renamed: Mapping[str, Any]) -> Any:
    """`value` with every string `renamed` maps replaced (the names as the evaluator scored them)."""
    if isinstance(value, str):
        new = renamed.get(value)
        return new if isinstance(new, str) else value
    if isinstance(value, Mapping):
        return {key: _renamed(inner, renamed) for key, inner in value.items()}
    if isinstance(value, list):
        return [_renamed(inner, renamed) for inner in value]
    return value


@dataclass(slots=True)
class _Legs:
    """An agent's legs as its row reads them, each km in 8 bytes: a report of a hundred thousand plans keeps none of
    their routes."""

    plans: int = 0
    geodesic: array[float] = field(default_factory=lambda: array("d"))
    sourced: array[float] = field(default_factory=lambda: array("d"))
    """The source km of the legs that have one."""
    sourced_geodesic: array[float] = field(default_factory=lambda: array("d"))
    """The geodesic km of the same legs."""

    def add(self, route: RouteDistances) -> None:
        self.plans += 1
        for source, geodesic in zip(route.source_km, route.geodesic_km, strict=True):
            self.geodesic.append(geodesic)
            if source is not None:
                self.sourced.append(source)
                self.sourced_geodesic.append(geodesic)

    def row(self) -> list[Cell]:
        """plans, legs, legs with a source km, their source and geodesic means, the ratio, the geodesic mean."""
        source_mean = fmean(self.sourced) if self.sourced else None
        same_legs = fmean(self.sourced_geodesic) if self.sourced else None
        ratio = same_legs / source_mean - 1 if source_mean and same_legs is not None else None
        return [self.plans, len(self.geodesic), len(self.sourced), source_mean, same_legs, ratio,
                fmean(self.geodesic) if self.geodesic else None]
