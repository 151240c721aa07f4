"""Temporality (`time` in the results) and the queuing-time model the constraint and utility metrics share.

Queuing model (official `waiting_time` config and `_calculate_effective_time`): the estimated wait of a visit is
B(category) x K(date type) x K(time slot) / 60 hours, and a visit's effective time is its duration minus that wait.
- B: minutes by attraction category (`CATEGORY_MINUTES`); an attraction takes the B of the first of its
  categories that has one, 0 when none has. The official code walks a Python *set* of the categories, so for
  the 13 staged attractions with two such categories the choice depends on PYTHONHASHSEED; we walk them in the
  order the database lists them, which is one of the orders the official code can take.
- K(date type) (`DATE_FACTORS`): the trip's day N is start date + N - 1, and is, first match wins: Golden Week
  (Oct 1-7, Jan 1-3, May 1-5), Weekend (Sat, Sun), Vacation (July, August, Jan 15-31, Feb 1-15), Peak Season
  (Dec 24-25, Feb 14-15, Apr 4-5, May 1-4, Jun 1, Sep 10), else Weekday. "Short Holiday" has a factor but no
  date maps to it (its rule is commented out in the official code).
- K(time slot) (`SLOT_FACTORS`) by the start time: [8,10) 0.85, [10,12) 0.90, [12,16) 1.10, [16,20) 1.10,
  [20,24) 0.70; any other start (before 8:00) 1.0. An unreadable start time fails the plan (not caught there).

Metrics (official `core/metrics/time.py`):
- `average_tour_ratio`: for each attraction activity found in the sandbox (by exact name), its ratio is 0.0 when
  the effective time is below recommendmintime, else effective time / duration (a zero duration fails the plan);
  a name visited twice keeps its last ratio; the mean over names, 0.0 without any.
- `daily_time_utilization`: per day with activities: the day's window runs from the first activity's start (day 1:
  the first intercity leg's start) to the ending point's end_time; on the last day (`summary.total_days`) it
  ends at the second leg's end (24 when that leg arrives after midnight) when there are two legs, else at 24 when
  the ending point's place does not start with the departure city; the window then widens to cover every activity.
  Utilization = sum(ratio x duration) over the day's attraction activities / window hours; a day without
  activities counts 0; the mean over days (by `day` value).
- `overall_time_utilization`: sum of the ratios of every attraction activity (each occurrence, not weighted by
  duration) / (24 x trip span in days); 0.0 without any ratio.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from benchmarks.traveleval.evaluation.extract import activity_hours, clock_hours, trip_days
from benchmarks.traveleval.sandbox.sandbox import Attraction

CATEGORY_MINUTES: Mapping[str, float] = {"人文景观": 3.0, "园林": 3.0, "自然风光": 3.5, "历史古迹": 4.0,
                                         "游乐园/体育娱乐": 6.0, "博物馆/纪念馆": 10.0}
"""B: the base queue (minutes) of an attraction category."""
DATE_FACTORS: Mapping[str, float] = {"Golden Week": 10.06, "Weekend": 7.55, "Peak Season": 4.63,
                                     "Short Holiday": 4.39, "Vacation": 3.94, "Weekday": 1.00}
"""K(date type)."""
SLOT_FACTORS: Sequence[tuple[str, int, int, float]] = (
    ("08:00-10:00", 8 * 60, 10 * 60, 0.85), ("10:00-12:00", 10 * 60, 12 * 60, 0.90),
    ("12:00-16:00", 12 * 60, 16 * 60, 1.10), ("16:00-20:00", 16 * 60, 20 * 60, 1.10),
    ("20:00-close", 20 * 60, 24 * 60, 0.70))
"""K(time slot): label, [start, end) in minutes of the day, factor."""


def categories(raw_type: str) -> tuple[str, ...]:
    """The categories of an attraction's `type` field ("{历史古迹;园林}"), stripped, in database order."""
    return tuple(dict.fromkeys(part.strip() for part in raw_type.strip("{}").split(";")))


def date_type(dates: Any, day: Any) -> str:
    """The date type of day `day` of a trip whose query `dates` read "YYYY-MM-DD to YYYY-MM-DD"."""
    date = _first_day(dates.split("to")[0].strip()) + timedelta(days=int(day) - 1)
    month, dom, weekday = date.month, date.day, date.weekday()
    if (month == 10 and 1 <= dom <= 7) or (month == 1 and 1 <= dom <= 3) or (month == 5 and 1 <= dom <= 5):
        return "Golden Week"
    if weekday in (5, 6):
        return "Weekend"
    if month in (7, 8) or (month == 1 and 15 <= dom <= 31) or (month == 2 and 1 <= dom <= 15):
        return "Vacation"
    if ((month == 12 and 24 <= dom <= 25) or (month == 2 and 14 <= dom <= 15) or (month == 4 and 4 <= dom <= 5)
            or (month == 5 and 1 <= dom <= 4) or (month == 6 and dom == 1) or (month == 9 and dom == 10)):
        return "Peak Season"
    return "Weekday"


