"""The scripted ChatModel of the TravelPlanner agent tests, and a schema-valid plan to script answers with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.travelplanner.agents.conftest import ScriptedModel

QUERY: dict[str, Any] = {
    "uid": "T0001", "tag": "easy", "start_city": "北京", "target_city": "上海", "days": 3, "people_number": 2,
    "people_composition": {"adults": 2, "children": 0, "seniors": 0}, "budget": 3400,
    "dates": "2024-11-15 to 2024-11-17", "transportation": {}, "accommodations": {}, "diet": {}, "attractions": {},
    "rhythm": {}, "nature_language": "我们两个人想从北京去上海玩3天，预算3400元。",
}
"""The staged query T0001, as the file has it (without its English translation)."""


def plan(*, days: int = 3, travelers: int = 2, total: float = 3000.0, uid: str = "T0001") -> dict[str, Any]:
    """A FinalTravelPlan that fits the schema (its contents need not be a good trip)."""
    stop = {"type": "accommodation", "description": "回酒店", "start_time": "20:00", "end_time": "20:30",
            "location_name": "上海柏思特酒店", "cost": 0, "transportation_to": "地铁", "transportation_cost": 8,
            "details": {"transport_time": "30"}}
    visit = {"type": "attraction", "description": "游览", "start_time": "09:00", "end_time": "11:00",
             "location_name": "东方明珠", "cost": 398, "transportation_to": "地铁", "transportation_cost": 8,
             "details": {"transport_time": "20", "ticket_price": 199, "ticket_number": 2}}
    leg = {"description": "去程", "start_time": "06:10", "end_time": "12:09", "location_name": "上海虹桥站",
           "cost": 996, "transportation_to": "高铁", "transportation_cost": 996,
           "details": {"transport_number": "G101", "price": 498, "number": 2}}
    return {"query_uid": uid, "itinerary": {
        "summary": {"total_days": days, "total_travelers": travelers, "departure": "北京", "destination": "上海",
                    "total_budget": 3400, "calculated_total_cost": total, "is_within_budget": total <= 3400},
        "accommodation": {"hotel_name": "上海柏思特酒店", "total_cost": 756,
                          "room_type": [{"type": "大床房", "quantity": 1, "price_per_night": 378, "nights": 2}]},
        "intercity_transport": {"transport_type": [leg], "total_cost": 996},
        "daily_plans": [{"day": d, "date": f"2024-11-{14 + d}", "starting_point": "上海柏思特酒店",
                         "ending_point": stop, "activities": [visit]} for d in range(1, days + 1)],
        "cost_breakdown": {"attractions": 398 * days, "intercity_transportation": 996, "intracity_transportation": 0,
                           "accommodation": 756, "meals": 0, "other": 0, "total": total}}}


def fenced(value: dict[str, Any]) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False, indent=2) + "\n```"


@pytest.fixture
def scripted_model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture(scope="session")
def traveleval_home(traveleval_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home whose `traveleval/` links to the staged query files and database: the sandbox index a run builds
    there stays out of ../shared."""
    home = tmp_path_factory.mktemp("home")
    (home / "traveleval").mkdir()
    for part in ("data", "database"):
        (home / "traveleval" / part).symlink_to(traveleval_data / part, target_is_directory=True)
    return home
