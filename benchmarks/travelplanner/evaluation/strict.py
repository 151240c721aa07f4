"""The strict evaluator: the official checks with the documented fixes, as a separate, named mode.

Scores from this mode are *not* comparable with the paper or the leaderboard; they answer "is this plan
actually right?". Each override below names the official behaviour it replaces:

* City matching (issue #50). Official: on non-travel days the city is a string, so meals, attractions and
  hotels match it per character (§7.2 (3)). Strict: the whole city name.
* Travel modes (issue #51). Official: `no flight` / `no self-driving` look for case-sensitive `Flight` /
  `Self-driving` (§7.3); Within Sandbox checks only texts containing `flight number`, `self-driving` or
  `taxi`, so `Driving` or `Bus` pass unchecked (§7.2 (1)); the conflict check uses its own matcher, taxi
  first (§7.2 (7)). Strict: one case-insensitive classifier everywhere (flight; then self-driving, also
  `self driving`, `drive`, `driving`; then taxi), and an unrecognised mode fails Within Sandbox.
* Last attraction. Official: `split(';')[:-1]` drops the text after the last `;`, so an attraction list
  without a trailing `;` loses its last item in every attraction check (§7.2 (1), (3), (6)). Strict: every
  non-empty `;`-separated item, stripped.
* Names. Official: a case-sensitive substring (`Fly` finds `Flying Mango`, §2). Strict: the whole name.
* Cuisine. Official: a meal in the origin city skips the rest of that day's meals (§7.3). Strict: only
  that meal.
* Minimum nights. Official: checked only when exactly one row matches (§7.2 (8)). Strict: the first
  matching row, as the cost uses.
* Null fields. Official: `null` is not in `['', '-']`, so it counts as filled in Complete Information
  (§7.2 (2)). Strict: `null` is absent.
* 3-day destination. Official: nothing checks that a 3-day trip visits `dest` (§7.2 (4)). Strict: the
  visited city must be `dest`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.travelplanner.dataset import Query
from benchmarks.travelplanner.evaluation.lookups import Accommodation
from benchmarks.travelplanner.evaluation.official import OfficialEvaluator
from benchmarks.travelplanner.plan_fields import extract_before_parenthesis

DRIVING_WORDS = ("self-driving", "self driving", "driving", "drive")
CONFLICT_NAMES = {"flight": "Flight", "self-driving": "Self-driving", "taxi": "Taxi"}


class StrictEvaluator(OfficialEvaluator):
    """`OfficialEvaluator` with the fixes in the module docstring; messages keep the official wording."""

    mode = "strict"
    exact_names = True  # official: case-sensitive substring of the name (docs/fidelity/travelplanner.md §2)

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
