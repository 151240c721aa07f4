"""The oracle's plan: a deterministic, feasible `FinalTravelPlan` for a query, built from the sandbox alone.

What the plan holds, and why (each rule is one the official metrics check):
* two intercity legs of an allowed type (the query's preferred transport, never an excluded one; a schema type),
  out early enough to see something on day 1, back late on the last day, neither overnight; cheapest first;
* one hotel whose feature (`featurehoteltype`) is preferred, else not excluded, with rooms whose beds add up to the
  party exactly (the official people-deviation counts 1/2/2/3 per room), within each room type's stock; cheapest;
* each day, attractions of preferred and never of excluded types, known to poi.json (the fictitious-attraction
  check looks names up there), started within opening hours, and kept for a duration whose effective time (minus
  the official queuing estimate, for every category the official set iteration could pick) lies within the
  recommended visit time; as many a day as the rhythm's target density allows; nearest next;
* lunch and dinner at open restaurants, covering every preferred cuisine first, never an excluded one;
* subway or walking between places (fares and times from a documented rule), and every cost itemized so that
  `cost_breakdown` equals the official actual-cost recomputation category by category.

When the result is over budget it is built again the thrifty way (the cheapest same-day legs at any hour, cheaper
attractions and restaurants first) and that plan is taken if it fits; otherwise the first plan stays, saying so
(`is_within_budget: false`): the sandbox does not allow the budget with the other constraints kept.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from benchmarks.traveleval.evaluation.extract import actual_costs, total_cost
from benchmarks.traveleval.evaluation.time import CATEGORY_MINUTES, date_type, effective_hours
from benchmarks.traveleval.evaluation.utility import travel_style
from benchmarks.traveleval.sandbox.sandbox import ROOM_CAPACITY, Attraction, Hotel, Restaurant, Sandbox

TRAIN_TYPES = ("高铁", "动车", "快速", "特快", "直达特快")
"""Train types the plan schema accepts (a `普快` train cannot be written in a plan)."""
FLIGHT = "飞机"
DENSITY = {"特种兵": 5, "慢游": 2, "亲子": 3, "普通": 3}
"""Attractions a full day holds at most, per official travel style (`evaluation.utility.travel_style`; the official
target densities are 6.0, 2.0, 2.75 and 3.54: a day rarely has the hours for more)."""
DAY_START, LUNCH, DINNER, DAY_END = 9 * 60, 11 * 60 + 30, 17 * 60 + 30, 21 * 60 + 30
MEAL_MINUTES, CHECK_MINUTES, STATION_SLACK = 60, 30, 60
YUAN_PER_KM, THRIFTY_YUAN_PER_KM = 15.0, 2.0
"""A restaurant is chosen by price per person + this many yuan per km away (the thrifty way weighs price more)."""
WALK_KM, WALK_KMH, SUBWAY_KMH, SUBWAY_ACCESS, DETOUR = 1.2, 4.5, 25.0, 10, 1.3
"""Getting around: walk up to 1.2 km at 4.5 km/h, else the subway at 25 km/h plus 10 minutes to reach and leave
it; road distance = great-circle distance x 1.3."""
@dataclass(frozen=True, slots=True)
class Leg:
    kind: str
    number: str
    arrives_at: str
    """The arrival station or airport (a plan leg's `location_name`)."""
    departs_from: str
    begin: int
    end: int
    """Minutes after midnight, as the timetable gives them (an overnight leg ends before it begins)."""
    hours: float
    """The timetable's duration: a leg of a day or more can look short by its clock times."""
    price: float


@dataclass(frozen=True, slots=True)
class Place:
    name: str
    lat: float
    lon: float


@dataclass(slots=True)
class _Day:
    """One day being laid out: where the group is, the time, and the entries so far."""

    number: int
    date: datetime.date
    place: Place
    clock: int
    activities: list[dict[str, Any]]
    lunch: bool = False
    dinner: bool = False


def minutes(text: str) -> int:
    """`H:MM` / `HH:MM` -> minutes after midnight (`24:00` is 1440)."""
    hours, _, rest = text.partition(":")
    return int(hours) * 60 + int(rest)


def clock(total: int) -> str:
    """Minutes -> `HH:MM` as the schema wants it (00:00-23:59)."""
    hours, rest = divmod(min(max(total, 0), 24 * 60 - 1), 60)
    return f"{hours:02d}:{rest:02d}"


def visit_minutes(attraction: Attraction, dates: str, day: int, start: int) -> int | None:
    """A visit length whose effective time (the evaluator's: duration minus the official queue estimate) is within
    the recommended one whichever category the official code takes the queue of (the first of a Python set with a
    base, so it depends on hashing); None if no length is."""
    kind = date_type(dates, day)
    orders = [[name] for name in attraction.types if name in CATEGORY_MINUTES] or [[]]
    low, high = attraction.recommendmintime, attraction.recommendmaxtime

    def effective(length: int, order: list[str]) -> float:
        return effective_hours({"start_time": clock(start), "end_time": clock(start + length)}, kind, order)

    waits = [-effective(0, order) for order in orders]

    def fits(length: int, slack: float) -> bool:
        return all(low + slack <= effective(length, order) <= high - slack for order in orders)

    first, last = math.ceil((low + max(waits)) * 60), math.floor((high + min(waits)) * 60)
    for slack, step in ((1 / 60, 5), (1 / 60, 1), (0.0, 1)):
        found = next((n for n in range(max(first, 1), last + 1) if n % step == 0 and fits(n, slack)), None)
        if found is not None:
            return found
    return None


def distance_km(a: Place, b: Place) -> float:
    """Road distance estimate: haversine x `DETOUR`."""
    p1, p2 = math.radians(a.lat), math.radians(b.lat)
    dp, dl = p2 - p1, math.radians(b.lon - a.lon)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h)) * DETOUR


