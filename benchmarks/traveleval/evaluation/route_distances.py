"""Distance statistics of plans' daily routes: what the spatial metrics rest on (the paper gives distance statistics
beside its queue ablation, Table B3); `tripbench evaluate --distance-summary`.

For each plan, each day's stops as `RP` takes them (starting point, activities, ending point), looked up by name in
the city's poi.json (those not found are left out, as there); a leg is a pair of consecutive located stops. Its km
is the distance source's Gaode driving answer (`Distances.gaode_km`: the official caches, our answer cache, or the
live API with a key) when it has one (measured), else the offline estimate (haversine x 1.3, estimated). The summary
counts stops, located stops, measured and estimated legs, and gives km per leg and per day: mean, median, 90th
percentile (linear) and max.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.traveleval.evaluation.city import city_facts
from benchmarks.traveleval.evaluation.distance import Distances, haversine_km, offline_km
from benchmarks.traveleval.evaluation.extract import daily_stops, stop_names
from benchmarks.traveleval.sandbox.sandbox import Sandbox


@dataclass(slots=True)
class RouteDistances:
    """One plan's daily routes, measured."""

    stops: int = 0
    located: int = 0
    measured: int = 0
    """Legs the distance source answered."""
    legs_km: list[float] = field(default_factory=list)
    days_km: list[float] = field(default_factory=list)
    source_km: list[float | None] = field(default_factory=list)
    """Per leg, the distance source's answer (None: it had none)."""
    geodesic_km: list[float] = field(default_factory=list)
    """Per leg, the great-circle km (the paper's ablation's "geodesic")."""


def route_distances(itinerary: Mapping[str, Any], city: str, sandbox: Sandbox,
                    distances: Distances) -> RouteDistances:
    """The distances of a readable plan's daily routes in `city` (the sandbox the evaluator used)."""
    facts = city_facts(sandbox, city)
    found = RouteDistances()
    for names in stop_names(daily_stops(itinerary)).values():
        places = facts.locate(names)
        order = [name for name in names if name in places]
        found.stops += len(names)
        found.located += len(order)
        day_km = 0.0
        for here, there in zip(order, order[1:], strict=False):
            km = distances.gaode_km(places[here], places[there])
            found.measured += km is not None
            found.source_km.append(km)
            found.geodesic_km.append(haversine_km(places[here], places[there]))
            km = offline_km(places[here], places[there]) if km is None else km
            found.legs_km.append(km)
            day_km += km
        found.days_km.append(day_km)
    return found


def summarize(routes: Sequence[RouteDistances]) -> dict[str, Any]:
    """The statistics over plans (module docstring), as JSON values; None where there is nothing to measure."""
    legs = [km for route in routes for km in route.legs_km]
    days = [km for route in routes for km in route.days_km]
    measured = sum(route.measured for route in routes)
    return {"plans": len(routes), "stops": sum(route.stops for route in routes),
            "located_stops": sum(route.located for route in routes), "legs": len(legs),
            "measured_legs": measured, "estimated_legs": len(legs) - measured,
            "km_per_leg": _stats(legs), "km_per_day": _stats(days)}


def _stats(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    p90 = statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]
    return {"mean": round(statistics.fmean(values), 3), "median": round(statistics.median(values), 3),
            "p90": round(p90, 3), "max": round(max(values), 3)}
