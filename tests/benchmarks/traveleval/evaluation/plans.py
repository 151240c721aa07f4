"""A small TravelEval query and plan in the official schema (上海 -> 北京, 2 days, 2 people) for hand-computed
expectations: real names of the staged Beijing sandbox, two real trains (G104 out, G21 back)."""

from __future__ import annotations

import copy
from typing import Any

HOTEL = "北京天安门王府井漫心酒店"
"""Its featurehoteltype is 机器人服务; a 大床房 holds 2."""
TIDU = "提督·TIDU(北京坊店)"
"""A 北京菜 restaurant."""
WOLFGANG = "沃夫冈牛排馆Wolfgang’s Steakhouse(三里屯店)"
"""A 西餐 restaurant."""

QUERY: dict[str, Any] = {
    "uid": "T9001", "tag": "medium", "start_city": "上海", "target_city": "北京", "days": 2, "people_number": 2,
    "people_composition": {"adults": 2, "children": 0, "seniors": 0}, "budget": 5000,
    "dates": "2024-11-13 to 2024-11-14",  # a Wednesday and a Thursday: Weekday, K = 1.0
    "transportation": {"preferences": ["高铁"], "constraints": []},
    "accommodations": {"preferences": ["机器人服务"], "constraints": []},
    "diet": {"preferences": ["北京菜"], "constraints": ["西餐"]},
    "attractions": {"preferences": ["历史古迹"], "constraints": []},
    "rhythm": {},
}


def _activity(kind: str, place: str, start: str, end: str, cost: float, transfer: float,
              details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": kind, "description": place, "start_time": start, "end_time": end, "location_name": place,
            "cost": cost, "transportation_to": "地铁", "transportation_cost": transfer, "details": details}


def _leg(start: str, end: str, place: str, number: str, price: float) -> dict[str, Any]:
    return {"description": number, "start_time": start, "end_time": end, "location_name": place,
            "cost": price * 2, "transportation_to": "高铁", "transportation_cost": 0,
            "details": {"transport_number": number, "price": price, "number": 2}}


PLAN: dict[str, Any] = {"query_uid": "T9001", "itinerary": {
    "summary": {"total_days": 2, "total_travelers": 2, "departure": "上海", "destination": "北京",
                "total_budget": 5000, "calculated_total_cost": 4389, "is_within_budget": True},
    "accommodation": {"hotel_name": HOTEL, "room_type": [
        {"type": "大床房", "quantity": 1, "price_per_night": 655, "nights": 1}], "total_cost": 655},
    "intercity_transport": {"transport_type": [_leg("06:17", "13:12", "北京南站", "G104", 615),
                                               _leg("17:00", "21:18", "上海虹桥站", "G21", 662)],
                            "total_cost": 2554},
    "daily_plans": [
        {"day": 1, "date": "2024-11-13", "starting_point": "北京南站",
         "ending_point": {"type": "accommodation", "description": HOTEL, "start_time": "20:30", "end_time": "21:00",
                          "location_name": HOTEL, "cost": 0, "transportation_to": "步行", "transportation_cost": 0},
         "activities": [
             _activity("attraction", "故宫博物院", "14:00", "15:30", 120, 6, {"ticket_price": 60, "ticket_number": 2}),
             _activity("meal", TIDU, "18:00", "19:00", 300, 30,
                       {"cuisine": "北京菜", "load_limit": 3, "car_number": 1}),
             _activity("accommodation_check_in", HOTEL, "20:00", "20:30", 0, 10)]},
        {"day": 2, "date": "2024-11-14", "starting_point": HOTEL,
         "ending_point": {"type": "intercity_transport", "description": "北京南站", "start_time": "16:30",
                          "end_time": "17:00", "location_name": "北京南站", "cost": 0, "transportation_to": "地铁",
                          "transportation_cost": 8},
         "activities": [
             _activity("attraction", "恭王府", "08:30", "10:30", 80, 4, {"ticket_price": 40, "ticket_number": 2}),
             _activity("attraction", "八达岭长城", "12:00", "14:00", 80, 20, {"ticket_price": 40, "ticket_number": 2}),
             _activity("meal", WOLFGANG, "15:00", "16:00", 500, 20)]},
    ],
    "cost_breakdown": {"attractions": 280, "intercity_transportation": 2554, "intracity_transportation": 100,
                       "accommodation": 655, "meals": 800, "other": 0, "total": 4389},
}}


def plan() -> dict[str, Any]:
    """A fresh deep copy of `PLAN` to edit."""
    return copy.deepcopy(PLAN)


def query() -> dict[str, Any]:
    return copy.deepcopy(QUERY)
