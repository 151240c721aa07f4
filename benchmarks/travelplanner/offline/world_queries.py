"""Queries of the demo world: element selection and budgets as in the official `utils/` (docs/fidelity/travelplanner.md
§9), feasibility checked by building a plan, and query text in the official phrasing."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from datetime import date as Date
from datetime import timedelta
from typing import Any

from benchmarks.travelplanner.dataset import HOUSE_RULES, ROOM_TYPES
from benchmarks.travelplanner.evaluation.lookups import Accommodation
from benchmarks.travelplanner.evaluation.official import FORBIDDING_RULE, ROOM_TYPE_OK
from benchmarks.travelplanner.offline.notebook_reader import Collected
from benchmarks.travelplanner.offline.oracle import plan_from_collected, simulate_agenda
from benchmarks.travelplanner.offline.plan_search import CityOptions, Drive, Eatery, FlightOption, stay_ok
from benchmarks.travelplanner.offline.world_tables import DAYS_CELLS, LEVELS, QUERY_CUISINES, Tables
from benchmarks.travelplanner.query_facts import QueryFacts

FACTORS = {3: (2, 3, 9), 5: (3, 5, 15), 7: (4, 7, 21)}
"""(flights, hotel nights, meals) multipliers of `budget_calc` per trip length (docs/fidelity/travelplanner.md §9)."""
HARD_WEIGHTS = {"house rule": 0.3, "cuisine": 0.1, "room type": 0.3, "transportation": 0.3}
MAX_ATTEMPTS = 500
ORACLE_STEP_LIMIT = 30
"""The two-stage agent's step limit (docs/fidelity/travelplanner.md §4.4)."""


class Infeasible(ValueError):
    """The official generator's ValueError: the sampled query is discarded and another one drawn."""


def make_queries(tables: Tables, rng: random.Random,
                 per_cell: int) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """`per_cell` feasible queries for each (level, days) cell, level-major like the official splits.

    Returns:
        The query records (Hugging Face layout, no reference information) and, per query, the visited cities
        of a route on which a passing plan exists (what the dataset's annotated routes are).
    """
    records: list[dict[str, Any]] = []
    routes: list[list[str]] = []
    for level in LEVELS:
        for days in DAYS_CELLS:
            made = 0
            for _ in range(MAX_ATTEMPTS):
                if made == per_cell:
                    break
                try:
                    record, route = _sample(tables, rng, level, days)
                except Infeasible:
                    continue
                if record not in records:
                    records.append(record)
                    routes.append(route)
                    made += 1
            else:
                raise RuntimeError(f"demo world: no feasible {level} {days}-day query in {MAX_ATTEMPTS} draws")
    return records, routes


def _sample(tables: Tables, rng: random.Random, level: str, days: int) -> tuple[dict[str, Any], list[str]]:
    start = rng.randint(1, 32 - days)
    dates = [(Date(2022, 3, start) + timedelta(d)).isoformat() for d in range(days)]
    states = tables.state_cities()
    city_state = {c: s for s, cities in states.items() for c in cities}
    org = rng.choice(sorted(city_state))
    if days == 3:
        dest = rng.choice(sorted(c for c in city_state if city_state[c] != city_state[org]))
        dest_cities: tuple[str, ...] = (dest,)
    else:
        dest = rng.choice(sorted(s for s in states if s != city_state[org] and len(states[s]) > 3))
        dest_cities = states[dest]
    people, constraint = 1, {"house rule": None, "cuisine": None, "room type": None, "transportation": None}
    if level != "easy":
        people = 2 if rng.random() < 0.5 else rng.randint(3, 8)
        keys = ["house rule", "cuisine", "room type"]
        chosen = [rng.choice(keys)] if level == "medium" else _weighted_sample(rng, HARD_WEIGHTS, 3)
        for key in chosen:
            constraint[key] = _constraint_value(rng, key, people, level)
    base = budget_calc(tables, org, dest_cities, dates, people, constraint if level == "hard" else None)
    avg, low, high = base["average"], base["lowest"], base["highest"]
    core = {3: (avg + low) / 2, 5: avg, 7: round_to_hundreds((avg + high) / 2)}[days]
    factor = {"easy": 1.0, "medium": people * 0.75, "hard": people * 0.5}[level]
    budget = round_to_hundreds(core * factor)
    record = {"org": org, "dest": dest, "days": days, "visiting_city_number": {3: 1, 5: 2, 7: 3}[days],
              "date": repr(dates), "people_number": people, "local_constraint": repr(constraint), "budget": budget,
              "query": query_text(rng, org, dest, days, dates, people, budget, constraint), "level": level}
    route = feasible_route(tables, record, constraint, dates)
    if route is None:
        raise Infeasible(f"no plan within ${budget}")
    return record, route


