"""The official TravelPlanner evaluator (docs/fidelity/travelplanner.md §7.2-§7.4), every quirk included.

`OfficialEvaluator` computes the 8 commonsense and 5 hard constraints of one plan under their official
keys and messages, and the official total cost. The small methods at the top of the class are the places
where the official code does something questionable; `strict.StrictEvaluator` overrides exactly those.
Plans that would crash the official code are handled as `plan_days` describes: the check that could not
be computed fails with "Could not check: <reason>" and the rest of the plan is scored as usual.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.travelplanner.dataset import LocalConstraint, Query
from benchmarks.travelplanner.evaluation.lookups import Accommodation, CityTables, EvaluationSandbox, PlanLookups
from benchmarks.travelplanner.evaluation.plan_days import PlanDays, Unscorable, present
from benchmarks.travelplanner.evaluation.verdict import COMMONSENSE_KEYS, HARD_KEYS, UNCHECKED, PlanVerdict, Result
from benchmarks.travelplanner.plan_fields import (
    count_consecutive_values,
    extract_before_parenthesis,
    extract_from_to,
    flight_number,
    is_valid_city_sequence,
    transportation_match,
)

MEALS = ("breakfast", "lunch", "dinner")
NOT_FILLED = "You don't need to fill in the information for this or later days."
# house rule -> the text in `house_rules` that forbids it (docs/fidelity/travelplanner.md §7.3; `parties` as fixed on
# 2024-04-26)
FORBIDDING_RULE = {"smoking": "No smoking", "parties": "No parties", "children under 10": "No children under 10",
                   "visitors": "No visitors", "pets": "No pets"}
# query room type -> predicate on the accommodation's `room type`
ROOM_TYPE_OK: dict[str, Callable[[str], bool]] = {
    "not shared room": lambda room: room != "Shared room",
    "shared room": lambda room: room == "Shared room",
    "private room": lambda room: room == "Private room",
    "entire room": lambda room: room == "Entire home/apt",
}


@dataclass(slots=True)
class _Plan:
    query: Query
    rules: LocalConstraint
    days: PlanDays
    lookups: PlanLookups


def _could_not_check(exc: Unscorable) -> Result:
    return False, f"{UNCHECKED}{exc}"


class OfficialEvaluator:
    """Scores plans against queries exactly as `evaluation/eval.py` of the official repository does.

    Args:
        sandbox: an open TravelPlanner sandbox (`sandbox_index.open_sandbox()`).
    """

    mode = "official"
    exact_names = False
    """Restaurant / attraction / accommodation names match as case-sensitive substrings (docs/fidelity/travelplanner.md
    §2)."""

    def __init__(self, sandbox: EvaluationSandbox) -> None:
        self._sandbox = sandbox
        self._city_states = sandbox.city_states()
        self._city_tables: CityTables = {}

    # ---- the questionable official behaviours: strict.StrictEvaluator overrides these -------------------

    def attraction_items(self, attraction: str) -> list[str]:
        # official quirk, docs/fidelity/travelplanner.md §7.2 (1): `split(';')[:-1]` drops the text after the last ';'
        return attraction.split(";")[:-1]

    def day_places(self, current_city: str, i: int) -> str | list[str]:
        """The cities a day's items must mention (Within Current City)."""
        if "from" in current_city:
            # docs/fidelity/travelplanner.md §7.2 (3): both cities lose their parenthesised state (and keep the space
            # before it)
            return [extract_before_parenthesis(city) for city in _leg(current_city, i)]
        # official quirk, docs/fidelity/travelplanner.md §7.2 (3), issue #50: a string, so the checks below run per
        # character
        return extract_before_parenthesis(current_city)

    def leg_kind(self, transportation: str) -> str | None:
        """`flight`, `self-driving`, `taxi`, or None: the mode the sandbox check and the cost look up."""
        lowered = transportation.lower()
        if "flight number" in lowered:
            return "flight"
        if "self-driving" in lowered:
            return "self-driving"
        if "taxi" in lowered:
            return "taxi"
        return None

    def unrecognised_leg(self, transportation: str, i: int) -> str | None:
        # official quirk, docs/fidelity/travelplanner.md §7.2 (1), issue #51: `Driving from A to B`, `Bus` etc. are not
        # checked
        return None

    def conflict_mode(self, transportation: str) -> str | None:
        # official quirk, docs/fidelity/travelplanner.md §7.2 (7): its own matcher, taxi before self-driving before
        # flight
        return transportation_match(transportation)

    def breaks_transport_rule(self, transportation: str, rule: str) -> bool:
        # official quirk, docs/fidelity/travelplanner.md §7.3, issue #51: case-sensitive `Flight` / `Self-driving`
        return (rule == "no flight" and "Flight" in transportation) or (
            rule == "no self-driving" and "Self-driving" in transportation)

    def is_absent(self, value: Any) -> bool:
        # official quirk, docs/fidelity/travelplanner.md §7.2 (2): null is not in ['', '-'], so it counts as filled
        return value in ("", "-")

    def minimum_nights_row(self, rows: Sequence[Accommodation]) -> Accommodation | None:
        # official quirk, docs/fidelity/travelplanner.md §7.2 (8): the rule only applies when exactly one row matches
        return rows[0] if len(rows) == 1 else None

    def origin_meal_ends_day(self) -> bool:
        # official quirk, docs/fidelity/travelplanner.md §7.3: `continue` in the cuisine loop skips the rest of that
        # day's meals
        return True

    def route_city_problem(self, query: Query, city: str, inside: bool) -> str | None:
        """Why a city of the route is unacceptable (Reasonable City Route), or None."""
        state = self._city_states.get(city)
        if state is None:
            return f"{city} is not a valid city."
        # official quirk, docs/fidelity/travelplanner.md §7.2 (4): only trips over 3 days are checked against `dest`
        if inside and query.days > 3 and state != query.dest:
            return f"{city} is not in {query.dest}."
        return None

    # ---- driver ------------------------------------------------------------------------------------------

    def evaluate(self, query: Query, plan: Any) -> PlanVerdict:
        """Score one plan.

        Args:
            query: a query with labels (`query.has_labels`).
            plan: the submission's `plan` value; falsy means not delivered.

        Returns:
            The commonsense box (None if undelivered), the hard box (None unless Complete Information and
            Within Sandbox passed) and the total cost.
        """
        limit = query.budget
        if query.local_constraint is None or limit is None or not query.has_labels:
            raise ValueError("the query hides its constraints (test split): it cannot be scored locally")
        if not plan:
            return PlanVerdict(None, None, None)
        try:
            days = PlanDays(plan, query.days)
        except Unscorable as exc:
            return PlanVerdict({key: _could_not_check(exc) for key in COMMONSENSE_KEYS}, None, None)
        lookups = PlanLookups(self._sandbox, self._city_tables, self._city_states, exact_names=self.exact_names)
        context = _Plan(query, query.local_constraint, days, lookups)
        commonsense = {key: self._checked(getattr(self, key), context) for key in COMMONSENSE_KEYS}
        if not (commonsense["is_not_absent"][0] and commonsense["is_valid_information_in_sandbox"][0]):
            return PlanVerdict(commonsense, None, None)
        total: int | float | None = None
        try:
            total = self.total_cost(context)
            budget: Result = (bool(total <= limit), None)
        except Unscorable as exc:
            budget = _could_not_check(exc)
        hard = {key: self._checked(getattr(self, key), context) for key in HARD_KEYS[:-1]}
        hard["valid_cost"] = budget
        return PlanVerdict(commonsense, hard, total)

    @staticmethod
    def _checked(check: Callable[[_Plan], Result], context: _Plan) -> Result:
        try:
            return check(context)
        except Unscorable as exc:
            return _could_not_check(exc)

    # ---- commonsense constraints (docs/fidelity/travelplanner.md §7.2)
    # -------------------------------------------------------------

    def is_valid_information_in_sandbox(self, p: _Plan) -> Result:
        for i in range(len(p.days)):
            transportation = p.days.field(i, "transportation")
            if present(transportation):
                problem = self._leg_problem(p, transportation, i)
                if problem:
                    return False, problem
            for meal in MEALS:
                value = p.days.optional(i, meal)
                if present(value) and not p.lookups.restaurants(value):
                    return False, f"The {meal} in day {i + 1} is invalid in the sandbox."
            attraction = p.days.optional(i, "attraction")
            if present(attraction):
                for item in self.attraction_items(attraction):
                    if not p.lookups.attraction_exists(item):
                        return False, f"The attraction {item} in day {i + 1} is invalid in the sandbox."
            accommodation = p.days.optional(i, "accommodation")
            if present(accommodation) and not p.lookups.accommodations(accommodation):
                return False, f"The accommodation in day {i + 1} is invalid in the sandbox."
        return True, None

    def _leg_problem(self, p: _Plan, transportation: str, i: int) -> str | None:
        origin, destination = _leg_cities(p, transportation, i)  # official: computed before the mode test
        kind = self.leg_kind(transportation)
        if kind is None:
            return self.unrecognised_leg(transportation, i)
        if kind == "flight":
            if origin is None or destination is None:
                raise Unscorable(f"The transportation {transportation} in day {i + 1} can not be parsed.")
            number = _flight_number(transportation, i)
            origin, destination = extract_before_parenthesis(origin), extract_before_parenthesis(destination)
            # official quirk, docs/fidelity/travelplanner.md §7.2 (1): number and cities must match, the date is never
            # checked
            if not any(f.origin == origin and f.destination == destination for f in p.lookups.flights(number)):
                return f"The flight number in day {i + 1} is invalid in the sandbox."
            return None
        if origin is None or destination is None:
            origin = destination = "-"  # official: unparsable road legs look up '-' to '-' and fail
        else:
            origin, destination = extract_before_parenthesis(origin), extract_before_parenthesis(destination)
        if p.lookups.leg_cost(origin, destination, kind) is None:
            return f"The {kind} in day {i + 1} is invalid in the sandbox."
        return None

    def is_not_absent(self, p: _Plan) -> Result:
        days, query = p.days, p.query
        filled = sum(1 for i in range(len(days)) if days.day(i) != {} and days.field(i, "current_city") != NOT_FILLED)
        if filled != query.days:
            return False, "Invalid Days"
        if not self._visiting_city_number_ok(p):
            return False, "Invalid City Number"
        tally = 0
        for i in range(len(days)):
            unit = days.day(i)
            for key in ("transportation", "breakfast", "lunch", "dinner", "attraction", "accommodation"):
                if key not in unit:
                    return False, f"No {key.capitalize()} Info."
            city = days.text(i, "current_city")
            if ("from " in city or "to " in city) and self.is_absent(unit["transportation"]):
                return False, f"No transportation in day {i + 1} is not allowed."
            if "from " not in city and " to " not in city and self.is_absent(unit["attraction"]):
                return False, f"No attaction in day {i + 1} is not allowed."  # sic, the official message
            if i != query.days - 1 and self.is_absent(unit["accommodation"]):
                return False, f"No accommodation in day {i + 1} is not allowed."
            if any(self.is_absent(unit[meal]) for meal in MEALS) and "from " not in city:
                return False, f"No meal in day {i + 1} is not allowed."
            tally += sum(1 for value in unit.values() if value and value != "-")
        if tally / (6 * query.days) < 0.5:
            return False, "The absent information is more than 50%."
        return True, None

    def _visiting_city_number_ok(self, p: _Plan) -> bool:
        cities: set[str] = set()
        for i in range(len(p.days)):
            city = p.days.text(i, "current_city")
            if "from" in city:
                origin, destination = (extract_before_parenthesis(c) for c in _leg(city, i))
                if i == 0 and origin != p.query.org:
                    return False
                cities.update((origin, destination))
            else:
                cities.add(extract_before_parenthesis(city))
        cities.discard(p.query.org)
        return len(cities) == p.query.visiting_city_number

    def is_valid_information_in_current_city(self, p: _Plan) -> Result:
        for i in range(len(p.days)):
            places = self.day_places(p.days.text(i, "current_city"), i)
            transportation = p.days.optional(i, "transportation")
            if present(transportation) and not all(place in transportation for place in places):
                return False, f"The transportation in day {i + 1} is invalid city choice."
            for meal in MEALS:
                value = p.days.optional(i, meal)
                if present(value) and not any(place in value for place in places):
                    return False, f"The {meal} in day {i + 1} is invalid city choice."
            attraction = p.days.optional(i, "attraction")
            if present(attraction):
                for item in self.attraction_items(attraction):
                    if not any(place in item for place in places):
                        return False, f"The attraction in day {i + 1} is invalid city choice."
            accommodation = p.days.optional(i, "accommodation")
            if present(accommodation):
                if not places:
                    raise Unscorable(f"day {i + 1} current_city is empty")  # official: IndexError on L[-1]
                if places[-1] not in accommodation:
                    return False, f"The accommodation in day {i + 1} is invalid city choice."
        return True, None

    def is_reasonable_visiting_city(self, p: _Plan) -> Result:
        route: list[str] = []
        for i in range(len(p.days)):
            city = p.days.text(i, "current_city")
            if "from" in city:
                origin, destination = (extract_before_parenthesis(c) for c in _leg(city, i))
                if i == 0 and origin != p.query.org:
                    return False, f"The first day's city should be {p.query.org}."
                route += [origin, destination]
            else:
                route.append(extract_before_parenthesis(city))
        if route[0] != route[-1]:
            return False, "The trip should be a closed circle."
        if not is_valid_city_sequence(route):
            return False, "The city sequence is invalid."
        for position, city in enumerate(route):
            problem = self.route_city_problem(p.query, city, inside=0 < position < len(route) - 1)
            if problem:
                return False, problem
        return True, None

    def is_valid_restaurants(self, p: _Plan) -> Result:
        seen: set[str] = set()
        for i in range(len(p.days)):
            for meal in MEALS:
                value = p.days.optional(i, meal)
                if not present(value):
                    continue
                if value in seen:
                    detail = f" {value}" if meal == "lunch" else ""  # the official lunch message names it
                    return False, f"The restaurant in day {i + 1} {meal}{detail} is repeated."
                seen.add(value)
        return True, None

    def is_valid_attractions(self, p: _Plan) -> Result:
        seen: set[str] = set()
        for i in range(len(p.days)):
            attraction = p.days.optional(i, "attraction")
            if not present(attraction):
                continue
            for item in self.attraction_items(attraction):
                if item in seen:
                    return False, f"The attraction '{item}' in day {i + 1} is repeated."
                seen.add(item)
        return True, None

    def is_valid_transportation(self, p: _Plan) -> Result:
        if not present(p.days.field(0, "transportation")):
            return False, "The transportation in day 1 should not be empty."
        modes = set()
        for i in range(len(p.days)):
            value = p.days.field(i, "transportation")
            if present(value):
                modes.add(self.conflict_mode(value))
        # Taxi with Flight is allowed (docs/fidelity/travelplanner.md §7.2 (7))
        if {"Self-driving", "Flight"} <= modes or {"Taxi", "Self-driving"} <= modes:
            return False, "The transportation is conflicting."
        return True, None

    def is_valid_accommodation(self, p: _Plan) -> Result:
        if any("accommodation" not in p.days.day(i) for i in range(len(p.days))):
            return False, "No Accommodation Info."
        stays = [p.days.field(i, "accommodation") for i in range(len(p.days))]
        for value, nights in count_consecutive_values(stays):
            if self.is_absent(value):
                continue
            if value is None:  # official: TypeError inside get_valid_name_city (docs/fidelity/travelplanner.md §7.6)
                raise Unscorable("an accommodation is null")
            row = self.minimum_nights_row(p.lookups.accommodations(value))
            if row is not None and nights < row.minimum_nights:
                return False, f"The accommodation {value} do not obey the minumum nights rule."
        return True, None

    # ---- total cost and hard constraints (docs/fidelity/travelplanner.md §7.3)
    # -----------------------------------------------------

    def total_cost(self, p: _Plan) -> int | float:
        """The official total cost of the plan for `people_number` travellers."""
        people = p.query.people_number or 0
        total: int | float = 0
        for i in range(len(p.days)):
            transportation = p.days.field(i, "transportation")
            if present(transportation):
                total += self._leg_cost(p, transportation, i, people)
            for meal in MEALS:
                value = p.days.field(i, meal)
                if present(value):
                    restaurants = p.lookups.restaurants(value)
                    total += restaurants[0].average_cost * people if restaurants else 0
            # official quirk, docs/fidelity/travelplanner.md §7.3: a stay is charged on every day it is listed, the last
            # day included
            for stay in self._stays(p, i):
                if stay.maximum_occupancy <= 0:
                    raise Unscorable(f"day {i + 1} accommodation has maximum occupancy {stay.maximum_occupancy}")
                total += stay.price * math.ceil(people / stay.maximum_occupancy)
        return total

    def _leg_cost(self, p: _Plan, transportation: str, i: int, people: int) -> int | float:
        origin, destination = _leg_cities(p, transportation, i)
        kind = self.leg_kind(transportation)
        if origin is None or destination is None or kind is None:
            return 0
        if kind == "flight":
            # official quirk, docs/fidelity/travelplanner.md §7.3: the first row with that number, whatever its route or
            # date
            flights = p.lookups.flights(_flight_number(transportation, i))
            return flights[0].price * people if flights else 0
        cost = p.lookups.leg_cost(origin, destination, kind)
        if cost is None:  # official: TypeError (None * int); unreachable after the sandbox check
            raise Unscorable(f"the {kind} leg of day {i + 1} has no cost in the sandbox")
        return cost * math.ceil(people / (5 if kind == "self-driving" else 4))

    def _stays(self, p: _Plan, i: int) -> list[Accommodation]:
        """The first matching accommodation row of day `i`, as a 0- or 1-element list."""
        value = p.days.field(i, "accommodation")
        if not present(value):
            return []
        rows = p.lookups.accommodations(value)
        return list(rows[:1])

    def _any_stay(self, p: _Plan, violates: Callable[[Accommodation], bool]) -> bool:
        """Whether the accommodation of some day (its first matching row) violates a rule."""
        return any(violates(stay) for i in range(len(p.days)) for stay in self._stays(p, i))

    def valid_cuisine(self, p: _Plan) -> Result:
        wanted = p.rules.cuisine
        if not wanted:
            return None, None
        found: set[str] = set()
        for i in range(len(p.days)):
            for meal in MEALS:
                value = p.days.optional(i, meal)
                if not present(value):
                    continue
                if p.lookups.name_city(value)[1] == p.query.org:
                    if self.origin_meal_ends_day():
                        break
                    continue
                restaurants = p.lookups.restaurants(value)
                if restaurants:
                    found.update(c for c in wanted if c in restaurants[0].cuisines)
        if len(found) == len(wanted):
            return True, None
        missing = next((c for c in wanted if c not in found), wanted[0])
        return False, f"The cuisine {missing} is not satisfied."

    def valid_room_rule(self, p: _Plan) -> Result:
        rule = p.rules.house_rule
        if rule is None:
            return None, None
        if self._any_stay(p, lambda stay: FORBIDDING_RULE[rule] in stay.house_rules):
            return False, f"The house rule should be {rule}."
        return True, None

    def valid_transportation(self, p: _Plan) -> Result:
        rule = p.rules.transportation
        if rule is None:
            return None, None
        for i in range(len(p.days)):
            value = p.days.field(i, "transportation")
            if present(value) and self.breaks_transport_rule(value, rule):
                return False, f"The transportation should not be {rule}."
        return True, None

    def valid_room_type(self, p: _Plan) -> Result:
        room_type = p.rules.room_type
        if room_type is None:
            return None, None
        if self._any_stay(p, lambda stay: not ROOM_TYPE_OK[room_type](stay.room_type)):
            return False, f"The room type should be {room_type}."
        return True, None


def _leg(text: str, i: int) -> tuple[str, str]:
    """`(A, B)` of a current_city containing `from`; official: TypeError when unparsable (docs/fidelity/travelplanner.md
    §7.6)."""
    origin, destination = extract_from_to(text)
    if origin is None or destination is None:
        raise Unscorable(f"day {i + 1} current_city {text!r} has 'from' but no parsable 'from A to B'")
    return origin, destination


def _leg_cities(p: _Plan, transportation: str, i: int) -> tuple[str, str] | tuple[None, None]:
    """`(A, B)` from the transportation text, else from current_city (docs/fidelity/travelplanner.md §7.2 (1), §7.3)."""
    origin, destination = extract_from_to(transportation)
    if origin is None or destination is None:
        return extract_from_to(p.days.text(i, "current_city"))
    return origin, destination


def _flight_number(transportation: str, i: int) -> str:
    number = flight_number(transportation)
    if number is None:  # official: IndexError (issue #23, docs/fidelity/travelplanner.md §7.6)
        raise Unscorable(f"day {i + 1} transportation lacks the exact text 'Flight Number: '")
    return number
