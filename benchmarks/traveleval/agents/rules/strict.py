"""The official `core/utils/baseline_constraints.py` planner (its plans file: `plans_our-method-strict-1_matched.json`),
rebuilt from its rules (docs/fidelity/traveleval.md §9). It keeps the constraints first: preferred attractions by
price (dearest first), clustered into days; the cheapest legs of the allowed modes; the cheapest wanted hotel; the
wanted cuisines' cheapest restaurants near the sights, then the cheapest within 15 km, given to the days by a
minimum-distance assignment; each day's sights in opening-hour order with random visit lengths, meals put in when a
visit ends near noon or six. A plan over budget is made again without the hotel wishes, then without the transport
ones, when those made it dear.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from benchmarks.traveleval.agents.rules.common import (
    Itinerary,
    Leg,
    Trip,
    activity,
    allowed_modes,
    assignment,
    candidate_attractions,
    clock,
    cluster_attractions,
    days_of_clusters,
    ending,
    hotel_offer,
    hours,
    legs_between,
    move,
    plan_json,
    preferred_hotels,
    restaurants_by_price,
    trip_of,
)
from benchmarks.traveleval.evaluation.distance import haversine_km
from benchmarks.traveleval.sandbox.sandbox import Attraction, Hotel, Restaurant, Sandbox

Point = tuple[float, float]
HOTEL_NIGHT_LIMIT = 30
"""RMB per person and night above which an over-budget plan drops the hotel wishes."""
FARE_LIMIT = 300
"""RMB per person and leg above which an over-budget plan drops the transport wishes (the official tests 400, then
300: the same as 300)."""


def plan(sandbox: Sandbox, query: dict[str, Any], seed: int) -> dict[str, Any] | str:
    """The plan for one query, or why there is none."""
    trip = trip_of(query)
    wanted = trip.wanted["accommodations"]
    if "家庭房" in wanted:
        wanted.append("亲子主题房")
    elif "亲子主题房" in wanted:
        wanted.append("家庭房")
    rng = random.Random(f"{seed}\x1f{trip.uid}")
    while True:
        made = _attempt(sandbox, trip, rng)
        if isinstance(made, str) or made["itinerary"]["summary"]["is_within_budget"]:
            return made
        costs, nights = made["itinerary"]["cost_breakdown"], max(trip.days - 1, 1)
        if trip.wanted["accommodations"] and costs["accommodation"] / trip.people / nights > HOTEL_NIGHT_LIMIT:
            trip.wanted["accommodations"] = []
        elif ((trip.wanted["transportation"] or trip.excluded["transportation"])
              and costs["intercity_transportation"] / trip.people / 2 > FARE_LIMIT):
            trip.wanted["transportation"], trip.excluded["transportation"] = [], []
        else:
            return made


def _attempt(sandbox: Sandbox, trip: Trip, rng: random.Random) -> dict[str, Any] | str:
    chosen = candidate_attractions(sandbox, trip, preferred_by="price")
    daily = days_of_clusters(cluster_attractions(chosen, trip), trip, rng.shuffle)
    legs = _legs(sandbox, trip)
    if legs is None:
        return f"no allowed intercity leg between {trip.start} and {trip.target}"
    out, back = legs
    arrive = sandbox.poi_position(trip.target, out.destination)
    leave = sandbox.poi_position(trip.target, back.origin)
    points = [(a.lat, a.lon) for a in chosen] + [p for p in (arrive, leave) if p is not None]
    stay = _hotel(sandbox, trip)
    if stay is None:
        return f"no hotel in {trip.target} with rooms for the party"
    hotel, rooms = stay
    lodge: Point = (hotel.lat, hotel.lon)
    per_day = _restaurants_by_day(daily, _restaurants(sandbox, trip, out, back, points), out, back, trip)
    days = []
    for day in range(1, trip.days + 1):
        morning = (arrive or lodge) if day == 1 else lodge
        night = (leave or lodge) if day == trip.days else lodge
        begin = out.end if day == 1 else 7.0
        finish = back.begin if day == trip.days else 30.0
        activities, (at, mode, minutes, fare) = _itinerary(trip, daily[day], _meal_times(trip, day, per_day[day]),
                                                           morning, night, begin, finish, rng)
        close = clock(at + 2) if at < 8 else "00:00"  # official: 2 h after an arrival before 08:00, else 24:00
        days.append((activities, ending(trip, day, back, hotel, at, close, mode, minutes, fare)))
    return plan_json(Itinerary(trip, out, back, hotel, rooms, days))


def _legs(sandbox: Sandbox, trip: Trip) -> tuple[Leg, Leg] | None:
    """The cheapest leg out (not an overnight one arriving after 08:30, nor one of 30 h or more) and back."""
    legs = legs_between(sandbox, trip, allowed_modes(trip, ("高铁", "动车")))
    outs = [leg for leg in legs if leg.origin.startswith(trip.start)
            and not ((leg.end < leg.begin and leg.end > 8.5) or leg.duration >= 30)]
    backs = [leg for leg in legs if leg.origin.startswith(trip.target)]
    if not outs or not backs:
        return None
    return min(outs, key=lambda leg: leg.cost), min(backs, key=lambda leg: leg.cost)


def _hotel(sandbox: Sandbox, trip: Trip) -> tuple[Hotel, list[dict[str, Any]]] | None:
    """The cheapest wanted hotel with rooms for the party, else the cheapest not excluded."""
    nights = max(trip.days - 1, 1)
    for use_wanted in (True, False):
        offers = [(offer[0], hotel, offer[1]) for hotel in preferred_hotels(sandbox, trip, use_wanted=use_wanted)
                  if (offer := hotel_offer(hotel, trip.rooms, nights))]
        if offers:
            _, hotel, rooms = min(offers, key=lambda item: item[0])
            return hotel, rooms
    return None


def _meal_counts(trip: Trip, out: Leg, back: Leg) -> dict[int, int]:
    """Meals a day: 2, day 1 by the arrival (2 before 11:00, 1 before 17:00), the last by the departure (1 from
    13:00, 2 from 19:00)."""
    counts = dict.fromkeys(range(2, trip.days), 2)
    counts[1] = 2 if out.end < 11 else 1 if out.end < 17 else 0
    counts[trip.days] = 0 if back.begin < 13 else 1 if back.begin < 19 else 2
    return counts


def _restaurants(sandbox: Sandbox, trip: Trip, out: Leg, back: Leg, points: Sequence[Point]) -> list[Restaurant]:
    """For each wanted cuisine its cheapest restaurant, taken once within 20 km of the sights' centre (the radius
    growing by 2 km to 50); then the cheapest others within 15 km until there is one per meal."""
    needed = sum(_meal_counts(trip, out, back).values())
    if not points:
        return []
    centre = (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))
    offered = restaurants_by_price(sandbox, trip, use_wanted=True)
    chosen: list[Restaurant] = []
    missing, radius = list(trip.wanted["diet"]), 20
    while missing and radius <= 50:
        for cuisine in missing:
            first = next((r for r in offered if r.cuisine == cuisine), None)
            if first is not None and haversine_km((first.lat, first.lon), centre) <= radius:
                chosen.append(first)
        missing = [c for c in missing if all(r.cuisine != c for r in chosen)]
        radius += 2
    needed -= len(chosen)
    for r in restaurants_by_price(sandbox, trip, use_wanted=False):
        if r not in chosen and haversine_km((r.lat, r.lon), centre) <= 15:
            chosen.append(r)
            needed -= 1
        if needed <= 0:
            break
    return chosen


def _restaurants_by_day(daily: dict[int, list[Attraction]], chosen: list[Restaurant], out: Leg, back: Leg,
                        trip: Trip) -> dict[int, list[Restaurant]]:
    """Restaurants to meal slots by least total distance to the day's sights (one slot per meal a day)."""
    slots = [day for day, count in sorted(_meal_counts(trip, out, back).items()) for _ in range(count)]
    cost = [[sum(haversine_km((a.lat, a.lon), (r.lat, r.lon)) for a in daily[day]) for r in chosen] for day in slots]
    per_day: dict[int, list[Restaurant]] = {day: [] for day in daily}
    for row, col in assignment(cost):
        per_day[slots[row]].append(chosen[col])
    return per_day