def _weighted_sample(rng: random.Random, weights: dict[str, float], k: int) -> list[str]:
    pool, chosen = dict(weights), []
    for _ in range(k):
        key = rng.choices(list(pool), weights=list(pool.values()))[0]
        chosen.append(key)
        del pool[key]
    return chosen


def _constraint_value(rng: random.Random, key: str, people: int, level: str) -> Any:
    if key == "house rule":
        return rng.choice(HOUSE_RULES)
    if key == "cuisine":
        return rng.sample(QUERY_CUISINES, 2 if level == "medium" else 4)
    if key == "room type":
        return rng.choice(ROOM_TYPES if people <= 2 else ("private room", "entire room"))
    return rng.choice(("no flight", "no self-driving"))


def round_to_hundreds(x: float) -> int:
    """`round(x / 100) * 100` with Python's banker's rounding, as the official code (docs/fidelity/travelplanner.md
    §9)."""
    return int(round(x / 100) * 100)


def budget_calc(tables: Tables, org: str, dest_cities: Sequence[str], dates: list[str], people: int,
                constraint: dict[str, Any] | None) -> dict[str, float]:
    """The paper's budget heuristic (docs/fidelity/travelplanner.md §9): lowest / highest / average of flights, hotels
    and meals.

    Raises:
        Infeasible: a hard constraint leaves too few options (the official ValueError).
    """
    days, city_grain = len(dates), len(dest_cities) == 1
    flights = [r for r in tables.flights if r[6] == org and r[7] in dest_cities and (city_grain or r[5] in dates)]
    hotels = [r for r in tables.accommodations if r[7] in dest_cities and r[5] and r[6] >= people]
    meals = [r for r in tables.restaurants if r[1] in dest_cities]
    if constraint:
        first_day = [r for r in flights if r[5] == dates[0]]
        if constraint["transportation"] == "no self-driving" and len(first_day) < (2 if city_grain else 10):
            raise Infeasible("too few flights")
        if constraint["transportation"] == "no flight" and (len(first_day) < 2 or first_day[0][8] > 800):
            raise Infeasible("Impossible")
        if constraint["room type"]:
            hotels = [r for r in hotels if ROOM_TYPE_OK[constraint["room type"]](r[1])]
        if constraint["house rule"]:
            hotels = [r for r in hotels if FORBIDDING_RULE[constraint["house rule"]] not in r[5]]
        if constraint["cuisine"]:
            meals = [r for r in meals if any(c in r[2] for c in constraint["cuisine"])]
        if len(hotels) < days or len(meals) < days:
            raise Infeasible("too few hotels or restaurants")
    if not flights or not hotels or not meals:
        raise Infeasible("no flights, hotels or restaurants")
    f, h, m = FACTORS[days]
    columns = ([r[1] for r in flights], [r[2] for r in hotels], [r[3] for r in meals])
    pick: dict[str, Callable[[list[float]], float]] = {"lowest": min, "highest": max, "average": statistics.fmean}
    return {mode: f * fn(columns[0]) + h * fn(columns[1]) + m * fn(columns[2]) for mode, fn in pick.items()}


def city_options(tables: Tables, city: str) -> CityOptions:
    """What the tools show for a city (rows without house rules are dropped, docs/fidelity/travelplanner.md §1.1)."""
    return CityOptions(
        city,
        tuple(Accommodation(r[0], r[2], r[1], r[5], r[3], r[6])
              for r in tables.accommodations if r[7] == city and r[5]),
        tuple(Eatery(r[0], r[3], r[2]) for r in tables.restaurants if r[1] == city),
        tuple(r[0] for r in tables.attractions if r[6] == city))


def _drive(tables: Tables, a: str, b: str, mode: str) -> Drive | None:
    row = next((r for r in tables.distances if r[0] == a and r[1] == b), None)
    if row is None or not row[3] or "day" in row[3]:
        return None
    km = float(row[4].replace("km", "").replace(",", ""))
    return Drive(int(km * 0.05) if mode == "self-driving" else int(km), row[3], row[4])


