"""The official `core/utils/baseline.py` planner (its plans file: `plans_our-method_matched.json`), rebuilt from its
rules (docs/fidelity/traveleval.md §9): preferred attractions by stars, clustered into days; the arrival and
departure stations nearest the first and last day's sights; the cheapest legs that leave time for them; meals
nearest the sights around lunch and dinner within a per-meal budget, swapped for wanted cuisines; the hotel nearest
the sights within what the budget leaves, else the cheapest nearby; then a timetable that spreads the day's hours
over its stops.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from benchmarks.traveleval.agents.rules.common import (
    Itinerary,
    Leg,
    Trip,
    activity,
    allowed_modes,
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
    shortest_order,
    trip_of,
)
from benchmarks.traveleval.evaluation.distance import haversine_km
from benchmarks.traveleval.sandbox.sandbox import Attraction, Hotel, Restaurant, Sandbox

Point = tuple[float, float]
Anchor = Attraction | Point
"""Where a meal is placed between: a sight of the day, or a station (a point, not one of the day's stops)."""
Meal = tuple[Anchor, Restaurant, Anchor]
UNLISTED = frozenset({"北京北站"})
"""The one station of the timetables missing from the planner's fixed list of stations (it never picks it)."""
DAILY_SPEND = ((100, 500, 25), (500, 100, 50), (1000, 5000, 100))
"""(low, high, share %): a daily budget per person (intercity fares off) in [low, high] prices meals at the mean of
the cheapest share of restaurants. Official quirk: the middle range is written (500, 100) and never matches."""


def _point(anchor: Anchor | Restaurant) -> Point:
    return anchor if isinstance(anchor, tuple) else (anchor.lat, anchor.lon)


def _centroid(points: Sequence[Point]) -> Point:
    return sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)


def plan(sandbox: Sandbox, query: dict[str, Any], seed: int) -> dict[str, Any] | str:
    """The plan for one query, or why there is none."""
    trip = trip_of(query)
    rng = random.Random(f"{seed}\x1f{trip.uid}")
    chosen = candidate_attractions(sandbox, trip, preferred_by="star")
    daily = {day: shortest_order(stops)
             for day, stops in days_of_clusters(cluster_attractions(chosen, trip), trip, rng.shuffle).items()}
    lodging = [_point(stop) for day in range(2, trip.days + 1) if daily[day]
               for stop in ([daily[day][0]] if day == trip.days else [daily[day][0], daily[day][-1]])]
    everywhere = lodging or [_point(a) for a in chosen]
    modes = allowed_modes(trip, ("高铁",))
    out_anchor = [_point(a) for a in daily[1]] or everywhere
    back_anchor = [_point(daily[trip.days][-1])] if daily[trip.days] else everywhere
    legs = legs_between(sandbox, trip, modes)
    arrive = _nearest_station(sandbox, trip, {leg.destination for leg in legs if leg.destination.startswith(
        trip.target)} - UNLISTED, out_anchor)
    leave = _nearest_station(sandbox, trip, {leg.origin for leg in legs if leg.origin.startswith(trip.target)}
                             - UNLISTED, back_anchor)
    if arrive is None or leave is None:
        return f"no {' or '.join(modes)} station in {trip.target} with a connection from {trip.start}"
    out = _outbound(trip, [leg for leg in legs if leg.destination == arrive[0]], daily[1])
    back = _return(trip, [leg for leg in legs if leg.origin == leave[0]], daily[trip.days])
    if out is None or back is None:
        return "no intercity leg to or from the chosen stations"
    meal_price = _meal_price(sandbox, trip, out.cost + back.cost)
    meals = _meals(sandbox, trip, daily, out, back, meal_price, arrive[1], leave[1])
    spent = ((out.cost + back.cost) + sum(a.price for a in chosen) + sum(r.price for day in meals.values()
                                                                        for _, r, _ in day.values())
             + sum(len(stops) + 3 for stops in daily.values()) * 5) * trip.people
    stay = _hotel(sandbox, trip, trip.budget - spent, _centroid(everywhere) if everywhere else arrive[1])
    if stay is None:
        return f"no hotel in {trip.target} with rooms for the party"
    hotel, rooms = stay
    days = [_day(trip, day, _stops(daily[day], meals.get(day, {})), daily[day], hotel, out, back, arrive[1],
                 leave[1]) for day in range(1, trip.days + 1)]
    return plan_json(Itinerary(trip, out, back, hotel, rooms, days))


def _nearest_station(sandbox: Sandbox, trip: Trip, names: set[str],
                     anchor: Sequence[Point]) -> tuple[str, Point] | None:
    """The station (of the target city, with a leg) nearest the anchor points' centroid."""
    located = sorted((name, position) for name in names
                     if (position := sandbox.poi_position(trip.target, name)) is not None)
    if not located or not anchor:
        return located[0] if located else None
    centre = _centroid(anchor)
    return min(located, key=lambda item: haversine_km(item[1], centre))


