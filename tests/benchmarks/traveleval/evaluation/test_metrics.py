"""The metric functions on plain values, without the sandbox: the queuing model, durations, the intercity match,
the route penalty and the cross-day misalignment, by hand."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest

from benchmarks.traveleval.evaluation.accuracy import Option, database_hours, intercity_planning_deviation
from benchmarks.traveleval.evaluation.extract import activity_hours, trip_days
from benchmarks.traveleval.evaluation.space import (
    cross_day_misalignment,
    misalignment,
    route_penalty,
    shortest_path_km,
)
from benchmarks.traveleval.evaluation.time import categories, date_type, effective_hours, slot_factor
from benchmarks.traveleval.evaluation.utility import quality_hours
from benchmarks.traveleval.sandbox.sandbox import Attraction


@pytest.mark.parametrize(("start", "end", "hours"), [
    ("9:00", "10:30", 1.5), ("23:00", "01:30", 2.5), ("10:30", "10:00", 0), ("9am", "10:00", 0.0),
    (None, "10:00", 0.0)])
def test_activity_hours(start: Any, end: str, hours: float) -> None:
    assert activity_hours({"start_time": start, "end_time": end}) == hours


@pytest.mark.parametrize(("dates", "day", "kind"), [
    ("2024-10-02 to 2024-10-04", 2, "Golden Week"), ("2024-11-15 to 2024-11-17", 2, "Weekend"),
    ("2024-07-10 to 2024-07-12", 1, "Vacation"), ("2024-12-24 to 2024-12-26", 1, "Peak Season"),
    ("2024-05-04 to 2024-05-06", 1, "Golden Week"), ("2024-11-13 to 2024-11-14", "2", "Weekday")])
def test_date_types(dates: str, day: Any, kind: str) -> None:
    assert date_type(dates, day) == kind


def test_time_slots_and_the_queue() -> None:
    assert [slot_factor(t) for t in ("7:59", "8:00", "11:59", "12:00", "19:59", "20:00", "23:59")] == [
        1.0, 0.85, 0.90, 1.10, 1.10, 0.70, 0.70]
    with pytest.raises(ValueError):
        slot_factor("noon")
    visit = {"start_time": "10:00", "end_time": "12:00"}
    # 都江堰景区 is {自然风光;历史古迹}: one of the 13 attractions with two queue categories; the first listed wins
    assert categories("{自然风光;历史古迹}") == ("自然风光", "历史古迹")
    assert effective_hours(visit, "Weekend", categories("{自然风光;历史古迹}")) == 2 - 3.5 * 7.55 * 0.90 / 60
    assert effective_hours(visit, "Weekend", ("网红打卡点",)) == 2
    assert effective_hours(visit, "Weekend", "attraction") == 2  # the official aqe passes this word: no queue


def _attraction(name: str, raw_type: str, star: float | None) -> Attraction:
    return Attraction("x", 0, name, raw_type, 0.0, 0.0, "8:00", "18:00", 0.0, 1.0, 3.0, star)


def test_aqe_quality_hours_official_and_corrected() -> None:
    days = {1: [{"name": "museum", "type": "attraction", "start_time": "10:00", "end_time": "12:00"},
                {"name": "unknown", "type": "attraction", "start_time": "13:00", "end_time": "14:00"},
                {"name": "museum", "type": "meal", "start_time": "15:00", "end_time": "16:00"}]}
    known = {"museum": _attraction("museum", "{博物馆/纪念馆}", 4.0)}
    dates = "2024-11-16 to 2024-11-17"  # a Saturday
    assert quality_hours(days, dates, known) == 4.0 * 2 + 3.0 * 1
    assert quality_hours(days, dates, known, fixed=True) == 4.0 * (2 - 10.0 * 7.55 * 0.90 / 60) + 3.0 * 1
    assert math.isnan(quality_hours(days, dates, {"museum": _attraction("museum", "{博物馆/纪念馆}", None)}))


def test_the_closest_database_option() -> None:
    trains = [Option("北京南站", "高铁", "08:00", "12:00", 4.0), Option("北京站", "特快", "08:30", "20:00", 11.5),
              Option("上海站", "高铁", "08:00", "12:00", 9.9)]
    leg = {"transportation_to": "高铁", "start_time": "08:10", "end_time": "12:20", "location_name": "北京南站"}
    assert database_hours(leg, trains, []) == 4.0
    assert database_hours({**leg, "transportation_to": "特快"}, trains, []) == 11.5  # skips 高铁 and 动车
    assert database_hours({**leg, "transportation_to": "大巴"}, trains, []) == 1.0
    assert database_hours({**leg, "location_name": "天津站"}, trains, []) == 0.0
    # 4h10 planned vs 4h: |4.1667 - 4| / 4; a leg matching nothing makes the whole metric 1.0
    itinerary = {"intercity_transport": {"transport_type": [leg]}}
    assert intercity_planning_deviation(itinerary, trains, []) == pytest.approx((4 + 10 / 60 - 4) / 4)
    overnight = {**leg, "transportation_to": "特快", "start_time": "08:30", "end_time": "07:00"}
    assert intercity_planning_deviation({"intercity_transport": {"transport_type": [overnight]}}, trains, []) == (
        pytest.approx(abs(22.5 - 11.5) / 11.5))
    assert intercity_planning_deviation({"intercity_transport": {"transport_type": []}}, trains, []) == 1.0


def test_the_trip_span() -> None:
    legs = [{"start_time": "7:30"}, {"end_time": "19:30"}]
    assert trip_days({"total_days": 3}, legs) == 12 / 24 + 3 - 1
    assert trip_days({"total_days": "2"}, []) == 14 / 24 + 2 - 1


PLACES = {"a": (0.0, 0.0), "b": (0.0, 1.0), "c": (0.0, 2.0), "d": (0.0, 3.0)}


def line_km(origin: tuple[float, float], destination: tuple[float, float]) -> float:
    return abs(origin[1] - destination[1]) * 10


def locate(names: Any) -> dict[str, tuple[float, float]]:
    return {name: PLACES[name] for name in sorted(PLACES) if name in names}


def test_route_penalty_by_hand() -> None:
    # a -> c -> b -> d on a line: 20 + 10 + 20 = 50 km, the best a -> b -> c -> d is 30 km
    assert shortest_path_km(["a", "c", "b", "d"], PLACES, line_km) == 30
    assert route_penalty({1: ["a", "c", "b", "d"], 2: ["a", "x"]}, locate, line_km) == (
        pytest.approx((50 / 30 - 1 + 0) / 2))
    assert route_penalty({1: ["a", "c"]}, locate, lambda o, d: None) == 0.0  # a distance missing
    assert route_penalty({1: [["unhashable"], "a"]}, locate, line_km) == 0.0  # swallowed
    assert route_penalty({}, locate, line_km) == 0.0
    many = {f"p{i}": (0.0, float(i)) for i in range(21)}
    with pytest.raises(ValueError, match="21 located stops"):
        shortest_path_km(list(many), many, line_km)
    # a distance missing: the official code stops before its endless search, and RP is 0.0
    assert route_penalty({1: list(many)}, lambda names: many, lambda o, d: None) == 0.0


def test_cross_day_misalignment_by_hand() -> None:
    # day 1: a, d (30 apart); day 2: b. a: 30 / 10 = 3, d: 30 / 20 = 1.5, b alone: 0.0 (mean of nothing)
    values = misalignment({1: ["a", "d"], 2: ["b"]}, {k: PLACES[k] for k in "abd"}, set(), line_km)
    assert values == pytest.approx({"P90": 2.7, "P95": 2.85})
    lodged = misalignment({1: ["a", "d"], 2: ["b"]}, {k: PLACES[k] for k in "abd"}, {"a"}, line_km)
    assert lodged == pytest.approx({"P90": 1.35, "P95": 1.425})  # a, the hotel, is left out: [1.5, 0.0]
    assert cross_day_misalignment({1: ["a"], 2: ["b"]}, locate, set(), lambda o, d: None) == {}
    assert cross_day_misalignment({}, locate, set(), line_km) == {}  # no day: the empty percentile fails
    assert cross_day_misalignment({1: ["x"]}, locate, set(), line_km) == {"P90": 0.0, "P95": 0.0}


def test_the_shortest_path_is_the_brute_force_minimum_to_the_bit() -> None:
    rng = random.Random(7)
    places = {f"p{i}": (rng.uniform(30, 31), rng.uniform(120, 121)) for i in range(7)}
    order = [*places, "p2"]  # a place visited twice is 0 km from itself

    def km(origin: tuple[float, float], destination: tuple[float, float]) -> float:
        return round(math.dist(origin, destination) * 111.3 + 0.01 * origin[0], 2)  # asymmetric, like roads

    best = float("inf")
    for middle in itertools.permutations(order[1:-1]):
        path = (order[0], *middle, order[-1])
        total: float = 0
        for here, there in itertools.pairwise(path):
            total += 0 if here == there else km(places[here], places[there])
        best = min(best, total)
    assert shortest_path_km(order, places, km) == best


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_shortest_path_of_ten_stops_is_the_brute_force_minimum_to_the_bit(seed: int) -> None:
    rng = random.Random(seed)
    places = {f"p{i}": (rng.uniform(30, 31), rng.uniform(120, 121)) for i in range(10)}
    order = list(places)

    def km(origin: tuple[float, float], destination: tuple[float, float]) -> float:
        return round(math.dist(origin, destination) * 111.3 + 0.01 * origin[0], 2)

    best = min(sum(km(places[here], places[there]) for here, there in itertools.pairwise((order[0], *middle,
                                                                                           order[-1])))
               for middle in itertools.permutations(order[1:-1]))
    assert shortest_path_km(order, places, km) == best
