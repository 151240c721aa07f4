"""TravelEval's evaluator: the official six metric groups of onlycwy11/TravelEval @ 3638d555 (`core/evaluator.py`,
`core/metrics/*.py`, `core/utils/*.py`), written anew from a reading of that code (which has no license).

`evaluate_plan` returns, for one `FinalTravelPlan` object ({"query_uid", "itinerary"}):
    {"query_uid", "mode", "distance", "names", "metrics": {"accuracy": {...}, "constraint": {...}, "time": {...},
     "space": {...}, "economy": {...}, "utility": {...}}, "not_measured": {"space.RP": "why", ...}}
with the official `detailed_metrics` key names and values (the per-dimension `calculation_time` the official
evaluator adds is a wall-clock reading, left out), or {"query_uid", "mode", "distance", "error": "<what and why>"}
where the official evaluator fails on the plan: its extraction step raises (the official evaluator then records
status "error"), the plan has no summary.destination text (the official batch loop itself crashes), or there is no
query of that uid (the official loop skips the plan). A metric that raises gives both: the `error`, and in
`metrics` the dimensions computed before it (the official evaluator keeps them in its "error" row). `not_measured`
names the metrics whose value is the official code's stand-in for a measurement it could not make (RP 0.0 and CSM {}
when a distance is missing; transportation_breaks, never checked in `official` mode), with the reason: reports show
them as not measured.
NaN and infinities, which the official code produces in places (a missing star), are written as null: the output is
strict JSON.

The sandbox is the plan's own summary.destination (fix `sandbox-from-query`: the query's target_city), mapped to a
folder as the official loader maps it; the intercity options run between summary.departure and the destination.
The metrics of each group, their formulas and their quirks are described in the group's module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.traveleval.evaluation import accuracy, constraint
from benchmarks.traveleval.evaluation.city import CityFacts, city_facts, intercity_options
from benchmarks.traveleval.evaluation.distance import CITY_CODES, Distances, LatLon, open_distances
from benchmarks.traveleval.evaluation.economy import economy_metrics
from benchmarks.traveleval.evaluation.extract import (
    Stop,
    check_readable,
    daily_activities,
    daily_stops,
    stop_names,
)
from benchmarks.traveleval.evaluation.modes import CORRECTED, MODES, NO_QUEUE, check_mode
from benchmarks.traveleval.evaluation.space import cross_day_misalignment, route_penalty
from benchmarks.traveleval.evaluation.time import time_metrics
from benchmarks.traveleval.evaluation.utility import utility_metrics
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.names import NameMatcher
from benchmarks.traveleval.sandbox.sandbox import Sandbox

__all__ = ["AS_WRITTEN", "CONSTRAINT_METRICS", "DIMENSIONS", "MODES", "NOT_MEASURED", "STANDARDIZED", "Scorer",
           "evaluate_plan", "open_scorer"]

DIMENSIONS = ("accuracy", "constraint", "time", "space", "economy", "utility")
CONSTRAINT_METRICS = ("budget_satisfaction", "time_compliance", "people_adaptability", "accommodation_satisfaction",
                      "transportation_satisfaction", "diet_preference_satisfaction", "travel_time_satisfaction")
"""The binary (0/1) metrics of the constraint dimension."""
_PLAN_FAULTS = (ArithmeticError, AttributeError, LookupError, TypeError, ValueError)
"""What a malformed plan raises in the official code (and here): the plan is then an error, not a crash."""
_LODGING_TYPES = ("accommodation_check_in", "accommodation_check_out", "accommodation")
STANDARDIZED = "standardized"
"""A result's `names`: the plan's places were renamed to the database's spelling first (the official pipeline)."""
AS_WRITTEN = "as written"
"""A result's `names`: the plan was scored as written (the official evaluator alone, `standardize_names` off)."""


