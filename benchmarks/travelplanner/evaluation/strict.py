"""The strict evaluator: the official checks with the documented fixes, as a separate, named mode.

Scores from this mode are *not* comparable with the paper or the leaderboard; they answer "is this plan
actually right?". Each override below names the official behaviour it replaces:

| Fix | Official behaviour (spec) | Strict behaviour |
|---|---|---|
| city matching (#50) | non-travel days match per character (§7.2 (3)) | the city name as a whole |
| travel modes (#51) | `Self-driving` / `Flight` found case-sensitively in the hard check; `Driving`, `Bus` unchecked in the sandbox; conflicts use a different matcher (§7.2 (1), (7), §7.3) | one case-insensitive classifier everywhere (flight, then self-driving incl. `self driving` / `drive` / `driving`, then taxi); an unrecognised mode fails Within Sandbox |
| last attraction | `split(';')[:-1]` drops it (§7.2 (1), (3), (6)) | every non-empty `;`-separated item, stripped |
| names | substring of the name (`Fly` matches `Flying Mango`, §2) | exact name |
| cuisine | a meal in the origin city skips the rest of the day (§7.3) | skips that meal only |
| minimum nights | only applies when exactly one row matches (§7.2 (8)) | the first matching row |
| null fields | `null` counts as filled in Complete Information (§7.2 (2)) | `null` is absent |
| 3-day destination | nothing checks the visited city is `dest` (§7.2 (4)) | it must be `dest` |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.travelplanner.dataset import Query
from benchmarks.travelplanner.evaluation.field_parsing import extract_before_parenthesis
from benchmarks.travelplanner.evaluation.lookups import Accommodation
from benchmarks.travelplanner.evaluation.official import OfficialEvaluator

DRIVING_WORDS = ("self-driving", "self driving", "driving", "drive")
CONFLICT_NAMES = {"flight": "Flight", "self-driving": "Self-driving", "taxi": "Taxi"}


class StrictEvaluator(OfficialEvaluator):
    """`OfficialEvaluator` with the fixes in the module docstring; messages keep the official wording."""

    mode = "strict"
    exact_names = True  # official: case-sensitive substring of the name (spec §2)

    def attraction_items(self, attraction: str) -> list[str]:
        # official: `split(';')[:-1]`, dropping the last segment
        return [item.strip() for item in attraction.split(";") if item.strip()]

    def day_places(self, current_city: str, i: int) -> str | list[str]:
        places = super().day_places(current_city, i)
        # official: a bare string on non-travel days, so every character is a "city" (issue #50);
        # an empty city would be a substring of everything, so it matches nothing here
        if isinstance(places, str):
            return [places] if places else []
        return places

    def leg_kind(self, transportation: str) -> str | None:
        # official: `flight number` / `self-driving` / `taxi`, lower-cased, anything else unchecked (issue #51)
        lowered = transportation.lower()
        if "flight" in lowered:
            return "flight"
        if any(word in lowered for word in DRIVING_WORDS):
            return "self-driving"
        if "taxi" in lowered:
            return "taxi"
        return None

    def unrecognised_leg(self, transportation: str, i: int) -> str | None:
        # official: not checked at all
        return f"The transportation in day {i + 1} is not a flight, self-driving or taxi."

    def conflict_mode(self, transportation: str) -> str | None:
        # official: transportation_match, taxi before self-driving, `Driving` unknown
        kind = self.leg_kind(transportation)
        return CONFLICT_NAMES[kind] if kind else None

    def breaks_transport_rule(self, transportation: str, rule: str) -> bool:
        # official: case-sensitive substrings `Flight` / `Self-driving`
        kind = self.leg_kind(transportation)
        return (rule == "no flight" and kind == "flight") or (rule == "no self-driving" and kind == "self-driving")

    def is_absent(self, value: Any) -> bool:
        # official: `value in ['', '-']`, so null counts as filled
        return value is None or value in ("", "-")

    def minimum_nights_row(self, rows: Sequence[Accommodation]) -> Accommodation | None:
        # official: only when exactly one row matches
        return rows[0] if rows else None

    def origin_meal_ends_day(self) -> bool:
        # official: `continue` of the day loop, so later meals of that day are not counted
        return False

    def route_city_problem(self, query: Query, city: str, inside: bool) -> str | None:
        problem = super().route_city_problem(query, city, inside)
        # official: 3-day trips never check the visited city against `dest`
        if problem is None and inside and query.days <= 3 and city != extract_before_parenthesis(query.dest):
            return f"{city} is not {query.dest}."
        return problem
