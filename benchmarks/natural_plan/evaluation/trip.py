"""Trip Planning: the official exact match on the sequence of (city, days) stays.

The parser reads the answer line by line (spec, Trip Planning): `European cities for N days` sets the trip length,
the first `\\d+-\\d+` on a line is a stay span (scanning stops at the span ending on the last day, so an alternative
plan further down is never read), and `Day N ... from X to Y` is a flight; `\\w+` makes every city one word. The
cities are the first flight's origin and every flight's destination; a stay runs from one flight day to the next
(the flight day counts for both cities) and the last one to the end of the last span read. Scoring compares the
first `min(len(gold), len(parsed))` stays in order and stops at the first difference: extra trailing stays still
pass, fewer fail.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchmarks.natural_plan.evaluation.scored import UNPARSEABLE, Scored

_VISIT = re.compile(r"\d+-\d+")
_FLIGHT = re.compile(r".*Day (\d+).*from (\w+) to (\w+)")
_TOTAL_DAYS = re.compile(r"European cities for (\d+) days")


def parse(answer: str) -> list[tuple[str, int]]:
    """The (city, days) stays the official parser reads; empty when it finds no span, flight or city."""
    spans: list[str] = []
    flights: list[tuple[str, str, str]] = []
    total_days: int | None = None
    for line in answer.split("\n"):
        if found := _TOTAL_DAYS.findall(line):
            total_days = int(found[0])
        if visits := _VISIT.findall(line):
            spans.append(visits[0])
            if int(visits[0].split("-")[1]) == total_days:
                break
        if legs := _FLIGHT.findall(line):
            flights.append(legs[0])
    if not spans or not flights:
        return []
    cities = [flights[0][1], *(destination for _, _, destination in flights)]
    boundaries = [1, *(int(day) for day, _, _ in flights), int(spans[-1].split("-")[1])]
    return [(city, boundaries[n + 1] - boundaries[n] + 1) for n, city in enumerate(cities)]


def gold(record: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The record's stays from its `**`-joined `cities` and `durations`."""
    cities = [city for city in str(record["cities"]).split("**") if city]
    days = [int(value) for value in str(record["durations"]).split("**") if value]
    return list(zip(cities, days, strict=True))


def score(record: Mapping[str, Any], answer: str) -> Scored:
    """The official verdict on `answer` for a trip record, with the first stay that differs."""
    parsed = parse(answer)
    expected = gold(record)
    shown = [[city, days] for city, days in parsed]
    if not parsed:
        return Scored(False, 0.0, shown, "no plan found: no `Day a-b` span or no `Day N ... from X to Y` flight",
                      UNPARSEABLE)
    for n, ((city, days), (want_city, want_days)) in enumerate(zip(parsed, expected)):
        if city != want_city:
            return Scored(False, 0.0, shown, f"stay {n + 1}: {city} where the plan needs {want_city}", "wrong order")
        if days != want_days:
            return Scored(False, 0.0, shown, f"stay {n + 1}: {days} days in {city} where the plan needs {want_days}",
                          "wrong durations")
    if len(parsed) < len(expected):
        return Scored(False, 0.0, shown, f"{len(parsed)} stays where the plan needs {len(expected)}", "missing stays")
    extra = f" ({len(parsed) - len(expected)} extra trailing stays, which the official score ignores)" \
        if len(parsed) > len(expected) else ""
    return Scored(True, 1.0, shown, f"all {len(expected)} stays match{extra}")
