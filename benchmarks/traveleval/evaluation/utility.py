"""Utility (`utility` in the results) and the experience value the economy dimension shares, as the official
`core/metrics/utility.py` computes them.

- Experience value: sum over the plan's attraction stops found in the sandbox of star x preference match. A
  star of 0 counts 3.0; a missing star (NaN in the official pandas read; three staged attractions) stays NaN and
  makes the value NaN (fix `missing-star-default`: 3.0). The match compares the attraction's raw `type` text
  ("{历史古迹;园林}") with the query's attraction preferences and constraints by substring: with n preferred and m
  excluded types found, (1+n)/(1+m) when both, 0.0 when only excluded ones, 1+n when only preferred, else 1.0.
- `aqe`: sum over the attraction stops of star x effective hours / (24 x trip span in days). The star of a stop
  not in the sandbox is 3.0; a missing star is NaN. Official quirk: the queue time is computed over the letters
  of the stop's type, the word "attraction", which have no base time, so nothing is deducted (fix
  `aqe-queue-time`). The date type is still computed, so a query without dates fails the plan.
- `profit`: experience value / number of attraction stops (the integer 0 without any).
- `diversity`: normalised Shannon entropy (EDI) of the visited sandbox attractions' categories: each visit
  spreads 1 over its categories (split on ";" without stripping), entropy in bits / log2(24), 24 being the
  number of attraction categories in the official config. 0.0 without a visited sandbox attraction.
- `ads`: attraction stops per day (days of the plan) / target density by travel style: 特种兵式 among the rhythm
  preferences -> 6.0, else 慢游 -> 2.0, else children or seniors in the party -> 2.75, else 3.54.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.traveleval.evaluation.extract import Stop, attraction_names, trip_days
from benchmarks.traveleval.evaluation.time import categories, date_type, effective_hours
from benchmarks.traveleval.sandbox.sandbox import Attraction

ATTRACTION_CATEGORY_COUNT = 24
"""len(categories.attractions) of the official config: the EDI's normaliser is log2 of it."""
TARGET_DENSITY: Mapping[str, float] = {"慢游": 2.00, "普通": 3.54, "亲子": 2.75, "特种兵": 6.00}
"""Attractions per day by travel style."""


def star(row: Attraction, *, fixed: bool = False) -> float:
    """An attraction's star as the metrics read it: NaN when missing (3.0 when `fixed`)."""
    if row.star is None:
        return 3.0 if fixed else math.nan
    return row.star


def preference_match(raw_type: str, query: Mapping[str, Any]) -> float:
    wanted = query.get("attractions", {})
    preferred = sum(1 for kind in wanted.get("preferences", []) if kind in raw_type)
    excluded = sum(1 for kind in wanted.get("constraints", []) if kind in raw_type)
    if excluded:
        return (1 + preferred) / (1 + excluded) if preferred else 0.0
    return 1 + preferred if preferred else 1.0


def experience_value(names_by_day: Mapping[Any, Sequence[Any]], attractions: Mapping[str, Attraction],
                     query: Mapping[str, Any], *, fixed: bool = False) -> float:
    total = 0.0
    if not attractions:
        return total
    for names in names_by_day.values():
        for name in names:
            if name in attractions:
                row = attractions[name]
                total += float(star(row, fixed=fixed) or 3.0) * float(preference_match(row.type, query))
    return total


def quality_hours(days: Mapping[Any, list[Stop]], dates: Any, attractions: Mapping[str, Attraction], *,
                  fixed: bool = False) -> float:
    """Sum of star x effective hours over the attraction stops (the numerator of `aqe`)."""
    total = 0.0
    if not attractions:
        return total
    for day, stops in days.items():
        for stop in stops:
            if stop["type"] != "attraction":
                continue
            name = stop["name"]
            kind = date_type(dates, day)
            row = attractions.get(name)
            kinds: Any = categories(row.type) if fixed and row else stop.get("type")
            quality = float(star(row, fixed=fixed)) if row else 3.0
            total += quality * effective_hours(stop, kind, kinds)
    return total


def diversity(names_by_day: Mapping[Any, Sequence[Any]], attractions: Mapping[str, Attraction]) -> float:
    if not attractions:
        return 0.0
    visits = [attractions[name].type.strip("{}").split(";")
              for names in names_by_day.values() for name in names if name in attractions]
    if not visits:
        return 0.0
    weights: dict[str, float] = {}
    for kinds in visits:
        for kind in kinds:
            weights[kind] = weights.get(kind, 0) + 1 / len(kinds)
    total = sum(weights.values())
    entropy = 0.0
    for weight in weights.values():
        share = weight / total
        if share > 0:
            entropy -= share * math.log2(share)
    return entropy / math.log2(ATTRACTION_CATEGORY_COUNT)


def travel_style(query: Mapping[str, Any]) -> str:
    party = query.get("people_composition", {})
    family = party.get("children", 0) > 0 or party.get("seniors", 0) > 0
    rhythm = query.get("rhythm", {}).get("preferences", [])
    if "特种兵式" in rhythm:
        return "特种兵"
    if "慢游" in rhythm:
        return "慢游"
    return "亲子" if family else "普通"


def attraction_density(names_by_day: Mapping[Any, Sequence[Any]], query: Mapping[str, Any]) -> float:
    if not names_by_day:
        return 0.0
    per_day = sum(len(names) for names in names_by_day.values()) / len(names_by_day)
    return per_day / TARGET_DENSITY.get(travel_style(query), 3.54)


def utility_metrics(itinerary: Any, days: Mapping[Any, list[Stop]], query: Mapping[str, Any],
                    attractions: Mapping[str, Attraction], *, fixed: bool = False) -> dict[str, Any]:
    """The `utility` dimension; `days`: `extract.daily_stops(itinerary)`."""
    names = attraction_names(days)
    visits = sum(len(day) for day in names.values())
    experience = experience_value(names, attractions, query, fixed=fixed)
    hours = 24 * trip_days(itinerary["summary"], itinerary["intercity_transport"]["transport_type"])
    quality = quality_hours(days, query.get("dates"), attractions, fixed=fixed)
    return {"aqe": quality / hours, "profit": experience / visits if visits else 0,
            "diversity": diversity(names, attractions), "ads": attraction_density(names, query)}
