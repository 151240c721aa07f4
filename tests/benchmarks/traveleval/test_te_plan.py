"""FinalTravelPlan and parse_plan: plans found in model text, bad ones refused with a located reason."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from benchmarks.traveleval.plan import FinalTravelPlan, PlanError, extract_json_object, parse_plan


def sample_plan() -> dict[str, Any]:
    """A two-day plan with every field of the official schema."""
    leg = {"description": "北京南站乘G101前往上海虹桥站", "start_time": "06:10", "end_time": "12:09",
           "location_name": "上海虹桥站", "cost": 996.0, "transportation_to": "高铁", "transportation_cost": 996.0,
           "details": {"transport_number": "G101", "price": 498.0, "number": 2}}
    return {
        "query_uid": "T0001",
        "itinerary": {
            "summary": {"total_days": 2, "total_travelers": 2, "departure": "北京", "destination": "上海",
                        "total_budget": 5000, "calculated_total_cost": 3100.0, "is_within_budget": True},
            "accommodation": {"hotel_name": "上海外滩酒店", "total_cost": 600.0,
                              "room_type": [{"type": "大床房", "quantity": 1, "price_per_night": 600.0, "nights": 1}]},
            "intercity_transport": {"transport_type": [leg, {**leg, "location_name": "北京南站"}],
                                    "total_cost": 1992.0},
            "daily_plans": [
                {"day": 1, "date": "2024-12-15", "starting_point": "北京南站",
                 "ending_point": {"type": "accommodation_check_in", "description": "入住酒店", "start_time": "20:00",
                                  "end_time": "20:30", "location_name": "上海外滩酒店", "cost": 0,
                                  "transportation_to": "地铁", "transportation_cost": 8,
                                  "details": {"transport_time": "30", "line": "2号线"}},
                 "activities": [
                     {"type": "attraction", "description": "游览外滩", "start_time": "14:00", "end_time": "16:00",
                      "location_name": "外滩", "cost": 0, "transportation_to": "地铁", "transportation_cost": 8,
                      "details": {"transport_time": "40", "ticket_type": "免费", "ticket_price": 0,
                                  "ticket_number": 2}},
                     {"type": "meal", "description": "晚餐", "start_time": "18:00", "end_time": "19:00",
                      "location_name": "南翔馒头店", "cost": 200, "transportation_to": "步行",
                      "transportation_cost": 0, "details": {"transport_time": "10", "cuisine": "本帮菜"}}]},
                {"day": 2, "date": "2024-12-16", "starting_point": "上海外滩酒店",
                 "ending_point": {"type": "intercity_transport", "description": "返程", "start_time": "18:00",
                                  "end_time": "23:59", "location_name": "上海虹桥站", "cost": 996,
                                  "transportation_to": "高铁", "transportation_cost": 996,
                                  "details": {"transport_time": "40"}},
                 "activities": [
                     {"type": "accommodation_check_out", "description": "退房", "start_time": "09:00",
                      "end_time": "09:30", "location_name": "上海外滩酒店", "cost": 0, "transportation_to": "步行",
                      "transportation_cost": 0, "details": {"transport_time": "0"}}]},
            ],
            "cost_breakdown": {"attractions": 0, "intercity_transportation": 1992, "intracity_transportation": 16,
                               "accommodation": 600, "meals": 200, "other": 0, "total": 2808},
        },
    }


def test_a_full_plan_round_trips() -> None:
    plan = sample_plan()
    parsed = parse_plan(json.dumps(plan, ensure_ascii=False))
    assert isinstance(parsed, FinalTravelPlan)
    dumped = parsed.model_dump()
    assert dumped["itinerary"]["daily_plans"][0]["activities"][0]["details"] == \
        plan["itinerary"]["daily_plans"][0]["activities"][0]["details"]
    assert json.loads(parsed.model_dump_json()) == json.loads(json.dumps(dumped))
    assert dumped["itinerary"]["summary"]["total_budget"] == 5000.0


@pytest.mark.parametrize("wrap", [
    "{plan}",
    "Here is the plan:\n```json\n{plan}\n```\nEnjoy!",
    "```\n{plan}\n```",
    "思考：预算 {{够用}}。\n最终方案：{plan} 以上。",
    '先看 {{"day": 1}} 再看整体：{plan}',
])
def test_the_plan_is_found_in_model_text(wrap: str) -> None:
    plan = json.dumps(sample_plan(), ensure_ascii=False)
    assert parse_plan(wrap.format(plan=plan)).query_uid == "T0001"


def test_a_fenced_block_that_is_not_json_is_skipped() -> None:
    plan = json.dumps(sample_plan(), ensure_ascii=False)
    assert parse_plan(f"```json\n{{draft\n```\n```json\n{plan}\n```").itinerary.summary.total_days == 2


def test_a_missing_uid_is_filled_but_never_overridden() -> None:
    plan = sample_plan()
    assert parse_plan(json.dumps(plan), query_uid="T0999").query_uid == "T0001"
    del plan["query_uid"]
    assert parse_plan(json.dumps(plan), query_uid="T0999").query_uid == "T0999"
    with pytest.raises(PlanError, match=r"query_uid: Field required"):
        parse_plan(json.dumps(plan))


def test_lax_like_the_official_schema_extras_dropped_text_numbers_read() -> None:
    plan = sample_plan()
    plan["itinerary"]["summary"]["total_days"] = "2"
    plan["itinerary"]["summary"]["mood"] = "happy"
    parsed = parse_plan(json.dumps(plan))
    assert parsed.itinerary.summary.total_days == 2
    assert "mood" not in parsed.itinerary.summary.model_dump()


def _broken(path: str, value: Any) -> str:
    plan: Any = copy.deepcopy(sample_plan())
    target = plan
    *parents, last = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is None:
        del target[last]
    else:
        target[last] = value
    return json.dumps(plan, ensure_ascii=False)


@pytest.mark.parametrize(("path", "value", "reason"), [
    ("itinerary.daily_plans.0.activities.1.start_time", "9:00",
     "itinerary.daily_plans[0].activities[1].start_time: String should match pattern"),
    ("itinerary.daily_plans.0.activities.0.transportation_to", "出租车",
     "itinerary.daily_plans[0].activities[0].transportation_to: Input should be '走路', '步行'"),
    ("itinerary.accommodation.room_type.0.type", "套房", "itinerary.accommodation.room_type[0].type"),
    ("itinerary.daily_plans.1.date", "12/16/2024", "itinerary.daily_plans[1].date: String should match"),
    ("itinerary.cost_breakdown.meals", None, "itinerary.cost_breakdown.meals: Field required"),
    ("itinerary.summary.is_within_budget", "maybe", 'itinerary.summary.is_within_budget: Input should be a valid '
                                                     'boolean, unable to interpret input, got "maybe"'),
])
def test_a_schema_failure_is_located(path: str, value: Any, reason: str) -> None:
    with pytest.raises(PlanError) as raised:
        parse_plan(_broken(path, value))
    assert raised.value.reason.startswith("plan does not fit the schema: ") and reason in raised.value.reason


@pytest.mark.parametrize(("text", "reason"), [
    ("I could not find a plan.", "no JSON object in the answer"),
    ('{"query_uid": "T0001", "itinerary": {"summary": ', "no valid JSON object in the answer (first error: "),
    ("[1, 2, 3]", "no JSON object in the answer"),
    ('{"a":' * 50_000, "no valid JSON object in the answer (first error: nested too deeply)"),
    ("```json\n" + "[" * 100_000 + "\n```", "no JSON object in the answer"),
    ('{"n": ' + "9" * 5000 + "}", "no valid JSON object in the answer (first error: Exceeds the limit (4300 digits)"),
    ('{"n": ' + "9" * 40 + "}", "the JSON object cannot be stored: Integer exceeds 64-bit range"),
    ('{"n": ' + "[" * 300 + "]" * 300 + "}", "the JSON object cannot be stored: Recursion limit reached"),
    # an answer crafted to cost minutes: a "{" every six characters, none starting an object
    ('{"a":1,' + '"{":1,' * 60_000, "no valid JSON object in the answer (first error: Expecting property name"),
    ("x" * 400_001, "the answer is 400,001 characters, more than any plan (400,000): not searched for one"),
])
def test_no_json_object(text: str, reason: str) -> None:
    with pytest.raises(PlanError) as raised:
        extract_json_object(text)
    assert raised.value.reason.startswith(reason)