def _outbound(trip: Trip, legs: Sequence[Leg], first_day: Sequence[Attraction]) -> Leg | None:
    """The cheapest leg arriving early enough for day 1's sights (1.5 h each before the last closes); official
    quirk: a short trip only considers legs of at most 9 h arriving by 06:00, so it mostly falls back to the
    earliest arrival."""
    latest = 24.0 if not first_day else max(hours(a.endtime) for a in first_day) - len(first_day) * 1.5
    fitting = [leg for leg in legs if (trip.long_haul or (leg.duration <= 9 and leg.end <= 6)) and leg.end < latest]
    if fitting:
        return min(fitting, key=lambda leg: leg.cost)
    return min(legs, key=lambda leg: leg.end, default=None)


def _return(trip: Trip, legs: Sequence[Leg], last_day: Sequence[Attraction]) -> Leg | None:
    """The cheapest leg leaving after the last day's sights (1.5 h each after the first opens), else the latest."""
    earliest = 0.0 if not last_day else min(hours(a.opentime) for a in last_day) + len(last_day) * 1.5
    fitting = [leg for leg in legs if leg.begin > earliest]
    if fitting:
        return min(fitting, key=lambda leg: leg.cost)
    late = [leg for leg in legs if leg.begin > 0]
    return max(late, key=lambda leg: leg.begin) if late else None


def _meal_price(sandbox: Sandbox, trip: Trip, fares: float) -> float:
    """The per-meal budget: the mean price of the cheapest share (by the daily budget) of the wanted restaurants."""
    daily = (trip.budget / trip.people - fares) / trip.days
    share = 100
    for low, high, percent in DAILY_SPEND:
        if low <= daily <= high:
            share = percent
    pool = restaurants_by_price(sandbox, trip, use_wanted=True)
    cheapest = pool[:int(len(pool) * share / 100)]
    return sum(r.price for r in cheapest) / len(cheapest) if cheapest else math.nan  # NaN: no restaurant is below


def _anchors(trip: Trip, day: int, stops: Sequence[Attraction], out: Leg, back: Leg, arrive: Point,
             leave: Point) -> dict[str, tuple[Anchor, Anchor]]:
    """Between which places lunch and dinner go (the official's rules by arrival, departure and closing hours)."""
    n = len(stops)
    a = list(stops)
    if day == 1:
        arrived = max(out.end, 8.0)
        if arrived > 18 or out.begin > out.end or out.duration > 24:
            return {}
        found: dict[str, tuple[Anchor, Anchor]] = {}
        if arrived < 12:
            before = min(n, round((12 - arrived) / 2))
            if n <= 1:
                found["lunch"] = (arrive, a[0] if n else arrive)
            else:
                prev: Anchor = a[before - 1] if before >= 1 else arrive
                found["lunch"] = (prev, a[before] if n > before else prev)
            before = round((18 - arrived - 1) / 2)
        else:
            before = round((18 - arrived) / 2)
            if before <= 1 and n > 3:
                before = round(18 - arrived)
        if n == 0:
            found["dinner"] = (arrive, arrive)
        elif n == 1:
            found["dinner"] = (a[0], a[0]) if before or arrived < 12 else (arrive, a[0])
        else:
            found["dinner"] = (a[before - 1] if n >= before else a[-1], a[before] if n > before else a[-1])
        return found
    if n == 0:  # official: an empty day after the first has no place to eat near (it stops with an IndexError)
        return {}
    if day == trip.days:
        if back.begin < 12:
            return {}
        if back.begin < 18:
            if n == 1:
                return {"lunch": (a[0], leave)}
            later = min(n, round((back.begin - 13) / 2) if back.begin > 13 else 0)
            return {"lunch": (a[n - later - 1], a[n - later]) if later else (a[-1], leave)}
        half = round(n / 2)
        return {"lunch": (a[0], a[0]) if n == 1 else (a[half - 1], a[half]), "dinner": (a[-1], leave)}
    if max(hours(s.endtime) for s in a) < 18:
        half = round(n / 2)
        return {"lunch": (a[0], a[0]) if n == 1 else (a[half - 1], a[half]), "dinner": (a[-1], a[-1])}
    third, two_thirds = round(n / 3), round(n / 3 * 2)
    lunch = (a[0], a[0]) if n == 1 else (a[0], a[1]) if n == 2 else (a[third - 1], a[third])
    return {"lunch": lunch, "dinner": (a[-1], a[-1]) if n < 3 else (a[two_thirds - 1], a[two_thirds])}