def evaluate_plan(plan: Mapping[str, Any], query: Mapping[str, Any] | None, sandbox: Sandbox, *,
                  mode: str = "official", distances: Distances, names: NameMatcher | None = None) -> dict[str, Any]:
    """The six metric groups of one plan, or the reason it cannot be scored (module docstring).

    With `names`, the plan's places are first renamed to the database's spelling, as the official pipeline's POI
    cleaning step does before its evaluator runs (`run.py`); the result then lists the names changed (`renamed`).
    Every result says which was done in `names` (`STANDARDIZED` or `AS_WRITTEN`).
    """
    check_mode(mode)
    uid = plan.get("query_uid") if isinstance(plan, Mapping) else None
    # a uid that is no string (NaN, a number, an object) is named in the error, never echoed as JSON cannot hold it
    head: dict[str, Any] = {"query_uid": uid if isinstance(uid, str) else None, "mode": mode,
                            "distance": distances.name, "names": STANDARDIZED if names is not None else AS_WRITTEN}
    if names is not None and isinstance(plan, Mapping):
        standardized = names.standardize(plan)
        plan = standardized.plan
        head["renamed"] = {old: new for old, new in standardized.matched.items() if old != new}
        if standardized.too_long:  # said, never silently scored as written
            head["not_standardized"] = [f"{name[:40]}… ({len(name):,} characters: too long to match)"
                                        for name in standardized.too_long]
    if query is None:
        return {**head, "error": f"no TravelEval query with uid {uid!r}"}
    itinerary = plan.get("itinerary") if isinstance(plan, Mapping) else None
    fixed, queue = mode == CORRECTED, mode != NO_QUEUE
    try:
        destination = itinerary.get("summary").get("destination")  # type: ignore[union-attr]
    except AttributeError:
        return {**head, "error": "the plan has no itinerary.summary object, so no destination to pick the sandbox"}
    if not isinstance(destination, str):
        return {**head, "error": f"itinerary.summary.destination is {destination!r}, not a city name"}
    city = query.get("target_city") if fixed else destination
    departure = query.get("start_city") if fixed else itinerary.get("summary").get("departure")  # type: ignore[union-attr]
    stage = "plan extraction"
    failures = getattr(distances, "failures", 0)  # live Gaode calls that failed so far (amap only)
    try:
        check_readable(itinerary)
        facts = city_facts(sandbox, city if isinstance(city, str) else "")
        days, schedules = daily_stops(itinerary), daily_activities(itinerary)
        metrics: dict[str, Any] = {}
        unmeasured: dict[str, str] = {}
        for stage in DIMENSIONS:
            metrics[stage] = _dimension(stage, itinerary, days, schedules, query, facts, departure, distances, fixed,
                                        queue, unmeasured)
    except _PLAN_FAULTS as exc:
        error = f"{stage}: {type(exc).__name__}: {exc}"
        if not metrics_started(stage):
            return {**head, "error": error}
        # as the official evaluator: its status is "error", and the dimensions computed before the error are kept
        return {**head, "metrics": json_safe(metrics), "not_measured": unmeasured, "error": error}
    if failed := getattr(distances, "failures", 0) - failures:  # those metrics had distances missing: said
        head["distance_failures"] = failed
    return {**head, "metrics": json_safe(metrics), "not_measured": unmeasured}


def metrics_started(stage: str) -> bool:
    """Whether an error at `stage` came after the plan's extraction, in a dimension (whose predecessors are kept)."""
    return stage in DIMENSIONS


@dataclass(frozen=True, slots=True)
class Scorer:
    """What scoring plans of one data folder needs, open: its sandbox, its distances, and the POI cleaning when asked
    for (`open`). It owns them: `close` closes both, and with the sandbox every lookup kept for it."""

    sandbox: Sandbox
    distances: Distances
    names: NameMatcher | None

    @classmethod
    def open(cls, folder: Path, *, distance: str | None, standardize_names: bool) -> Scorer:
        """The scoring setup of a TravelEval data folder: its sandbox (built first if missing or stale), the
        distances of a `distance` setting ("auto" or None: amap with AMAP_API_KEY, else offline; answers cached in the
        folder's `amap_cache/`), and the POI cleaning with `standardize_names`.

        Raises:
            UserError: `amap` without a key, or an unknown setting (before the sandbox is opened).
        """
        distances = open_distances(None if distance == "auto" else distance, folder)
        try:
            sandbox = Sandbox.open(ensure_index(folder))
        except BaseException:
            distances.close()
            raise
        return cls(sandbox, distances, NameMatcher(sandbox) if standardize_names else None)

    def score(self, plan: Mapping[str, Any], query: Mapping[str, Any] | None, mode: str) -> dict[str, Any]:
        """`evaluate_plan` of one plan against its query (None: unknown) in `mode`."""
        return evaluate_plan(plan, query, self.sandbox, mode=mode, distances=self.distances, names=self.names)

    def close(self) -> None:
        with closing(self.distances):
            self.sandbox.close()


@contextmanager
def open_scorer(folder: Path, *, distance: str | None, standardize_names: bool) -> Iterator[Scorer]:
    """`Scorer.open`, closed on exit."""
    with closing(Scorer.open(folder, distance=distance, standardize_names=standardize_names)) as scorer:
        yield scorer


