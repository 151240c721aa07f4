"""Spatiality (`space` in the results), as the official `core/metrics/space.py` and `geo_calculator.py` compute it.

Coordinates are looked up by exact name in the city's poi.json; names not found are dropped from the day's
sequence before anything is measured. Distances come from `distance.Distances`.

- `RP` (route penalty): per day (sorted), over the located stops in visit order, start and end points included:
  actual km / optimal km - 1, where actual km sums the Gaode driving distance of each consecutive pair (the
  straight-line km where one is missing) and optimal km is the shortest path through all the stops with the first
  and last fixed (a name visited twice is one place, 0 km from itself); 0 when the optimal km is 0 (fewer than two
  stops). RP is the mean over days, 0.0 without days. Official behaviour: the whole metric is 0.0 as soon as one
  distance of the route search (every ordered pair of a day's stops) cannot be had, since any error is swallowed.
  The official code always has a key (its default configuration carries one), so without the API RP is computed
  exactly when the caches hold every pair; else 0.0 (fix `spatial-offline`: offline distances).
- `CSM` (cross-day spatial misalignment): over the located activity places of the plan (no start or end points),
  for each visit not at an accommodation activity's place: its mean distance to the day's other places (0.0 when
  none) divided by the smallest mean distance to another non-empty day's places (0.0, not a division, when that
  minimum is 0 or there is no other day). A day that ends with no value yet adds a 0.0. {"P90", "P95"} are numpy's
  (linear) percentiles of the values. Official behaviour: {} when a pair distance cannot be had (so {} without a
  key and uncached answers as soon as two places are located) or when the plan has no day (empty percentile).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.traveleval.evaluation.distance import LatLon, haversine_km

MAX_ROUTE_STOPS = 20
"""The official optimal-route search is a DP for 5..20 stops and a brute force over (n-2)! orders above: a day
with more located stops, all of whose distances can be had, never finishes there, so it is reported as an error
here (with a distance missing, the official code stops before the search: RP = 0.0)."""
Measure = Callable[[LatLon, LatLon], "float | None"]


class NoDistance(Exception):
    """A distance the source could not give (the official code raises and the metric falls back to 0 / {})."""


def route_penalty(sequences: Mapping[Any, Sequence[Any]], locate: Callable[[Sequence[Any]], dict[str, LatLon]],
                  measure: Measure) -> float:
    """`RP` over each day's stop names (module docstring)."""
    penalties: list[float] = []
    try:
        for day in sorted(sequences):
            places = locate(sequences[day])
            order = [name for name in sequences[day] if name in places]
            legs = {}
            for here, there in zip(order, order[1:], strict=False):
                km = measure(places[here], places[there])
                if km is not None:
                    legs[(here, there)] = km
            penalties.append(_day_penalty(order, legs, places, measure))
    except (NoDistance, TypeError):  # the official code swallows every error here (an unhashable name included)
        return 0.0
    return sum(penalties) / len(penalties) if penalties else 0.0


def _day_penalty(order: list[str], legs: Mapping[tuple[str, str], float], places: Mapping[str, LatLon],
                 measure: Measure) -> float:
    actual: float = 0
    if legs:
        for here, there in zip(order, order[1:], strict=False):
            found = legs.get((here, there), legs.get((there, here)))
            actual += haversine_km(places[here], places[there]) if found is None else found
    optimal = shortest_path_km(order, places, measure)
    return 0 if optimal == 0 else actual / optimal - 1


def shortest_path_km(order: Sequence[str], places: Mapping[str, LatLon], measure: Measure) -> float:
    """The shortest path from `order[0]` through every stop to `order[-1]` (Held-Karp over the stops; the sums run
    in path order from 0, so the minimum is the official DP's and brute force's to the last bit)."""
    n = len(order)
    if n < 2:
        return 0.0
    km: dict[tuple[str, str], float] = {}
    for i, here in enumerate(order):
        for j, there in enumerate(order):
            if i != j:
                found = measure(places[here], places[there])
                if found is None:
                    raise NoDistance(f"{here} -> {there}")
                km[(here, there)] = found
        km[(here, here)] = 0
    if n > MAX_ROUTE_STOPS:  # checked after the distances, as the official search starts once it has them all
        raise ValueError(f"a day with {n} located stops: the official route search over {n - 2}! orders does not end")
    matrix = np.array([[km[(here, there)] for there in order] for here in order], dtype=np.float64)
    return _held_karp(matrix)


def _held_karp(km: np.ndarray) -> float:
    """The shortest path from stop 0 through every stop to the last, over `km[i, j]`, one layer of visited sets at a
    time: each step is the official DP's `best[mask, i] + km[i, j]` and each state keeps the least, so the result is
    its to the bit, in numpy (a day of 20 stops took 30 s and 440 MB as a dict of states)."""
    n = len(km)
    last, full = n - 1, (1 << n) - 1
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = np.zeros(1 << n, dtype=np.int8)
    for bit in range(n):
        sizes += ((masks >> bit) & 1).astype(np.int8)
    best = np.full((1 << n, n), np.inf)
    best[1, 0] = 0.0
    for size in range(1, n):
        layer = masks[(sizes == size) & (masks & 1 == 1)]  # the visited sets of this size, the start among them
        reached = best[layer]
        for j in range(1, n):
            if j == last and size != n - 1:
                continue  # the last stop ends the path: it is entered last
            free = (layer >> j) & 1 == 0
            targets = layer[free] | (1 << j)
            steps = (reached[free] + km[:, j]).min(axis=1)
            best[targets, j] = np.minimum(best[targets, j], steps)
    return float(best[full, last])


def misalignment(days: Mapping[Any, Sequence[str]], places: Mapping[str, LatLon], lodgings: set[Any],
                 measure: Measure) -> dict[str, float]:
    """`CSM` over each day's located activity places; `places` in poi.json order (the official pair order)."""
    names = list(places)
    km: dict[tuple[str, str], float] = {}
    for i, here in enumerate(names):
        km[(here, here)] = 0.0
        for there in names[i + 1:]:
            found = measure(places[here], places[there])
            if found is None:
                raise NoDistance(f"{here} -> {there}")
            km[(here, there)] = km[(there, here)] = found
    values: list[Any] = []
    for day, visits in days.items():
        for here in visits:
            if here in lodgings:
                continue
            same = [km[(here, other)] for other in visits if other != here]
            near = np.mean(same) if same else 0.0
            others = [np.mean([km[(here, there)] for there in other_visits])
                      for other_day, other_visits in days.items() if other_day != day and other_visits]
            nearest = min(others) if others else 0.0
            values.append(near / nearest if nearest > 0 else 0.0)
        if not values:
            values.append(0.0)
    return {"P90": float(np.percentile(values, 90)), "P95": float(np.percentile(values, 95))}


def cross_day_misalignment(sequences: Mapping[Any, Sequence[Any]], locate: Callable[[Sequence[Any]], dict[str, LatLon]],
                           lodgings: set[Any], measure: Measure) -> dict[str, float]:
    """`CSM` (module docstring): {} where the official code gives {}."""
    try:
        everywhere: set[Any] = set()
        for day in sorted(sequences):
            everywhere.update(sequences[day])
        places = locate(list(everywhere))
        located = {day: [name for name in sequences[day] if name in places] for day in sequences}
        return misalignment(located, places, lodgings, measure)
    except (NoDistance, IndexError, TypeError):
        return {}