def _meals(sandbox: Sandbox, trip: Trip, daily: dict[int, list[Attraction]], out: Leg, back: Leg, price: float,
           arrive: Point, leave: Point) -> dict[int, dict[str, Meal]]:
    """Each meal at the restaurant under the meal budget nearest its two anchors (a restaurant once per trip),
    then wanted cuisines not yet eaten swapped in for the meals nearest a restaurant serving them."""
    pool = [r for r in restaurants_by_price(sandbox, trip, use_wanted=False) if r.price < price]
    used: set[int] = set()
    meals: dict[int, dict[str, Meal]] = {}
    for day, stops in daily.items():
        anchors = _anchors(trip, day, stops, out, back, arrive, leave)
        ranked = {meal: _two_nearest([r for r in pool if r.id not in used], ends) for meal, ends in anchors.items()}
        chosen = {meal: best[0] for meal, best in ranked.items() if best[0] is not None}
        if "lunch" in chosen and "dinner" in chosen and chosen["lunch"][1].id == chosen["dinner"][1].id:
            (lunch, lunch2), (dinner, dinner2) = ranked["lunch"], ranked["dinner"]
            assert lunch and dinner
            if lunch[0] + (dinner2[0] if dinner2 else math.inf) <= dinner[0] + (lunch2[0] if lunch2 else math.inf):
                chosen = {"lunch": lunch} | ({"dinner": dinner2} if dinner2 else {})
            else:
                chosen = ({"lunch": lunch2} if lunch2 else {}) | {"dinner": dinner}
            # official quirk: after such a clash neither restaurant is marked as used
        else:
            used.update(found[1].id for found in chosen.values())
        meals[day] = {meal: (anchors[meal][0], found[1], anchors[meal][1]) for meal, found in chosen.items()}
    _swap_in_cuisines(sandbox, trip, meals, price, used)
    return meals


def _two_nearest(pool: Sequence[Restaurant], ends: tuple[Anchor, Anchor]
                 ) -> tuple[tuple[float, Restaurant] | None, tuple[float, Restaurant] | None]:
    """The nearest restaurant to both ends (first on ties) and the one it displaced while scanning (official
    `candidate`: the previous record holder, the runner-up only when the pool is in distance order)."""
    best: tuple[float, Restaurant] | None = None
    previous: tuple[float, Restaurant] | None = None
    for r in pool:
        km = haversine_km(_point(ends[0]), _point(r)) + haversine_km(_point(ends[1]), _point(r))
        if best is None or km < best[0]:
            previous, best = best, (km, r)
    return best, previous


def _swap_in_cuisines(sandbox: Sandbox, trip: Trip, meals: dict[int, dict[str, Meal]], price: float,
                      used: set[int]) -> None:
    wanted = trip.wanted["diet"]
    eaten = [meal[1] for day in meals.values() for meal in day.values()]
    missing = [c for c in wanted if all(r.cuisine != c for r in eaten)]
    if not missing:
        return
    allowance = price + (price * len(eaten) - sum(r.price for r in eaten)) / len(missing)
    offered = [r for r in restaurants_by_price(sandbox, trip, use_wanted=True) if r.id not in used]
    options: list[list[tuple[Restaurant, Restaurant, float]]] = []
    for cuisine in missing:
        for pool in ([r for r in offered if r.price <= allowance], offered):
            serving = [r for r in pool if r.cuisine == cuisine]
            found = [min(((old, new, haversine_km(_point(old), _point(new))) for new in serving),
                         key=lambda option: option[2])
                     for old in eaten if old.cuisine not in wanted and serving]
            if found:
                options.append(found)
                break
    best: tuple[float, list[tuple[Restaurant, Restaurant, float]]] = (math.inf, [])

    def search(i: int, picked: list[tuple[Restaurant, Restaurant, float]], km: float) -> None:
        nonlocal best
        if i == len(options):
            if km < best[0]:
                best = (km, list(picked))
            return
        for option in options[i]:
            if all(option[1].id != other[1].id for other in picked):
                search(i + 1, [*picked, option], km + option[2])

    search(0, [], 0.0)
    for old, new, _ in best[1]:
        for day in meals.values():
            for name, (before, restaurant, after) in day.items():
                if restaurant.id == old.id:
                    day[name] = (before, new, after)