def subway_fare(km: float) -> int:
    """Fare per person by distance (Beijing's scale: 3 yuan to 6 km, 4 to 12, 5 to 22, 6 to 32, +1 per 20 km)."""
    for limit, fare in ((6, 3), (12, 4), (22, 5), (32, 6)):
        if km <= limit:
            return fare
    return 6 + math.ceil((km - 32) / 20)


def travel_minutes(km: float) -> int:
    """Minutes to cover `km` on foot or by subway (see `transfer`), rounded up to 5."""
    if km <= WALK_KM:
        return max(5, math.ceil(km / WALK_KMH * 60 / 5) * 5)
    return math.ceil((km / SUBWAY_KMH * 60 + SUBWAY_ACCESS) / 5) * 5


def transfer(a: Place, b: Place, people: int) -> tuple[str, int, int]:
    """(mode, minutes, cost for the group) from a to b: walk up to `WALK_KM`, else the subway."""
    km = distance_km(a, b)
    if km <= WALK_KM:
        return "步行", travel_minutes(km), 0
    return "地铁", travel_minutes(km), subway_fare(km) * people


def _block(query: Mapping[str, Any], name: str) -> tuple[list[str], list[str]]:
    block = query.get(name) or {}
    return list(block.get("preferences") or []), list(block.get("constraints") or [])


def _legs(sandbox: Sandbox, origin: str, destination: str, query: Mapping[str, Any]) -> list[Leg]:
    wanted, excluded = _block(query, "transportation")
    legs = [Leg(t.train_type, t.train_id, t.to_station, t.from_station, minutes(t.begin_time), minutes(t.end_time),
                t.duration, t.cost) for t in sandbox.trains(origin, destination) if t.train_type in TRAIN_TYPES]
    legs += [Leg(FLIGHT, f.flight_id, f.to_airport, f.from_airport, minutes(f.begin_time), minutes(f.end_time),
                 f.duration, f.cost) for f in sandbox.flights(origin, destination)]
    for allowed in ([leg for leg in legs if leg.kind in wanted and leg.kind not in excluded] if wanted else [],
                    [leg for leg in legs if leg.kind not in excluded], legs):
        if allowed:
            return allowed
    return []


def _sights(sandbox: Sandbox, city: str) -> tuple[tuple[Attraction, Place, int, int], ...]:
    """The city's attractions known to poi.json, with their place and opening minutes (read once per city, kept by
    the sandbox)."""
    return sandbox.derived(("planner sights", city), lambda: _read_sights(sandbox, city))