@lru_cache(maxsize=1024)
def _first_day(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d")


def slot_factor(start_time: Any) -> float:
    """K(time slot) of a visit starting at `start_time` (`H:MM`); raises on an unreadable time."""
    hour, minute = map(int, start_time.split(":"))
    minutes = hour * 60 + minute
    return next((factor for _, low, high, factor in SLOT_FACTORS if low <= minutes < high), 1.0)


def effective_hours(activity: Any, kind: str, category_names: Iterable[Any]) -> float:
    """The activity's duration minus the estimated queue (module docstring) for date type `kind`."""
    k_time = slot_factor(activity.get("start_time", "00:00"))
    base = 0.0
    for category in category_names:
        base = CATEGORY_MINUTES.get(category, 0)
        if base:
            break
    wait = base * DATE_FACTORS.get(kind, 1.0) * k_time / 60
    return activity_hours(activity) - wait


def tour_ratios(schedules: Mapping[Any, Any], dates: Any, attractions: Mapping[str, Attraction], *,
                queue: bool = True) -> dict[str, float]:
    """Each visited sandbox attraction's tour ratio (module docstring), by name; without `queue`, no wait."""
    ratios: dict[str, float] = {}
    if not attractions:
        return ratios
    for name, activity, row, effective in visited_attractions(schedules, dates, attractions, queue=queue):
        ratios[name] = 0.0 if effective < row.recommendmintime else effective / activity_hours(activity)
    return ratios


def visited_attractions(schedules: Mapping[Any, Any], dates: Any, attractions: Mapping[str, Attraction], *,
                        queue: bool = True) -> Iterator[tuple[str, Any, Attraction, float]]:
    """Each activity of `schedules` at a sandbox attraction, in order: its name, the activity, the attraction's row
    and the hours spent touring (`effective_hours`; without `queue`, no wait)."""
    for day, activities in schedules.items():
        for activity in activities:
            if activity.get("type", "") != "attraction":
                continue
            name = activity.get("location_name", "")
            if name not in attractions:
                continue
            row = attractions[name]
            yield name, activity, row, effective_hours(activity, date_type(dates, day),
                                                       categories(row.type) if queue else ())


def daily_time_utilization(itinerary: Any, ratios: Mapping[str, float]) -> dict[Any, float]:
    """Each day's sightseeing share of its active window (module docstring), by `day`."""
    summary = itinerary.get("summary")
    last_day = summary.get("total_days")
    legs = itinerary.get("intercity_transport").get("transport_type")
    departure = summary.get("departure")
    shares: dict[Any, float] = {}
    for day_plan in itinerary.get("daily_plans"):
        day = day_plan.get("day")
        activities = day_plan.get("activities")
        share = 0.0
        if activities:
            start_time = activities[0].get("start_time")
            end = day_plan.get("ending_point")
            end_time = end.get("end_time")
            if day == 1 and legs:
                start_time = legs[0].get("start_time")
            first, last = clock_hours(start_time), clock_hours(end_time)
            if day == last_day and len(legs) > 1:
                back_end, back_start = clock_hours(legs[1].get("end_time")), clock_hours(legs[1].get("start_time"))
                last = 24 if back_end < back_start else back_end
            elif day == last_day and not end.get("location_name").startswith(departure):
                last = 24
            for activity in activities:
                first = min(first, clock_hours(activity.get("start_time")))
                last = max(last, clock_hours(activity.get("end_time")))
            seen: float = 0
            for activity in activities:
                name = activity.get("location_name")
                if name in ratios.keys() and activity.get("type") == "attraction":
                    seen += ratios[name] * activity_hours(activity)
            share = seen / (last - first)
        shares[day] = share
    return shares


def overall_time_utilization(itinerary: Any, ratios: Mapping[str, float]) -> float:
    """Sum of the attraction activities' ratios / (24 x trip span in days); 0.0 without ratios."""
    if not ratios:
        return 0.0
    hours = 24 * trip_days(itinerary["summary"], itinerary["intercity_transport"]["transport_type"])
    seen: float = 0
    for day_plan in itinerary.get("daily_plans"):
        for activity in day_plan.get("activities"):
            name = activity.get("location_name")
            if name in ratios.keys() and activity.get("type") == "attraction":
                seen += ratios[name]
    return seen / hours


def time_metrics(itinerary: Any, schedules: Mapping[Any, Any], query: Mapping[str, Any],
                 attractions: Mapping[str, Attraction], *, queue: bool = True) -> dict[str, Any]:
    """The `time` dimension; without `queue`, no visit waits (mode `no-queue`)."""
    ratios = tour_ratios(schedules, query.get("dates"), attractions, queue=queue)
    shares = daily_time_utilization(itinerary, ratios)
    return {"average_tour_ratio": sum(ratios.values()) / len(ratios) if ratios else 0.0,
            "daily_time_utilization": sum(shares.values()) / len(shares) if shares else 0.0,
            "overall_time_utilization": overall_time_utilization(itinerary, ratios)}