def _hotel(sandbox: Sandbox, trip: Trip, budget: float, centre: Point) -> tuple[Hotel, list[dict[str, Any]]] | None:
    """The wanted hotel nearest the sights whose rooms cost less a night than the budget left; else the cheapest
    within 5 km of them, 6 km, ... (official: up to 500 times that budget; any hotel)."""
    nights = max(trip.days - 1, 1)
    budget = max(budget, 10 * nights)
    nearest: tuple[float, Hotel, list[dict[str, Any]]] | None = None
    for hotel in preferred_hotels(sandbox, trip):
        offer = hotel_offer(hotel, trip.rooms, nights)
        if offer and offer[0] < budget / nights:
            km = haversine_km((hotel.lat, hotel.lon), centre)
            if nearest is None or km < nearest[0]:
                nearest = (km, hotel, offer[1])
    if nearest:
        return nearest[1], nearest[2]
    offers = [(hotel, offer) for hotel in sandbox.hotels(trip.target)
              if (offer := hotel_offer(hotel, trip.rooms, nights)) and offer[0] < budget / nights * 500]
    for radius in range(5, 200):
        near = [item for item in offers if haversine_km((item[0].lat, item[0].lon), centre) < radius]
        if near:
            hotel, (_, rooms) = min(near, key=lambda item: item[1][0])
            return hotel, rooms
    return None


def _stops(sights: list[Attraction], meals: dict[str, Meal]) -> list[Attraction | Restaurant]:
    """The day's sights with lunch, then dinner, put in after the sight before them (first when that is a station,
    last when the sight after them is)."""
    stops: list[Attraction | Restaurant] = list(sights)
    for name in ("lunch", "dinner"):
        if name not in meals:
            continue
        before, restaurant, after = meals[name]
        if not isinstance(before, Attraction) or before not in sights:
            stops.insert(0, restaurant)
        elif not isinstance(after, Attraction) or after not in sights:
            stops.append(restaurant)
        else:
            stops.insert(stops.index(before) + 1, restaurant)
    return stops


def _day(trip: Trip, day: int, stops: list[Attraction | Restaurant], sights: list[Attraction], hotel: Hotel, out: Leg,
         back: Leg, arrive: Point, leave: Point) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The day's timetable: the hours between the day's start and its end (18:00, 22:00 when crowded, or the
    sights' hours) shared equally by the stops, each sight kept 0.5-2 h, meals 1 h; then the ending point."""
    lodge: Point = (hotel.lat, hotel.lon)
    if day == 1:
        start, finish = out.end, 23.99
    elif day == trip.days:
        start, finish = 8.0, out.begin  # official quirk: the last day ends at the *outbound* leg's departure
    else:
        start, finish = 8.0, 23.59
    if len(stops) >= 6:
        start = 6.0
    activities, end = _timetable(trip, day, stops, sights, arrive if day == 1 else lodge, start, finish)
    if day == trip.days:
        origin: Point = _point(stops[-1]) if stops else lodge
        mode, minutes, fare = move(origin, leave, trip.people)
    else:
        origin = _point(stops[-1]) if stops else arrive
        mode, minutes, fare = move(origin, lodge, trip.people)
    at = end + minutes / 60
    at = at - 24 if at > 24 else at
    close = clock(round(at + 1)) if at < 8 else "23:59"
    return activities, ending(trip, day, back, hotel, at, close, mode, minutes, fare)


def _timetable(trip: Trip, day: int, stops: list[Attraction | Restaurant], sights: list[Attraction], first: Point,
               start: float, finish: float) -> tuple[list[dict[str, Any]], float]:
    if not stops:
        return [], start
    n = len(stops)
    crowded = n > 6 or (day in (1, trip.days) and n > 3)
    day_end = 22.0 if crowded or n > 3 else 18.0
    legs = [move(first, _point(stops[0]), trip.people)]
    legs += [move(_point(a), _point(b), trip.people) for a, b in zip(stops, stops[1:], strict=False)]
    opens = min((hours(s.opentime) for s in sights), default=24.0)
    closes = max((hours(s.endtime) for s in sights), default=0.0)
    if day == 1:
        begin = max(8.0, start + legs[0][1] / 60)
        span = (max(closes, day_end) - min(opens, begin)) if crowded else (min(closes, day_end) - max(opens, begin))
    else:
        begin = min(8.0, start + legs[0][1] / 60)
        if day == trip.days:
            span = finish - (min(opens, begin) if crowded else max(opens, begin))
        elif crowded:
            span = max(closes, day_end) - max(begin, opens)
        else:
            span = min(closes, day_end) - min(begin, opens)
    share = (span - sum(leg[1] for leg in legs) / 60 + legs[0][1] / 60) / n
    activities: list[dict[str, Any]] = []
    end = begin
    for i, (stop, (mode, minutes, fare)) in enumerate(zip(stops, legs, strict=True)):
        at = begin if i == 0 else end + minutes / 60
        if isinstance(stop, Attraction):
            # official quirk: the recommended hours are looked up in the DataFrame's columns, so always 0.5-2 h
            end = at + min(max(share, 0.5), 2.0)
            activities.append(activity("attraction", stop, at, end, mode, minutes, fare, trip.people))
        else:
            end = at + 1
            activities.append(activity("meal", stop, at, end, mode, minutes, fare, trip.people))
    return activities, end