def _read_sights(sandbox: Sandbox, city: str) -> tuple[tuple[Attraction, Place, int, int], ...]:
    found = []
    for attraction in sandbox.attractions(city):
        position = sandbox.poi_position(city, attraction.name)
        if position is not None:
            found.append((attraction, Place(attraction.name, *position), minutes(attraction.opentime),
                          minutes(attraction.endtime)))
    return tuple(found)


def _eateries(sandbox: Sandbox, city: str) -> tuple[tuple[Restaurant, Place, int, int], ...]:
    """The city's restaurants with their place and opening minutes (a closing time past midnight after 24:00; kept
    by the sandbox)."""
    return sandbox.derived(("planner eateries", city), lambda: _read_eateries(sandbox, city))


def _read_eateries(sandbox: Sandbox, city: str) -> tuple[tuple[Restaurant, Place, int, int], ...]:
    found = []
    for restaurant in sandbox.restaurants(city):
        opens, closes = minutes(restaurant.opentime), minutes(restaurant.endtime)
        found.append((restaurant, Place(restaurant.name, restaurant.lat, restaurant.lon), opens,
                      closes + (24 * 60 if closes <= opens else 0)))
    return tuple(found)


def choose_leg(legs: Sequence[Leg], windows: Sequence[Callable[[Leg], bool]]) -> Leg | None:
    """The cheapest leg in the first window that has one (then the earliest); windows go from ideal to any."""
    for window in windows:
        fitting = [leg for leg in legs if window(leg)]
        if fitting:
            return min(fitting, key=lambda leg: (leg.price, leg.begin, leg.number))
    return None


def _same_day(leg: Leg) -> bool:
    """Arrives the day it leaves, and its clock times agree with its duration (the official deviation metric
    compares the two, so a leg whose timetable row contradicts itself would count against the plan)."""
    return leg.end > leg.begin and abs(leg.hours * 60 - (leg.end - leg.begin)) <= 10


OUTBOUND = (lambda leg: _same_day(leg) and 6 * 60 <= leg.begin and leg.end <= 17 * 60,
            lambda leg: _same_day(leg) and 6 * 60 <= leg.begin, _same_day, lambda leg: True)
RETURN = (lambda leg: _same_day(leg) and 15 * 60 <= leg.begin <= 21 * 60,
          lambda leg: _same_day(leg) and 12 * 60 <= leg.begin, _same_day, lambda leg: True)


