"""`evaluate_plan` on a hand-built plan over the staged sandbox: every metric against a value computed by hand from
the official formulas, each official quirk, each corrected fix, and the error paths."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks.traveleval.evaluation import evaluate_plan
from benchmarks.traveleval.evaluation.city import intercity_options
from benchmarks.traveleval.evaluation.distance import OfficialCaches, OfflineDistances, cache_key
from benchmarks.traveleval.sandbox.cities import CITY_DIRS
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from tests.benchmarks.traveleval.evaluation import plans
from tests.benchmarks.traveleval.evaluation.plans import HOTEL, TIDU, WOLFGANG

pytestmark = pytest.mark.usefixtures("traveleval_sandbox")

WAIT_HISTORIC = 4.0 / 60  # 历史古迹: B = 4 min, Weekday K = 1.0
RATIOS = {"故宫博物院": (1.5 - WAIT_HISTORIC * 1.10) / 1.5,   # 14:00: slot factor 1.10
          "恭王府": (2 - WAIT_HISTORIC * 0.85) / 2,            # 08:30: 0.85
          "八达岭长城": (2 - WAIT_HISTORIC * 1.10) / 2}         # 12:00: 1.10
TRIP_HOURS = 24 * ((21 + 18 / 60 - (6 + 17 / 60)) / 24 + 2 - 1)  # G104 leaves 6:17, G21 arrives 21:18
EXPERIENCE = 4.9 * 2 + 4.8 * 2 + 4.9 * 2  # stars x (1 + one preferred type, 历史古迹, in each)
COST = 280 + 2554 + 98 + 655 + 800  # attractions, intercity, intracity (< 662), hotel, meals


def score(sandbox: Sandbox, plan: dict[str, Any], query: dict[str, Any] | None = None, *, mode: str = "official",
          caches: Path = Path("/nonexistent")) -> dict[str, Any]:
    result = evaluate_plan(plan, plans.query() if query is None else query, sandbox, mode=mode,
                           distances=OfflineDistances(OfficialCaches(caches)))
    json.dumps(result, allow_nan=False)  # strict JSON, always
    return result


def metrics(sandbox: Sandbox, plan: dict[str, Any], **options: Any) -> dict[str, Any]:
    result = score(sandbox, plan, **options)
    assert "metrics" in result, result
    found: dict[str, Any] = result["metrics"]
    return found


def test_every_metric_of_the_plan_by_hand(traveleval_sandbox: Sandbox) -> None:
    result = score(traveleval_sandbox, plans.plan())
    assert (result["query_uid"], result["mode"], result["distance"]) == ("T9001", "official", "offline")
    found = result["metrics"]
    assert list(found) == ["accuracy", "constraint", "time", "space", "economy", "utility"]
    assert found["accuracy"] == pytest.approx({
        "cost_deviation_rate": 2 / COST,  # the plan claims 100 of intracity transport, 98 recomputed
        "fictitious_attraction_rate": 0.0, "opening_hours_violations": 0.0, "transportation_breaks": 0.0,
        "intercity_planning_deviation": (abs(13 - 6 + (12 - 17) / 60 - 6.92) + abs(4.3 - 4.3)) / (6.92 + 4.3),
        # tickets all for 2 people, but the room capacity (2) stays in the ticket sum: (2 + 0) / 3 tickets, and
        # the one car seats (3 - 1) x 1 = 2: deviation 2/3 of 2 people
        "people_deviation": (2 / 3) / 2})
    assert found["constraint"] == {
        "budget_satisfaction": 1, "time_compliance": 1, "people_adaptability": 1, "accommodation_satisfaction": 1,
        "transportation_satisfaction": 1,
        "diet_preference_satisfaction": 0,  # 北京菜 met first, then 西餐 is excluded
        "travel_time_satisfaction": 0}  # 故宫: 1.43 effective hours, recommended at most 1.0
    day1 = RATIOS["故宫博物院"] * 1.5 / (21 - (6 + 17 / 60))  # day 1 starts with G104, ends at the hotel 21:00
    day2 = (RATIOS["恭王府"] * 2 + RATIOS["八达岭长城"] * 2) / (21.3 - 8.5)  # the last day ends with G21
    assert found["time"] == pytest.approx({
        "average_tour_ratio": sum(RATIOS.values()) / 3, "daily_time_utilization": (day1 + day2) / 2,
        "overall_time_utilization": sum(RATIOS.values()) / TRIP_HOURS})
    assert found["space"] == {"RP": 0.0, "CSM": {}}  # no Gaode key, nothing cached
    assert found["economy"]["cost_distribution"] == {
        "attractions": 280.0, "intercity_transportation": 2554.0, "intracity_transportation": 98.0,
        "accommodation": 655.0, "meals": 800.0, "other": 0}
    assert found["economy"]["budget_efficiency"] == pytest.approx(EXPERIENCE / COST * 1000)
    shares = [5 / 9, 2 / 9, 2 / 9]  # 历史古迹 1/3 + 1 + 1/3, 网红打卡点 and 城市地标 1/3 + 1/3 each, of 3 visits
    assert found["utility"] == pytest.approx({
        "aqe": (4.9 * 1.5 + 4.8 * 2 + 4.9 * 2) / TRIP_HOURS,  # no queue time deducted (official quirk)
        "profit": EXPERIENCE / 3,
        "diversity": -sum(p * math.log2(p) for p in shares) / math.log2(24),
        "ads": (3 / 2) / 3.54})


def test_the_corrected_mode_fixes(traveleval_sandbox: Sandbox) -> None:
    found = metrics(traveleval_sandbox, plans.plan(), mode="corrected")
    assert found["accuracy"]["people_deviation"] == 0.0  # tickets and the car all fit 2 people
    assert found["utility"]["aqe"] == pytest.approx(
        (4.9 * (1.5 - WAIT_HISTORIC * 1.10) + 4.8 * (2 - WAIT_HISTORIC * 0.85) + 4.9 * (2 - WAIT_HISTORIC * 1.10))
        / TRIP_HOURS)
    assert found["space"]["RP"] > 0  # offline distances: day 2 goes to 八达岭 and back into town
    assert set(found["space"]["CSM"]) == {"P90", "P95"}
    assert found["accuracy"]["transportation_breaks"] == 0.0  # every place located, offline assumes transit


def test_budget_is_the_plans_own_claim(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    plan["itinerary"]["summary"]["total_budget"] = 4000  # the query's budget is 5000, the cost 4387
    assert metrics(traveleval_sandbox, plan)["constraint"]["budget_satisfaction"] == 0
    assert metrics(traveleval_sandbox, plan, mode="corrected")["constraint"]["budget_satisfaction"] == 1
    plan["itinerary"]["summary"]["is_within_budget"] = False
    assert metrics(traveleval_sandbox, plan, mode="corrected")["constraint"]["budget_satisfaction"] == 0


def test_transport_constraints_only_count_on_the_last_leg(traveleval_sandbox: Sandbox) -> None:
    plan, query = plans.plan(), plans.query()
    query["transportation"] = {"preferences": [], "constraints": ["高铁"]}
    plan["itinerary"]["intercity_transport"]["transport_type"][1]["transportation_to"] = "飞机"
    assert metrics(traveleval_sandbox, plan, query=query)["constraint"]["transportation_satisfaction"] == 1
    assert metrics(traveleval_sandbox, plan, query=query,
                   mode="corrected")["constraint"]["transportation_satisfaction"] == 0


def test_excluded_cuisines_are_ignored_while_preferences_are_pending(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    days = plan["itinerary"]["daily_plans"]
    meals = [days[0]["activities"][1], days[1]["activities"][2]]
    meals[0]["location_name"], meals[1]["location_name"] = WOLFGANG, TIDU  # 西餐 first, then 北京菜
    assert metrics(traveleval_sandbox, plan)["constraint"]["diet_preference_satisfaction"] == 1
    assert metrics(traveleval_sandbox, plan, mode="corrected")["constraint"]["diet_preference_satisfaction"] == 0


def test_a_meal_at_an_unknown_restaurant_keeps_the_previous_cuisine(traveleval_sandbox: Sandbox) -> None:
    plan, query = plans.plan(), plans.query()
    query["diet"] = {"preferences": [], "constraints": ["北京菜"]}
    days = plan["itinerary"]["daily_plans"]
    days[0]["activities"][1]["location_name"] = "不存在的饭馆"
    days[1]["activities"][2]["location_name"] = "另一家不存在的饭馆"
    assert metrics(traveleval_sandbox, plan, query=query)["constraint"]["diet_preference_satisfaction"] == 1
    days[0]["activities"][1]["location_name"] = TIDU  # 北京菜, then an unknown place "still" serves it
    assert metrics(traveleval_sandbox, plan, query=query)["constraint"]["diet_preference_satisfaction"] == 0


def test_a_fictitious_attraction_and_a_visit_before_opening(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    days = plan["itinerary"]["daily_plans"]
    days[0]["activities"][0]["location_name"] = "不存在的景点"
    days[1]["activities"][0]["start_time"] = "08:29"  # 恭王府 opens 8:30 (08:30 itself is inside)
    found = metrics(traveleval_sandbox, plan)["accuracy"]
    assert found["fictitious_attraction_rate"] == pytest.approx(1 / 3)
    assert found["opening_hours_violations"] == pytest.approx(1 / 2)  # 恭王府 and 八达岭长城 are checked
    assert found["transportation_breaks"] == 0.0  # official: never a break
    corrected = metrics(traveleval_sandbox, plan, mode="corrected")["accuracy"]
    # day 1: 北京南站 -> fake -> 提督 -> hotel (-> hotel: same place); day 2: 4 transfers, all located
    assert corrected["transportation_breaks"] == pytest.approx(2 / 7)


def test_the_sandbox_is_the_plans_destination(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    plan["itinerary"]["summary"]["destination"] = "上海"  # the plan says Shanghai, the query Beijing
    found = metrics(traveleval_sandbox, plan)
    assert found["accuracy"]["opening_hours_violations"] == 0.0  # no Beijing attraction in Shanghai's sandbox
    assert found["accuracy"]["intercity_planning_deviation"] == 1.0  # 上海 -> 上海: no train, no flight
    assert found["constraint"]["accommodation_satisfaction"] == 0
    assert found["utility"]["profit"] == 0.0
    corrected = metrics(traveleval_sandbox, plan, mode="corrected")
    assert corrected["utility"]["profit"] == pytest.approx(EXPERIENCE / 3)
    plan["itinerary"]["summary"]["destination"] = "火星"  # an unknown city: the official empty-table defaults
    found = metrics(traveleval_sandbox, plan)
    assert found["accuracy"]["fictitious_attraction_rate"] == 1.0
    assert found["accuracy"]["opening_hours_violations"] == 1.0
    assert found["constraint"]["travel_time_satisfaction"] == 1
    assert found["constraint"]["diet_preference_satisfaction"] == 0


def test_a_missing_star_is_nan_written_as_null(traveleval_sandbox: Sandbox) -> None:
    plan, query = plans.plan(), plans.query()
    query["target_city"] = plan["itinerary"]["summary"]["destination"] = "成都"
    plan["itinerary"]["daily_plans"][1]["activities"][0]["location_name"] = "天然图画"  # star missing
    found = metrics(traveleval_sandbox, plan, query=query)
    assert found["utility"]["aqe"] is None
    assert found["utility"]["profit"] is None
    assert found["economy"]["budget_efficiency"] is None
    corrected = metrics(traveleval_sandbox, plan, query=query, mode="corrected")
    assert corrected["utility"]["profit"] == pytest.approx(3.0 / 3)  # 天然图画 alone in Chengdu: 3.0 stars x 1.0


def test_spatial_metrics_read_the_official_cache_without_a_key(traveleval_sandbox: Sandbox, tmp_path: Path) -> None:
    plan = plans.plan()
    for day in plan["itinerary"]["daily_plans"]:
        day["activities"] = [activity for activity in day["activities"] if activity["type"] == "attraction"]
    places = {name: traveleval_sandbox.poi_position("beijing", name) for name in ("故宫博物院", "恭王府", "八达岭长城")}
    # poi.json order of the three (the official pair order), 10 km apart from each other except 恭王府-长城 60 km
    ordered = sorted(places, key=traveleval_sandbox.poi_names("beijing").index)
    answers = {frozenset(("故宫博物院", "恭王府")): 10.0, frozenset(("故宫博物院", "八达岭长城")): 10.0,
               frozenset(("恭王府", "八达岭长城")): 60.0}
    cache = {cache_key("driving", places[a], places[b]): answers[frozenset((a, b))]  # type: ignore[arg-type]
             for i, a in enumerate(ordered) for b in ordered[i + 1:]}
    (tmp_path / "geo_cache.json").write_text(json.dumps(cache), encoding="utf-8")
    found = metrics(traveleval_sandbox, plan, caches=tmp_path)["space"]
    assert found["RP"] == 0.0  # the route search needs every ordered pair of a day's stops: one direction is cached
    # 故宫 (day 1) vs day 2's mean 10; 恭王府: 60 / 10; 长城: 60 / 10 -> values [0.0, 6.0, 6.0]
    assert found["CSM"] == pytest.approx({"P90": 6.0, "P95": 6.0})


def test_route_penalty_from_official_caches_holding_every_pair(traveleval_sandbox: Sandbox, tmp_path: Path) -> None:
    """The official code always has a Gaode key (its default configuration carries one) and reads its cache first:
    with every pair cached, RP is computed without the API."""
    plan = plans.plan()
    for day in plan["itinerary"]["daily_plans"]:
        day["activities"] = [activity for activity in day["activities"] if activity["type"] == "attraction"]
    # day 1: 北京南站 -> 故宫博物院 -> hotel (one stop between fixed ends: RP 0)
    # day 2: hotel -> 恭王府 -> 八达岭长城 -> 北京南站 on a line: 5 + 4 + 5 = 14 km;
    # the shortest, hotel -> 长城 -> 恭王府 -> 南站: 1 + 4 + 1 = 6 km
    line = {HOTEL: 0.0, "八达岭长城": 1.0, "故宫博物院": 3.0, "恭王府": 5.0, "北京南站": 6.0}
    places = {name: traveleval_sandbox.poi_position("beijing", name) for name in line}
    cache = {cache_key("driving", places[a], places[b]): abs(line[a] - line[b])  # type: ignore[arg-type]
             for a in line for b in line if a != b}
    (tmp_path / "geo_cache.json").write_text(json.dumps(cache), encoding="utf-8")
    measured = score(traveleval_sandbox, plan, caches=tmp_path)
    assert measured["metrics"]["space"]["RP"] == pytest.approx((0 + 14 / 6 - 1) / 2)
    assert "space.RP" not in measured["not_measured"] and "space.CSM" not in measured["not_measured"]
    (tmp_path / "geo_cache.json").write_text(json.dumps(dict(list(cache.items())[1:])), encoding="utf-8")
    missing = score(traveleval_sandbox, plan, caches=tmp_path)
    assert missing["metrics"]["space"]["RP"] == 0.0  # one pair missing: the official stand-in...
    assert "AMAP_API_KEY" in missing["not_measured"]["space.RP"]  # ...recorded as not measured, with how to get it


def test_what_is_not_measured_is_recorded(traveleval_sandbox: Sandbox) -> None:
    """Without a distance the official RP 0.0 and CSM {} are stand-ins, and `official` never checks a transfer: the
    result says so (reports show them as not measured); `corrected` measures all three offline."""
    official = score(traveleval_sandbox, plans.plan())
    assert sorted(official["not_measured"]) == ["accuracy.transportation_breaks", "space.CSM", "space.RP"]
    assert official["metrics"]["space"] == {"RP": 0.0, "CSM": {}}
    assert score(traveleval_sandbox, plans.plan(), mode="corrected")["not_measured"] == {}


@pytest.mark.parametrize(("edit", "error", "kept"), [
    (lambda p: p["itinerary"].pop("summary"), "no itinerary.summary", None),
    (lambda p: p["itinerary"]["summary"].update(destination=None), "not a city name", None),
    (lambda p: p["itinerary"]["daily_plans"][0]["activities"][0].update(cost="free"), "plan extraction: ValueError",
     None),
    (lambda p: p["itinerary"].pop("cost_breakdown"), "accuracy: KeyError", []),
    (lambda p: p["itinerary"]["accommodation"].update(room_type=[]), "constraint: ZeroDivisionError", ["accuracy"]),
    # the constraint check stops at 故宫 (over its recommended time), the time dimension reads 恭王府's time
    (lambda p: p["itinerary"]["daily_plans"][1]["activities"][0].update(start_time=None), "time: AttributeError",
     ["accuracy", "constraint"]),
])
def test_where_the_official_code_raises_the_plan_is_an_error_with_the_dimensions_before_it(
        traveleval_sandbox: Sandbox, edit: Any, error: str, kept: list[str] | None) -> None:
    """As the official evaluator's "error" row: a metric that raises keeps the dimensions computed before it (with
    the values an intact plan's dimensions have); a plan that cannot be read has none."""
    plan = plans.plan()
    edit(plan)
    result = score(traveleval_sandbox, plan)
    assert result["query_uid"] == "T9001"
    assert error in result["error"]
    if kept is None:
        assert "metrics" not in result
        return
    assert list(result["metrics"]) == kept
    whole = score(traveleval_sandbox, plans.plan())
    if "constraint" in kept:  # the edit touches no field the accuracy and constraint metrics read
        assert result["metrics"]["constraint"] == whole["metrics"]["constraint"]