def feasible_route(tables: Tables, record: dict[str, Any], constraint: dict[str, Any],
                   dates: list[str]) -> list[str] | None:
    """The route's cities when the oracle, run on this world, would collect a plan passing every check within
    budget; None when it would not.

    The oracle's own agenda is driven by the world's tables (what each search would return), so the check also
    covers the agent's 30-step limit (docs/fidelity/travelplanner.md §4.4).
    """
    facts = QueryFacts(record["org"], record["dest"], record["days"], tuple(dates), record["people_number"],
                       record["budget"], constraint["house rule"], tuple(constraint["cuisine"] or ()),
                       constraint["room type"], constraint["transportation"])
    request, found = facts.request(), Collected()
    states = tables.state_cities()

    def judge(action: str, rule: str) -> object:
        kind, args = action.split("[", 1)[0], action[action.index("[") + 1:-1].split(", ")
        if kind == "CitySearch":
            return repr(list(states.get(args[0], ())))
        if kind == "FlightSearch":
            flights = [(a, b, d, FlightOption(r[0], r[1], r[2], r[3])) for r in tables.flights
                       if (a := r[6]) == args[0] and (b := r[7]) == args[1] and (d := r[5]) == args[2]]
            found.flights += flights
            return bool(flights)
        if kind == "GoogleDistanceMatrix":
            drive = _drive(tables, args[0], args[1], args[2])
            if drive is not None:
                found.drives[(args[0], args[1], args[2])] = drive
            return drive is not None
        city = city_options(tables, args[0])
        part = {"AccommodationSearch": "stays", "AttractionSearch": "attractions", "RestaurantSearch": "eateries"}[kind]
        items = getattr(city, part)
        kept = any(stay_ok(s, request) for s in city.stays) if rule == "stay" else bool(items)
        if kept:
            found.add(args[0], part, items)
        return kept

    _, steps = simulate_agenda(facts, judge)
    result = plan_from_collected(facts, found)
    if steps > ORACLE_STEP_LIMIT or not result.feasible:
        return None
    return list(dict.fromkeys(day["current_city"] for day in result.plan[1::2]))


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"March {day}{suffix}"


def query_text(rng: random.Random, org: str, dest: str, days: int, dates: list[str], people: int, budget: int,
               constraint: dict[str, Any]) -> str:
    """The request in the official phrasing (a few templates of the kind the official queries use)."""
    first, last = _ordinal(int(dates[0][-2:])), _ordinal(int(dates[-1][-2:]))
    who = "one person" if people == 1 else ("two people" if people == 2 else f"a group of {people}")
    money = f"${budget:,}"
    if days == 3:
        text = rng.choice((
            f"Please help me plan a trip from {org} to {dest} spanning 3 days from {first} to {last}, 2022. "
            f"The travel should be planned for {who} with a budget of {money}.",
            f"Could you create a 3-day travel plan for {who}, departing from {org} and heading to {dest} from "
            f"{first} to {last}, 2022? The budget is set at {money}."))
    else:
        count = {5: 2, 7: 3}[days]
        text = rng.choice((
            f"Can you create a {days}-day travel plan for {who} departing from {org} and visiting {count} cities "
            f"in {dest}? The travel dates are from {first} to {last}, 2022. The trip's budget is set at {money}.",
            f"Please help me craft a {days}-day travel itinerary for {who}, starting in {org} and visiting "
            f"{count} cities in {dest} from {first} to {last}, 2022. We have a budget of {money}."))
    if constraint["house rule"]:
        text += f" We require accommodations that allow {constraint['house rule']}."
    if constraint["room type"]:
        text += " We would prefer " + {"shared room": "shared rooms", "not shared room": "rooms that are not shared",
                                       "private room": "private rooms", "entire room": "entire rooms"}[
            constraint["room type"]] + " for our stay."
    if constraint["cuisine"]:
        names = constraint["cuisine"]
        text += f" We would like to try {', '.join(names[:-1])} and {names[-1]} cuisines."
    if constraint["transportation"] == "no flight":
        text += " Please note, we cannot take any flights on this trip."
    elif constraint["transportation"] == "no self-driving":
        text += " We will not be self-driving on this trip."
    return text