def _meal_times(trip: Trip, day: int, restaurants: list[Restaurant]) -> dict[str, Restaurant]:
    """One restaurant is lunch on the last day, dinner otherwise; two are lunch and dinner."""
    if not restaurants:
        return {}
    if len(restaurants) == 1:
        return {"lunch" if day == trip.days else "dinner": restaurants[0]}
    return {"lunch": restaurants[0], "dinner": restaurants[1]}


def _itinerary(trip: Trip, sights: list[Attraction], meals: dict[str, Restaurant], morning: Point, night: Point,
               begin: float, finish: float, rng: random.Random
               ) -> tuple[list[dict[str, Any]], tuple[float, str, float, float]]:
    """The sights by opening then closing hour, each for a random 0.5 h over its minimum to its maximum, skipped
    when it would end after closing or after the day's end; after a visit ending 11:00-13:00 lunch (or dinner if
    nearer), 17:00-19:00 dinner, each 0.5-1 h. Returns the activities and the way to the night's place."""
    at, here = begin, morning
    lunch, dinner = meals.get("lunch"), meals.get("dinner")
    activities: list[dict[str, Any]] = []
    for sight in sorted(sights, key=lambda s: (hours(s.opentime), hours(s.endtime))):
        mode, minutes, fare = move(here, (sight.lat, sight.lon), trip.people)
        opens, closes = hours(sight.opentime), hours(sight.endtime)
        all_day = opens == 0 and closes == 24
        start = at + minutes / 60 if all_day else max(at + minutes / 60, opens)
        end = start + rng.uniform(sight.recommendmintime + 0.5, sight.recommendmaxtime)
        if end > finish or (not all_day and end > closes):
            continue
        activities.append(activity("attraction", sight, start, end, mode, minutes, fare, trip.people))
        at, here = end, (sight.lat, sight.lon)
        meal = None
        if 11 < at < 13 and lunch is not None:
            meal = lunch
            if dinner is not None and _minutes(dinner, here, trip) < _minutes(lunch, here, trip):
                lunch, dinner = dinner, lunch
                meal = lunch
        elif 17 < at < 19 and dinner is not None:
            meal = dinner
        if meal is not None:  # official quirk: a meal is not struck off, so a second visit ending in time repeats it
            mode, minutes, fare = move((meal.lat, meal.lon), here, trip.people)
            start = at + minutes / 60
            at = start + rng.uniform(0.5, 1.0)
            activities.append(activity("meal", meal, start, at, mode, minutes, fare, trip.people))
            here = (meal.lat, meal.lon)
    mode, minutes, fare = move(here, night, trip.people)
    return activities, (at + minutes / 60, mode, minutes, fare)


def _minutes(restaurant: Restaurant, here: Point, trip: Trip) -> float:
    return move((restaurant.lat, restaurant.lon), here, trip.people)[1]
