"""Accuracy (`accuracy` in the results), as the official `core/metrics/accuracy.py` computes it.

- `cost_deviation_rate`: sum over the recomputed cost's categories (`extract.actual_costs`) of |recomputed -
  float(plan's cost_breakdown[category], default 0)|, divided by the recomputed total. A plan without
  `cost_breakdown`, with a non-numeric entry, or whose recomputed total is 0 fails (division by zero).
- `fictitious_attraction_rate`: share of the stops typed `attraction` whose name is not in the city's poi.json.
  1.0 when the plan has no day, or when not one of its stop names (start and end points included) is in poi.json;
  0.0 when it has no attraction stop.
- `opening_hours_violations`: over every activity (of any type) whose `location_name` is a sandbox attraction,
  the share whose start_time lies outside [opentime, endtime] (inclusive, minutes); an unreadable time counts as
  inside. Every activity must have `location_name` and `start_time` keys (else the plan fails). 1.0 when the
  city has no attractions (unknown city), 0.0 when no activity is at an attraction.
- `transportation_breaks`: always 0.0 in official mode. The official code looks for `location_name` in the
  extracted stops, which only carry `name`, so it never sees a transfer and never asks Gaode. In corrected mode
  (fix `transfer-breaks-checked`): over consecutive activities of a day at two different non-empty places, the share
  of transfers where a place is not in poi.json or the distance source knows no public-transport route.
- `intercity_planning_deviation`: over the intercity legs, sum |planned hours - database hours| / sum database
  hours. The database leg is the closest (smallest |start difference| + |end difference| in minutes, first one
  on ties) among the options whose arrival station/airport starts with the first two characters of the leg's
  `location_name`: flights for 飞机, trains for 高铁/动车/快速/特快/直达特快 (a 快速/特快/直达特快 leg skips 高铁
  and 动车 trains); options are both directions between the plan's departure and destination. Any other type counts
  1.0 database hour. A planned time more than 20 hours short gets 24 hours added. 1.0 when there is no leg, when
  no option matches, or when the matched duration is 0.
- `people_deviation`: 1 - accuracy, accuracy = 1 - min(1, deviation / people_number) (0.0 when the query has no
  people_number). deviation = |sum of the legs' details.number / 2 - people| + |room capacity - people| (capacity
  per room type 单人房 1, 大床房 2, 双人房 2, 家庭房 3, matched as a substring of the type, first match) and, when
  some activity has a ticket_number and some has a vehicle (seats = load_limit (default 5) - 1 times car_number),
  the two averages: sum |ticket_number - people| / n_tickets + sum |seats - people| / n_vehicles. Official quirk
  (fixed by `people-tickets-separate`): the ticket sum starts from the room capacity, left in the same variable.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from benchmarks.traveleval.evaluation.distance import Distances, LatLon
from benchmarks.traveleval.evaluation.extract import Stop, activity_hours, actual_costs

ROOM_CAPACITY = {"单人房": 1, "大床房": 2, "双人房": 2, "家庭房": 3}
"""People per room type, in the official (matching) order."""
TRAIN_TYPES = ("高铁", "动车", "快速", "特快", "直达特快")
_FAST_TRAINS = ("高铁", "动车")


@dataclass(frozen=True, slots=True)
class Option:
    """A database train or flight, as the deviation metric reads it."""

    to: str
    """Arrival station or airport."""
    train_type: str | None
    """None for a flight."""
    begin_time: str
    end_time: str
    duration: float


def cost_deviation_rate(itinerary: Any) -> float:
    actual = actual_costs(itinerary)
    claimed = itinerary["cost_breakdown"]
    discrepancy: Any = 0
    total: Any = 0
    for category, value in actual.items():
        discrepancy += abs(value - float(claimed.get(category, 0)))
        total += value
    return discrepancy / total  # type: ignore[no-any-return]


def fictitious_attraction_rate(days: Mapping[Any, list[Stop]], located: Collection[str]) -> float:
    """`located`: the plan's stop names that poi.json holds."""
    if not days or not located:
        return 1.0
    real = set(located)
    attractions = [stop["name"] for stops in days.values() for stop in stops if stop["type"] == "attraction"]
    if not attractions:
        return 0.0
    return sum(name not in real for name in attractions) / len(attractions)


def opening_hours_violations(schedules: Mapping[Any, Any], hours: Mapping[str, tuple[Any, Any]]) -> float:
    """`hours`: attraction name -> (opentime, endtime)."""
    if not hours:
        return 1.0
    total = violations = 0
    for activities in schedules.values():
        for activity in activities:
            name, visit = activity["location_name"], activity["start_time"]
            if name in hours:
                total += 1
                violations += not _within(visit, *hours[name])
    return violations / total if total else 0.0


def _within(visit: Any, opens: Any, closes: Any) -> bool:
    try:
        visit_h, visit_m = map(int, visit.split(":"))
        open_h, open_m = map(int, opens.split(":"))
        close_h, close_m = map(int, closes.split(":"))
    except (ValueError, AttributeError, KeyError):
        return True
    return open_h * 60 + open_m <= visit_h * 60 + visit_m <= close_h * 60 + close_m