def test_a_plan_of_nothing_costs_nothing_and_fails(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    itinerary = plan["itinerary"]
    itinerary["intercity_transport"]["transport_type"] = []
    itinerary["accommodation"]["room_type"] = [{"type": "大床房", "quantity": 1, "price_per_night": 0, "nights": 1}]
    for day in itinerary["daily_plans"]:
        day["activities"] = []
        day["ending_point"]["transportation_cost"] = 0
    assert "accuracy: ZeroDivisionError" in score(traveleval_sandbox, plan)["error"]


def test_an_unknown_query(traveleval_sandbox: Sandbox) -> None:
    result = evaluate_plan(plans.plan(), None, traveleval_sandbox, distances=OfflineDistances(OfficialCaches(
        Path("/nonexistent"))))
    assert result["error"] == "no TravelEval query with uid 'T9001'"


def test_hotel_and_people_checks(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    plan["itinerary"]["accommodation"]["room_type"][0]["type"] = "单人房"  # holds 1 of the 2
    found = metrics(traveleval_sandbox, plan)
    assert found["constraint"]["people_adaptability"] == 0
    assert found["accuracy"]["people_deviation"] == pytest.approx((1 + (1 + 0) / 3) / 2)
    plan = plans.plan()
    plan["itinerary"]["accommodation"]["room_type"][0]["nights"] = 2  # 2 nights in a 2-day trip
    assert metrics(traveleval_sandbox, plan)["constraint"]["accommodation_satisfaction"] == 0
    plan, query = plans.plan(), plans.query()
    query["accommodations"] = {"preferences": [], "constraints": ["机器人服务"]}
    assert metrics(traveleval_sandbox, plan, query=query)["constraint"]["accommodation_satisfaction"] == 0
    assert HOTEL in json.dumps(plan, ensure_ascii=False)


# Adversarial plans (a second, independent reading of the official code): odd clock texts, numbers as strings,
# missing sections. Each expectation is what the official functions compute on them, worked out by hand.

def test_a_visit_starting_at_24_00(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    plan["itinerary"]["daily_plans"][0]["activities"][0]["start_time"] = "24:00"  # 故宫, still ending 15:30
    found = metrics(traveleval_sandbox, plan)
    # the official `H:MM` readers split on ":" and take int(): 24:00 is minute 1440, after 故宫's 17:00 closing
    assert found["accuracy"]["opening_hours_violations"] == pytest.approx(1 / 3)
    # start hour 24 > end hour 15: the duration wraps, (15 + 24 - 24) + 30/60 = 15.5 h; minute 1440 is in no
    # time slot ([20:00, 24:00) excludes it), so K(time slot) = 1.0
    palace = (15.5 - WAIT_HISTORIC * 1.0) / 15.5
    assert found["time"]["average_tour_ratio"] == pytest.approx(
        (palace + RATIOS["恭王府"] + RATIOS["八达岭长城"]) / 3)
    day1 = palace * 15.5 / (21 - (6 + 17 / 60))  # the window is widened by end times only; 24:00 is a start
    day2 = (RATIOS["恭王府"] * 2 + RATIOS["八达岭长城"] * 2) / (21.3 - 8.5)
    assert found["time"]["daily_time_utilization"] == pytest.approx((day1 + day2) / 2)
    assert found["utility"]["aqe"] == pytest.approx((4.9 * 15.5 + 4.8 * 2 + 4.9 * 2) / TRIP_HOURS)


def test_a_one_digit_minute_reads_as_that_minute(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    plan["itinerary"]["daily_plans"][1]["activities"][0]["start_time"] = "8:5"  # 恭王府 at 8:05, until 10:30
    found = metrics(traveleval_sandbox, plan)
    assert found["accuracy"]["opening_hours_violations"] == pytest.approx(1 / 3)  # before its 8:30 opening
    hours = 2 + 25 / 60
    prince = (hours - WAIT_HISTORIC * 0.85) / hours  # minute 485: the 08:00-10:00 slot
    assert found["time"]["average_tour_ratio"] == pytest.approx(
        (RATIOS["故宫博物院"] + prince + RATIOS["八达岭长城"]) / 3)
    day1 = RATIOS["故宫博物院"] * 1.5 / (21 - (6 + 17 / 60))
    day2 = (prince * hours + RATIOS["八达岭长城"] * 2) / (21.3 - (8 + 5 / 60))  # the day now starts at 8:05
    assert found["time"]["daily_time_utilization"] == pytest.approx((day1 + day2) / 2)


def test_numbers_as_strings_pass_where_float_reads_them(traveleval_sandbox: Sandbox) -> None:
    base = metrics(traveleval_sandbox, plans.plan())
    plan = plans.plan()
    itinerary = plan["itinerary"]
    itinerary["daily_plans"][0]["activities"][1]["cost"] = "300"  # the meal has no ticket price: float("300")
    itinerary["daily_plans"][0]["activities"][0]["transportation_cost"] = "6"
    itinerary["cost_breakdown"] = {key: str(value) for key, value in itinerary["cost_breakdown"].items()}
    itinerary["summary"]["total_budget"] = "5000"
    # the first leg's price is only multiplied; only the LAST leg's price is compared with transfer costs
    itinerary["intercity_transport"]["transport_type"][0]["details"]["price"] = "615"
    # a meal's clock times are only read by H:MM splits that ignore a third part
    itinerary["daily_plans"][0]["activities"][1]["start_time"] = "18:00:00"
    assert metrics(traveleval_sandbox, plan) == base


@pytest.mark.parametrize(("edit", "error"), [
    # the last leg's price is compared with each transfer cost: float < str
    (lambda it: it["intercity_transport"]["transport_type"][1]["details"].update(price="662"), "accuracy: TypeError"),
    # people_deviation subtracts the people count from the raw ticket_number
    (lambda it: it["daily_plans"][0]["activities"][0]["details"].update(ticket_number="2"), "accuracy: TypeError"),
    # the closest database train is found with strptime("%H:%M"), which refuses hour 24
    (lambda it: it["intercity_transport"]["transport_type"][0].update(end_time="24:00"), "accuracy: ValueError"),
    # accommodation_satisfaction compares the mean nights with total_days - 1
    (lambda it: it["summary"].update(total_days="2"), "constraint: TypeError"),
    (lambda it: it.pop("daily_plans"), "accuracy: KeyError"),  # extraction reads .get, the cost reads ["daily_plans"]
    (lambda it: it["daily_plans"][0].pop("ending_point"), "time: AttributeError"),  # day 1's window needs its end
    # an attraction's time slot unpacks start_time.split(":") into two ints (a meal's is never read that way)
    (lambda it: it["daily_plans"][0]["activities"][0].update(start_time="14:00:00"), "constraint: ValueError"),
])
def test_odd_fields_fail_where_the_official_code_raises(traveleval_sandbox: Sandbox, edit: Any, error: str) -> None:
    plan = plans.plan()
    edit(plan["itinerary"])
    assert error in score(traveleval_sandbox, plan)["error"]


def test_one_located_place_gives_csm_percentiles_of_zero(traveleval_sandbox: Sandbox) -> None:
    plan = plans.plan()
    days = plan["itinerary"]["daily_plans"]
    days[0]["activities"] = days[0]["activities"][:1]  # 故宫 alone; no distance is ever asked for
    days[1]["activities"] = []
    found = metrics(traveleval_sandbox, plan)["space"]
    # official calculate_cross_day_misalignment: 故宫 has no same-day neighbour and no non-empty other day, so its
    # value is 0.0; the percentiles of [0.0] are 0.0: {} only comes when a distance is missing or there is no day
    assert found == {"RP": 0.0, "CSM": {"P90": 0.0, "P95": 0.0}}


@pytest.mark.parametrize(("departure", "destination", "flights", "deviation"), [
    ("上海", "北京", 89, 1.3614035087719298),
    ("上", "北京", 89, 1.3614035087719298),  # a prefix of 上海's airports only
    ("", "北京", 585, 0.923956546598056),  # every flight to or from Beijing's airports
    ("上海", "", 457, 1.1004993757802748),
])
def test_flights_are_chosen_by_airport_prefix_as_the_official_loader_does(
        traveleval_sandbox: Sandbox, departure: str, destination: str, flights: int, deviation: float) -> None:
    """The official loader keeps the flights whose airports start with the summary's two texts, whatever they are.
    The deviations were computed apart from this code, from a reading of the official loader and metric."""
    assert len(intercity_options(traveleval_sandbox, departure, destination)[1]) == flights
    plan = plans.plan()
    summary, legs = plan["itinerary"]["summary"], plan["itinerary"]["intercity_transport"]["transport_type"]
    summary.update(departure=departure, destination=destination)
    for leg, airport in zip(legs, ("北京首都国际机场", "上海虹桥国际机场"), strict=True):
        leg.update(transportation_to="飞机", location_name=airport)
    found = metrics(traveleval_sandbox, plan)["accuracy"]["intercity_planning_deviation"]
    assert found == pytest.approx(deviation)


def test_the_indexed_flights_of_two_cities_are_the_prefix_matched_ones(traveleval_sandbox: Sandbox) -> None:
    """The flights the sandbox's tools answer with (by city, from the index) are those the evaluator selects (by
    airport prefix, as the official loader), for all 100 pairs of cities."""
    for departure, destination in itertools.product(CITY_DIRS, repeat=2):
        indexed = traveleval_sandbox.flights(departure, destination, both_ways=True)
        selected = intercity_options(traveleval_sandbox, departure, destination)[1]
        assert [(f.to_airport, f.begin_time, f.end_time) for f in indexed] == [
            (o.to, o.begin_time, o.end_time) for o in selected], (departure, destination)


def test_no_queue_mode_is_official_with_every_visit_unqueued(traveleval_sandbox: Sandbox) -> None:
    official = metrics(traveleval_sandbox, plans.plan())
    no_queue = metrics(traveleval_sandbox, plans.plan(), mode="no-queue")
    # every visit's effective time is its whole duration: each tour ratio is 1 (all above the recommended minimum)
    assert no_queue["time"] == pytest.approx({
        "average_tour_ratio": 1.0,
        "daily_time_utilization": (1.5 / (21 - (6 + 17 / 60)) + (2 + 2) / (21.3 - 8.5)) / 2,
        "overall_time_utilization": 3 / TRIP_HOURS})
    assert no_queue["constraint"]["travel_time_satisfaction"] == 0  # 故宫: 1.5 hours, still above its 1.0 maximum
    assert {name: values for name, values in no_queue.items() if name != "time"} == {
        name: values for name, values in official.items() if name != "time"}
