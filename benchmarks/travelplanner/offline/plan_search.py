"""A constraint-aware plan builder over structured options: the "competent planner" of the offline models.

`offline:oracle` parses the notebook in the Planner prompt into these options and calls `build_plan`; the demo
world generator runs the oracle's agenda on its own tables to prove every query it writes is feasible. The plan
is in the submission format (docs/fidelity/travelplanner.md §6.4) and is built to pass the official checks
(docs/fidelity/travelplanner.md §7.2, §7.3):

* route org → c1 (→ c2 → c3) → org, one leg on every odd day, two nights in each visited city;
* legs: self-driving on every leg, or flights (cheapest) with taxis where there is no flight — taxi and flight
  may mix, self-driving and flight may not, docs/fidelity/travelplanner.md §7.2 (7) — whichever leaves fewer legs open,
  then is cheaper, within the transportation constraint;
* per city the cheapest accommodation that satisfies room type, house rule and minimum nights;
* meals: every restaurant at most once (Diverse Restaurants); the required cuisines are covered first, by the
  cheapest restaurant serving each; optional travel-day meals are added only while the budget allows;
* one attraction per stay day, each written `Name, City;` (the trailing `;` makes the evaluator check it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# the evaluator's own tables, so a plan satisfies the constraints exactly as they are checked
# (docs/fidelity/travelplanner.md §7.3)
from benchmarks.travelplanner.evaluation.lookups import Accommodation
from benchmarks.travelplanner.evaluation.official import FORBIDDING_RULE, ROOM_TYPE_OK

NIGHTS_PER_CITY = 2


@dataclass(frozen=True, slots=True)
class FlightOption:
    """One row of a FlightSearch table (what a plan needs of it)."""

    number: str
    price: int
    dep_time: str
    arr_time: str


@dataclass(frozen=True, slots=True)
class Drive:
    """A GoogleDistanceMatrix answer that has a cost (docs/fidelity/travelplanner.md §3.2)."""

    cost: int
    duration: str
    distance: str


@dataclass(frozen=True, slots=True)
class Leg:
    """One leg of the route and what is known about getting there."""

    origin: str
    destination: str
    flights: tuple[FlightOption, ...] = ()
    self_driving: Drive | None = None
    taxi: Drive | None = None


@dataclass(frozen=True, slots=True)
class Eatery:
    """One restaurant row."""

    name: str
    cost: int
    cuisines: str


@dataclass(frozen=True, slots=True)
class CityOptions:
    """What was found for one city."""

    name: str
    stays: tuple[Accommodation, ...] = ()
    eateries: tuple[Eatery, ...] = ()
    attractions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Request:
    """What the planner needs from a query (a parsed query text, or the dataset record)."""

    org: str
    days: int
    people: int = 1
    budget: float | None = None
    house_rule: str | None = None
    cuisines: tuple[str, ...] = ()
    room_type: str | None = None
    transportation: str | None = None


@dataclass(slots=True)
class PlanResult:
    plan: list[dict[str, Any]]
    cost: float
    complete: bool
    """False when some mandatory item had no acceptable option (the plan then shows `-` there)."""
    problems: list[str] = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        """Complete and within budget: the plan should pass every official check."""
        return self.complete and not self.problems


def stay_ok(stay: Accommodation, request: Request) -> bool:
    """An accommodation the query accepts for a two-night stay."""
    if request.room_type in ROOM_TYPE_OK and not ROOM_TYPE_OK[request.room_type](stay.room_type):
        return False
    if request.house_rule in FORBIDDING_RULE and FORBIDDING_RULE[request.house_rule] in stay.house_rules:
        return False
    return stay.minimum_nights <= NIGHTS_PER_CITY


def stay_cost(stay: Accommodation, people: int) -> float:
    """One night for the group, as the evaluator charges it (docs/fidelity/travelplanner.md §7.3)."""
    return stay.price * math.ceil(people / max(stay.maximum_occupancy, 1))


def choose_stay(city: CityOptions, request: Request) -> Accommodation | None:
    """The cheapest acceptable accommodation of a city (first in file order on ties)."""
    usable = [s for s in city.stays if stay_ok(s, request)]
    return min(usable, key=lambda s: stay_cost(s, request.people), default=None)


def _legs_plan(legs: Sequence[Leg], request: Request) -> tuple[list[str | None], float]:
    """Transportation text per leg (None: no option) and its cost, over the allowed mode families."""
    people = request.people
    families: list[list[tuple[float, str] | None]] = []
    if request.transportation != "no self-driving":
        families.append([
            (leg.self_driving.cost * math.ceil(people / 5), _drive_text("Self-driving", leg, leg.self_driving))
            if leg.self_driving else None for leg in legs])
    air_or_taxi = []
    for leg in legs:
        options: list[tuple[float, str]] = []
        if request.transportation != "no flight" and leg.flights:
            best = min(leg.flights, key=lambda f: f.price)
            options.append((best.price * people, f"Flight Number: {best.number}, from {leg.origin} to "
                            f"{leg.destination}, Departure Time: {best.dep_time}, Arrival Time: {best.arr_time}"))
        if leg.taxi:
            options.append((leg.taxi.cost * math.ceil(people / 4), _drive_text("Taxi", leg, leg.taxi)))
        air_or_taxi.append(min(options, key=lambda o: o[0], default=None))
    families.append(air_or_taxi)

    def score(family: list[tuple[float, str] | None]) -> tuple[int, float]:
        return sum(o is None for o in family), sum(o[0] for o in family if o)

    best_family = min(families, key=score)
    return [o[1] if o else None for o in best_family], score(best_family)[1]


def _drive_text(mode: str, leg: Leg, drive: Drive) -> str:
    return (f"{mode}, from {leg.origin} to {leg.destination}, duration: {drive.duration}, "
            f"distance: {drive.distance}, cost: {drive.cost}")


def build_plan(request: Request, cities: Sequence[CityOptions], legs: Sequence[Leg]) -> PlanResult:
    """Build a day-by-day plan for the route org → cities... → org.

    Args:
        request: the query's parameters.
        cities: the visited cities in route order (1, 2 or 3 of them).
        legs: `len(cities) + 1` legs, org → cities[0] → ... → org.

    Returns:
        The plan (one dict per day, submission keys), its official total cost, and whether it is complete.
    """
    days, people = request.days, request.people
    transport, cost = _legs_plan(legs, request)
    complete = all(t is not None for t in transport)
    plan: list[dict[str, Any]] = []
    meal_slots: list[tuple[int, str, CityOptions, bool]] = []  # (day index, meal, city, mandatory)
    for d in range(days):
        travel = d % 2 == 0
        city = _city_of_day(cities, d, days)
        if travel:
            leg_i = d // 2
            leg = legs[leg_i]
            current = f"from {leg.origin} to {leg.destination}"
            transportation = transport[leg_i] or "-"
        else:
            current, transportation = city.name, "-"
        day = {"days": d + 1, "current_city": current, "transportation": transportation, "breakfast": "-",
               "attraction": "-", "lunch": "-", "dinner": "-", "accommodation": "-"}
        if d < days - 1:
            stay = choose_stay(city, request)
            if stay is None:
                complete = False
            else:
                day["accommodation"] = f"{stay.name}, {city.name}"
                cost += stay_cost(stay, people)
        meal_slots += [(d, meal, city, not travel) for meal in ("breakfast", "lunch", "dinner")]
        plan.append(day)
    cost, meals_complete, missing = _assign_meals(plan, meal_slots, request, cost)
    complete = complete and meals_complete
    used: set[tuple[str, str]] = set()
    for d, day in enumerate(plan):
        if d % 2 == 1:
            city = _city_of_day(cities, d, days)
            pick = next((a for a in city.attractions if (a, city.name) not in used), None)
            if pick is None:
                complete = False
            else:
                used.add((pick, city.name))
                day["attraction"] = f"{pick}, {city.name};"
    problems = [f"no {cuisine} restaurant" for cuisine in missing]
    if request.budget is not None and cost > request.budget:
        problems.append(f"cost {cost:g} over budget")
    return PlanResult(plan, cost, complete, problems)


def _city_of_day(cities: Sequence[CityOptions], d: int, days: int) -> CityOptions:
    """Where day d's meals and bed are: the arrival city, or on the last day the city being left."""
    return cities[d // 2] if d < days - 1 else cities[-1]


def _assign_meals(plan: list[dict[str, Any]], slots: list[tuple[int, str, CityOptions, bool]], request: Request,
                  cost: float) -> tuple[float, bool, list[str]]:
    """Fill mandatory meal slots (cuisines first, then cheapest), then optional ones while the budget allows.

    Returns the new total cost, whether every mandatory slot is filled, and the required cuisines no visited city
    serves.
    """
    used: set[tuple[str, str]] = set()
    people = request.people

    def take(slot: tuple[int, str, CityOptions, bool], eatery: Eatery) -> None:
        nonlocal cost
        d, meal, city, _ = slot
        plan[d][meal] = f"{eatery.name}, {city.name}"
        used.add((eatery.name, city.name))
        cost += eatery.cost * people

    mandatory = [s for s in slots if s[3]]
    free = list(mandatory)
    missing = []
    for cuisine in request.cuisines:
        candidates = [(e.cost, i, s, e) for i, s in enumerate(free) for e in s[2].eateries
                      if cuisine in e.cuisines and (e.name, s[2].name) not in used]
        if candidates:
            _, i, slot, eatery = min(candidates, key=lambda c: (c[0], c[1]))
            take(slot, eatery)
            free.pop(i)
        else:
            missing.append(cuisine)
    complete = True
    for slot in free:
        cheapest = _cheapest_unused(slot[2], used)
        if cheapest is None:
            complete = False
        else:
            take(slot, cheapest)
    for slot in (s for s in slots if not s[3]):
        cheapest = _cheapest_unused(slot[2], used)
        if cheapest is not None and (request.budget is None or cost + cheapest.cost * people <= request.budget):
            take(slot, cheapest)
    return cost, complete, missing


def _cheapest_unused(city: CityOptions, used: set[tuple[str, str]]) -> Eatery | None:
    return min((e for e in city.eateries if (e.name, city.name) not in used), key=lambda e: e.cost, default=None)


def city_ok(city: CityOptions, request: Request) -> bool:
    """A city the route can use: an acceptable accommodation, an attraction and a few restaurants."""
    return choose_stay(city, request) is not None and bool(city.attractions) and len(city.eateries) >= 3


def pick_cities(candidates: Sequence[CityOptions], request: Request, count: int) -> list[CityOptions]:
    """The route's cities: the first `count` usable candidates (in the order given).

    Falls back to unusable candidates when too few pass, so a plan is always delivered.
    """
    good = [c for c in candidates if city_ok(c, request)]
    rest = [c for c in candidates if c not in good]
    return (good + rest)[:count]


def leg_modes(request: Request) -> tuple[str, ...]:
    """What to look up for a leg, in order, stopping at the first usable answer.

    Self-driving is by far the cheapest mode (5 cents a km per car, docs/fidelity/travelplanner.md §3.2), so it comes
    first; a flight where the drive is impossible (a `day`-long or unknown route). Without self-driving: flights, then a
    taxi. A taxi leg may join flights but not self-driving (docs/fidelity/travelplanner.md §7.2 (7)); `build_plan` keeps
    the trip consistent.
    """
    if request.transportation == "no flight":
        return ("self-driving",)
    if request.transportation == "no self-driving":
        return ("flight", "taxi")
    return ("self-driving", "flight")


def taxi_from_drive(drive: Drive) -> Drive:
    """The taxi answer for a route whose self-driving answer is known: same row, cost = int(km)
    (docs/fidelity/travelplanner.md §3.2)."""
    km = float(drive.distance.replace("km", "").replace(",", "").strip() or 0)
    return Drive(int(km), drive.duration, drive.distance)