def _dimension(name: str, itinerary: Any, days: dict[Any, list[Stop]], schedules: dict[Any, Any],
               query: Mapping[str, Any], facts: CityFacts, departure: Any, distances: Distances,
               fixed: bool, queue: bool, unmeasured: dict[str, str]) -> dict[str, Any]:
    """One dimension's metrics; a metric whose value stands in for a measurement that could not be made gets its
    reason in `unmeasured` (`NOT_MEASURED`)."""
    if name == "accuracy":
        located = facts.locate([stop for stops in stop_names(days).values() for stop in stops])
        arrival = query.get("target_city") if fixed else itinerary["summary"]["destination"]
        trains, flights = (intercity_options(facts.sandbox, departure, arrival)
                           if isinstance(departure, str) and isinstance(arrival, str) else ((), ()))
        city_code = CITY_CODES.get(str(arrival), "")
        return {"cost_deviation_rate": accuracy.cost_deviation_rate(itinerary),
                "fictitious_attraction_rate": accuracy.fictitious_attraction_rate(days, located),
                "opening_hours_violations": accuracy.opening_hours_violations(schedules, facts.opening_hours),
                "transportation_breaks": accuracy.transfer_breaks(days, facts.locate, distances, city_code)
                if fixed else _unmeasured(unmeasured, "accuracy.transportation_breaks", 0.0, NOT_MEASURED["breaks"]),
                "intercity_planning_deviation": accuracy.intercity_planning_deviation(itinerary, trains, flights),
                "people_deviation": accuracy.people_deviation(itinerary, query, fixed=fixed)}
    if name == "constraint":
        return {"budget_satisfaction": constraint.budget_satisfaction(itinerary, query, fixed=fixed),
                "time_compliance": constraint.time_compliance(itinerary, query),
                "people_adaptability": constraint.people_adaptability(itinerary, query),
                "accommodation_satisfaction": constraint.accommodation_satisfaction(itinerary, query,
                                                                                    facts.hotel_features),
                "transportation_satisfaction": constraint.transportation_satisfaction(itinerary, query, fixed=fixed),
                "diet_preference_satisfaction": constraint.diet_preference_satisfaction(
                    schedules, query, facts.cuisines, fixed=fixed),
                "travel_time_satisfaction": constraint.travel_time_satisfaction(schedules, query.get("dates"),
                                                                                facts.attractions, queue=queue)}
    if name == "time":
        return time_metrics(itinerary, schedules, query, facts.attractions, queue=queue)
    if name == "space":
        lodgings = {activity.get("location_name") for day_plan in itinerary.get("daily_plans", [])
                    for activity in day_plan.get("activities", []) if activity.get("type") in _LODGING_TYPES}
        route, spread = _Missing(distances.driving_km if fixed else distances.gaode_km), \
            _Missing(distances.driving_km if fixed else distances.gaode_km)
        found = {"RP": route_penalty(stop_names(days), facts.locate, route),
                 "CSM": cross_day_misalignment(stop_names(daily_stops(itinerary, with_ends=False)), facts.locate,
                                               lodgings, spread)}
        for key, measure in (("RP", route), ("CSM", spread)):
            if measure.missed:
                unmeasured[f"space.{key}"] = NOT_MEASURED.get(distances.name, NOT_MEASURED["amap"])
        return found
    if name == "economy":
        return economy_metrics(itinerary, days, query, facts.attractions, fixed=fixed)
    return utility_metrics(itinerary, days, query, facts.attractions, fixed=fixed)


NOT_MEASURED = {
    "offline": "a Gaode driving distance was missing (no answer in the official caches, no AMAP_API_KEY), and the "
               "official code then gives RP 0.0 and CSM {}: fetch the official Gaode caches into <data>/amap_cache/ "
               "or set AMAP_API_KEY (`distance = \"amap\"`), or use the `corrected` mode (offline estimates)",
    "amap": "the Gaode web API gave no driving distance for a pair (an error or no route), and the official code "
            "then gives RP 0.0 and CSM {}",
    "breaks": "the official code never detects a transfer break (always 0); the `corrected` mode checks each transfer",
}
"""Why a metric's value is a stand-in, by distance source (space) or metric (the evaluation's `not_measured`)."""


class _Missing:
    """A distance function that remembers whether it ever had no answer (the official metric then falls back)."""

    def __init__(self, measure: Callable[[LatLon, LatLon], float | None]) -> None:
        self.measure = measure
        self.missed = False

    def __call__(self, origin: LatLon, destination: LatLon) -> float | None:
        found = self.measure(origin, destination)
        self.missed = self.missed or found is None
        return found


def _unmeasured(unmeasured: dict[str, str], key: str, value: float, why: str) -> float:
    unmeasured[key] = why
    return value


def json_safe(value: Any) -> Any:
    """`value` with every float that JSON cannot hold (NaN, +-inf) as None and numpy numbers as Python ones."""
    if isinstance(value, Mapping):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    number = float(value)
    return number if math.isfinite(number) else None