def intercity_planning_deviation(itinerary: Any, trains: Sequence[Option], flights: Sequence[Option]) -> float:
    legs = itinerary.get("intercity_transport", {}).get("transport_type", [])
    if not legs:
        return 1.0
    delta: Any = 0
    total: Any = 0
    for leg in legs:
        planned = activity_hours(leg)
        actual = database_hours(leg, trains, flights)
        if planned + 20 < actual:
            planned += 24
        if not actual:
            return 1.0
        delta = delta + abs(planned - actual)
        total = total + actual
    return delta / total  # type: ignore[no-any-return]


def database_hours(leg: Any, trains: Sequence[Option], flights: Sequence[Option]) -> float:
    """The duration of the database option closest to the leg (module docstring); 0.0 when none matches."""
    kind = leg.get("transportation_to")
    if kind == "飞机":
        options = flights
    elif kind in TRAIN_TYPES:
        options = trains
    else:
        return 1.0
    start, end, arrival = leg["start_time"], leg["end_time"], leg["location_name"]
    best: Option | None = None
    best_gap = float("inf")
    for option in options:
        if not option.to.startswith(arrival[:2]):
            continue
        if option.train_type and kind not in _FAST_TRAINS and option.train_type in _FAST_TRAINS:
            continue
        gap = _gap_minutes(start, end, option.begin_time, option.end_time)
        if gap < best_gap:
            best, best_gap = option, gap
    return best.duration if best else 0.0


def _gap_minutes(start: Any, end: Any, option_start: str, option_end: str) -> float:
    begin1, end1 = clock_minutes(start), clock_minutes(end)
    begin2, end2 = clock_minutes(option_start), clock_minutes(option_end)
    if end1 < begin1:
        end1 += 24 * 60
    return float(abs(begin1 - begin2)) + float(abs(end1 - end2))


@lru_cache(maxsize=4096)
def clock_minutes(text: str) -> int:
    """Minutes after midnight of an `H:MM` text, parsed by `strptime("%H:%M")` as the official code parses it
    (so "24:00" or "9:5 " fail alike); cached, as plans repeat the same few hundred times."""
    parsed = datetime.strptime(text, "%H:%M")
    return parsed.hour * 60 + parsed.minute


def room_capacity(itinerary: Any) -> float:
    """People the booked rooms hold (a type matches the first capacity key it contains; unknown types hold 0)."""
    capacity: float = 0
    for room in itinerary["accommodation"]["room_type"]:
        kind = room.get("type")
        matched = next((key for key in ROOM_CAPACITY if key in kind), None)
        capacity += float(room.get("quantity")) * ROOM_CAPACITY.get(matched, 0)  # type: ignore[arg-type]
    return capacity


def people_deviation(itinerary: Any, query: Mapping[str, Any], *, fixed: bool = False) -> float:
    people = query.get("people_number", 0)
    if people == 0:
        return 1.0 - 1.0
    seats: float = 0
    for leg in itinerary["intercity_transport"]["transport_type"]:
        if leg is None:
            continue
        seats += float(leg.get("details").get("number"))
    deviation = abs(seats / 2 - people)
    capacity = room_capacity(itinerary)
    deviation += abs(capacity - people)
    tickets: float = 0 if fixed else capacity
    vehicles: float = 0
    n_tickets = n_vehicles = 0
    for day_plan in itinerary["daily_plans"]:
        for details in activity_details(day_plan):
            ticket_number = details.get("ticket_number", 0)
            if ticket_number:
                tickets += abs(ticket_number - people)
                n_tickets += 1
            load_limit = details.get("load_limit")
            seat_number = float(5 if load_limit is None else load_limit) - 1
            car_number = float(details.get("car_number", 0) or 0)
            if seat_number and car_number:
                vehicles += abs(seat_number * car_number - people)
                n_vehicles += 1
        end = day_plan.get("ending_point", {})
        if end and "details" in end and end["details"] is not None:
            seat_number = float(end["details"].get("load_limit", 5) or 5) - 1
            car_number = float(end["details"].get("car_number", 0) or 0)
            if seat_number and car_number:
                vehicles += abs(seat_number * car_number - people)
                n_vehicles += 1
    if n_tickets and n_vehicles:
        deviation += tickets / n_tickets + vehicles / n_vehicles
    accuracy: float = 1.0 - min(1.0, deviation / people)
    return 1.0 - accuracy



def activity_details(day_plan: Mapping[str, Any]) -> Iterator[Any]:
    """The `details` of each of a day plan's activities that has them, in order."""
    for activity in day_plan["activities"]:
        details = activity.get("details") if "details" in activity else None
        if details is not None:
            yield details

def transfer_breaks(days: Mapping[Any, list[Stop]], locate: Callable[[Sequence[Any]], dict[str, LatLon]],
                    distances: Distances, city_code: str) -> float:
    """Corrected `transportation_breaks` (fix `transfer-breaks-checked`): over consecutive stops of a day at two
    different places, the share where a place is not in poi.json or the source knows no public-transport route."""
    transfers = breaks = 0
    for stops in days.values():
        for here, there in zip(stops, stops[1:], strict=False):
            origin, destination = here["name"], there["name"]
            if not isinstance(origin, str) or not isinstance(destination, str) or origin == destination:
                continue
            transfers += 1
            places = locate([origin, destination])
            if origin not in places or destination not in places:
                breaks += 1
            elif distances.has_transit(places[origin], places[destination], city_code,
                                       str(here["end_time"])) is False:
                breaks += 1
    return breaks / transfers if transfers else 0.0