@lru_cache(maxsize=65536)
def choose_rooms(hotel: Hotel, people: int) -> tuple[tuple[str, int, int], ...] | None:
    """(room type, quantity, price per night) whose beds are the party exactly, cheapest, within stock (else the
    cheapest with beds to spare); None when the stock cannot take the party."""
    rooms = [room for room in hotel.rooms if room.stock > 0 and room.price > 0]
    best: tuple[tuple[int, int, int], tuple[tuple[str, int, int], ...]] | None = None

    def walk(i: int, beds: int, cost: int, chosen: tuple[tuple[str, int, int], ...]) -> None:
        nonlocal best
        if beds >= people:  # more rooms would only add beds and cost
            key = (beds - people, cost, sum(n for _, n, _ in chosen))
            if best is None or key < best[0]:
                best = (key, chosen)
            return
        if i == len(rooms):
            return
        room, size = rooms[i], ROOM_CAPACITY[rooms[i].type]
        for n in range(min(room.stock, -(-(people - beds) // size)) + 1):
            walk(i + 1, beds + n * size, cost + n * room.price, chosen + (((room.type, n, room.price),) if n else ()))

    walk(0, 0, 0, ())
    return None if best is None else best[1]


def choose_hotel(sandbox: Sandbox, city: str, query: Mapping[str, Any],
                 people: int) -> tuple[Hotel, tuple[tuple[str, int, int], ...]] | None:
    wanted, excluded = _block(query, "accommodations")
    options = [(hotel, rooms) for hotel in sandbox.hotels(city) if (rooms := choose_rooms(hotel, people))]
    tiers = ([o for o in options if o[0].featurehoteltype in wanted] if wanted else [],
             [o for o in options if o[0].featurehoteltype not in excluded], options)
    for tier in tiers:
        if tier:
            return min(tier, key=lambda o: (sum(n * ROOM_CAPACITY[kind] for kind, n, _ in o[1]),
                                            sum(n * price for _, n, price in o[1]), o[0].id))
    return None


class PlanBuilder:
    """Builds the plan of one query; `build()` is the whole recipe."""

    def __init__(self, sandbox: Sandbox, query: Mapping[str, Any], *, thrifty: bool = False) -> None:
        self.sandbox, self.query, self.thrifty = sandbox, query, thrifty
        self.city = str(query["target_city"])
        self.people = int(query["people_number"])
        self.days = int(query["days"])
        self.dates = str(query["dates"])
        self.first_date = datetime.date.fromisoformat(self.dates.split("to")[0].strip())
        self.density = DENSITY[travel_style(query)]
        self.cuisines_wanted, self.cuisines_excluded = _block(query, "diet")
        self.used: set[str] = set()
        self.ranked = self._attractions()

    def build(self) -> dict[str, Any] | None:
        """The plan, or None when the sandbox has no leg or no hotel for the trip."""
        origin = str(self.query["start_city"])
        skip = 2 if self.thrifty else 0  # the thrifty way takes the cheapest same-day leg at any hour
        out = choose_leg(_legs(self.sandbox, origin, self.city, self.query), OUTBOUND[skip:])
        back = choose_leg(_legs(self.sandbox, self.city, origin, self.query), RETURN[skip:])
        stay = choose_hotel(self.sandbox, self.city, self.query, self.people)
        if out is None or back is None or stay is None:
            return None
        hotel, rooms = stay
        self.hotel = Place(hotel.name, hotel.lat, hotel.lon)
        days = [self._day(n, out, back) for n in range(1, self.days + 1)]
        legs = [self._leg(out, origin, self.city), self._leg(back, self.city, origin)]
        nights = self.days - 1
        room_types = [{"type": kind, "quantity": n, "price_per_night": price, "nights": nights}
                      for kind, n, price in rooms]
        itinerary: dict[str, Any] = {
            "summary": {"total_days": self.days, "total_travelers": self.people, "departure": origin,
                        "destination": self.city, "total_budget": self.query["budget"]},
            "accommodation": {"hotel_name": hotel.name, "room_type": room_types,
                              "total_cost": sum(n * price * nights for _, n, price in rooms)},
            "intercity_transport": {"transport_type": legs, "total_cost": sum(leg["cost"] for leg in legs)},
            "daily_plans": days,
        }
        settle_costs(itinerary)
        return {"query_uid": self.query["uid"], "itinerary": itinerary}

    def _leg(self, leg: Leg, origin: str, destination: str) -> dict[str, Any]:
        cost = leg.price * self.people
        verb = "乘飞机" if leg.kind == FLIGHT else f"乘{leg.kind}"
        return {"description": f"{verb}{leg.number}从{origin}({leg.departs_from})前往{destination}",
                "start_time": clock(leg.begin), "end_time": clock(leg.end), "location_name": leg.arrives_at,
                "cost": cost, "transportation_to": leg.kind, "transportation_cost": cost,
                "details": {"transport_number": leg.number, "price": leg.price, "number": self.people}}

    def _station(self, name: str) -> Place:
        position = self.sandbox.poi_position(self.city, name)
        return Place(name, *position) if position else Place(name, self.hotel.lat, self.hotel.lon)

    def _day(self, number: int, out: Leg, back: Leg) -> dict[str, Any]:
        date = self.first_date + datetime.timedelta(days=number - 1)
        last = number == self.days
        day = _Day(number, date, self.hotel, DAY_START, [])
        start_name = self.hotel.name
        if number == 1:
            station = self._station(out.arrives_at)
            start_name, day.place, day.clock = station.name, station, out.end % (24 * 60)
            self._go(day, self.hotel, "accommodation_check_in", f"入住{self.hotel.name}", CHECK_MINUTES, 0, {})
        if last:
            station = self._station(back.departs_from)
            leave_by = back.begin - STATION_SLACK - transfer(self.hotel, station, self.people)[1]
        else:
            leave_by = DAY_END
        if last and number > 1:
            day.clock = max(min(DAY_START, leave_by), CHECK_MINUTES)
            self._add(day, "accommodation_check_out", f"在{self.hotel.name}办理退房", self.hotel.name,
                      day.clock - CHECK_MINUTES, day.clock, 0, "步行", 0, {})
        self._fill(day, leave_by)
        if last:
            mode, length, fare = transfer(day.place, station, self.people)
            ending = self._entry("intercity_transport", f"前往{station.name}乘{back.number}返程", station.name,
                                 day.clock, day.clock + length, 0, mode, fare, {"transport_time": str(length)})
        else:
            mode, length, fare = transfer(day.place, self.hotel, self.people)
            ending = self._entry("accommodation", f"返回{self.hotel.name}休息", self.hotel.name, day.clock,
                                 day.clock + length, 0, mode, fare, {"transport_time": str(length)})
        return {"day": number, "date": date.isoformat(), "starting_point": start_name, "ending_point": ending,
                "activities": day.activities}

    def _fill(self, day: _Day, leave_by: int) -> None:
        """Attractions and meals until `leave_by` (when the group must head for the hotel or the station): a visit
        ends in time for a pending lunch or dinner; with nothing left that fits, the group waits for the meal."""
        candidates = self.ranked
        visits = 0
        while True:
            if not day.lunch and LUNCH <= day.clock:
                day.lunch = True
                if day.clock <= 14 * 60:
                    self._meal(day, leave_by, "午餐")
                continue
            if not day.dinner and DINNER <= day.clock:
                day.dinner = True
                self._meal(day, leave_by, "晚餐")
                continue
            deadline = min(leave_by, 13 * 60 + 30 if not day.lunch else 19 * 60 + 30 if not day.dinner else DAY_END)
            if visits < self.density and self._visit(day, candidates, deadline):
                visits += 1
                continue
            if not day.lunch and LUNCH + MEAL_MINUTES <= leave_by:
                day.clock = max(day.clock, LUNCH)
                continue
            if not day.dinner and DINNER + MEAL_MINUTES <= leave_by:
                day.clock = max(day.clock, DINNER)
                continue
            return

    def _attractions(self) -> list[tuple[Attraction, Place, int, int]]:
        wanted, excluded = _block(self.query, "attractions")
        ranked = []
        for sight in _sights(self.sandbox, self.city):
            attraction = sight[0]
            types = attraction.types
            if any(kind in types for kind in excluded):
                continue
            liked = sum(kind in types for kind in wanted)
            key = ((-liked, attraction.price, -(attraction.star or 0)) if self.thrifty
                   else (-liked, -(attraction.star or 0), attraction.price))
            ranked.append((key, attraction.id, sight))
        ranked.sort(key=lambda item: item[:2])
        return [sight for _, _, sight in ranked]

    def _visit(self, day: _Day, candidates: list[tuple[Attraction, Place, int, int]], leave_by: int) -> bool:
        """Adds the best unused attraction that fits before `leave_by` (nearest among the top ranked)."""
        fresh = [item for item in candidates if item[0].name not in self.used]
        pool = fresh[:1] + sorted(fresh[1:8], key=lambda item: distance_km(day.place, item[1]))
        if day.activities and any(a["type"] == "attraction" for a in day.activities):
            pool = sorted(fresh[:8], key=lambda item: distance_km(day.place, item[1]))
        for attraction, place, opens, closes in pool + fresh[8:]:
            mode, length, fare = transfer(day.place, place, self.people)
            start, limit = max(day.clock + length, opens), min(leave_by, closes, DAY_END)
            if start + attraction.recommendmintime * 60 > limit:  # no visit long enough fits (the cheap test)
                continue
            stay = visit_minutes(attraction, self.dates, day.number, start)
            if stay is None or start + stay > limit:
                continue
            price = attraction.price
            details = {"transport_time": str(length), "ticket_type": "成人票" if price else "免费",
                       "ticket_price": price, "ticket_number": self.people}
            day.activities.append(self._entry("attraction", f"游览{attraction.name}", attraction.name, start,
                                              start + stay, price * self.people, mode, fare, details))
            day.place, day.clock = place, start + stay
            self.used.add(attraction.name)
            return True
        return False

    def _meal(self, day: _Day, leave_by: int, label: str) -> bool:
        options: list[tuple[float, Restaurant, Place]] = []
        for restaurant, place, opens, closes in _eateries(self.sandbox, self.city):
            if restaurant.name in self.used or restaurant.cuisine in self.cuisines_excluded:
                continue
            km = distance_km(day.place, place)
            start = day.clock + travel_minutes(km)
            if opens <= start and start + MEAL_MINUTES <= min(closes, leave_by):
                options.append((km, restaurant, place))
        if not options:
            return False
        uncovered = [o for o in options if o[1].cuisine in self.cuisines_wanted]
        per_km = THRIFTY_YUAN_PER_KM if self.thrifty else YUAN_PER_KM
        _, restaurant, place = min(uncovered or options, key=lambda o: (o[1].price + per_km * o[0], o[1].id))
        mode, length, fare = transfer(day.place, place, self.people)
        start = day.clock + length
        day.activities.append(self._entry("meal", f"{label}：{restaurant.name}（{restaurant.cuisine}）",
                                          restaurant.name, start, start + MEAL_MINUTES,
                                          restaurant.price * self.people, mode, fare,
                                          {"transport_time": str(length), "cuisine": restaurant.cuisine}))
        day.place, day.clock = place, start + MEAL_MINUTES
        self.used.add(restaurant.name)
        self.cuisines_wanted = [c for c in self.cuisines_wanted if c != restaurant.cuisine]
        return True

    def _go(self, day: _Day, place: Place, kind: str, text: str, length: int, cost: float,
            details: dict[str, Any]) -> None:
        mode, travel, fare = transfer(day.place, place, self.people)
        start = day.clock + travel
        self._add(day, kind, text, place.name, start, start + length, cost, mode, fare,
                  {"transport_time": str(travel), **details})
        day.place = place

    def _add(self, day: _Day, kind: str, text: str, name: str, start: int, end: int, cost: float, mode: str,
             fare: float, details: dict[str, Any]) -> None:
        day.activities.append(self._entry(kind, text, name, start, end, cost, mode, fare, details))
        day.clock = end

    @staticmethod
    def _entry(kind: str, text: str, name: str, start: int, end: int, cost: float, mode: str, fare: float,
               details: dict[str, Any]) -> dict[str, Any]:
        return {"type": kind, "description": text, "start_time": clock(start), "end_time": clock(end),
                "location_name": name, "cost": cost, "transportation_to": mode, "transportation_cost": fare,
                "details": details}


def settle_costs(itinerary: dict[str, Any]) -> None:
    """Writes the cost breakdown and the summary's totals from the itemized fields (edits `itinerary`)."""
    costs, total = actual_costs(itinerary), total_cost(itinerary)
    itinerary["cost_breakdown"] = {**costs, "total": total}
    summary = itinerary["summary"]
    summary["calculated_total_cost"] = total
    summary["is_within_budget"] = total <= float(summary["total_budget"])


def cost_floor(sandbox: Sandbox, query: Mapping[str, Any]) -> float | None:
    """What any plan keeping the query's transport and hotel preferences costs at least: the cheapest allowed legs
    there and back (same-day ones when there are) and the cheapest rooms for the party, meals and visits aside;
    None when the sandbox has no leg or no hotel."""
    origin, city, people = str(query["start_city"]), str(query["target_city"]), int(query["people_number"])
    prices = []
    for legs in (_legs(sandbox, origin, city, query), _legs(sandbox, city, origin, query)):
        if not legs:
            return None
        prices.append(min(leg.price for leg in ([leg for leg in legs if _same_day(leg)] or legs)))
    stay = choose_hotel(sandbox, city, query, people)
    if stay is None:
        return None
    return sum(prices) * people + sum(n * price for _, n, price in stay[1]) * (int(query["days"]) - 1)


def build_plan(sandbox: Sandbox, query: Mapping[str, Any]) -> dict[str, Any] | None:
    """The oracle's `FinalTravelPlan` (as JSON values) for a query; None when the sandbox has no leg or hotel."""
    plan = PlanBuilder(sandbox, query).build()
    if plan is not None and not plan["itinerary"]["summary"]["is_within_budget"]:
        thrifty = PlanBuilder(sandbox, query, thrifty=True).build()
        if thrifty is not None and thrifty["itinerary"]["summary"]["is_within_budget"]:
            return thrifty
    return plan
