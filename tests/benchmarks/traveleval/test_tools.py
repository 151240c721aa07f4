"""The agents' sandbox tools on the staged database: answers, paging, and every kind of bad call."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import (
    ARGUMENT_ERROR,
    INVALID_ACTION,
    PAGE_SIZE,
    TOOLS,
    TOOLS_TEXT,
    haversine_km,
    intercity_stations,
    run_tool,
)


def test_trains_show_what_a_plan_needs(traveleval_sandbox: Sandbox) -> None:
    result = run_tool(traveleval_sandbox, "search_trains", {"from_city": "北京", "to_city": "上海"})
    assert result.error is None
    lines = result.observation.splitlines()
    assert lines[0] == "56 trains. Page 1 of 3: add \"page\": 2 for more."
    assert lines[2] == "G101 | 高铁 | 北京南站 06:10 -> 上海虹桥站 12:09 | 5.98 h | 498"
    assert len(lines) == 2 + PAGE_SIZE


def test_pinyin_and_chinese_city_names_give_the_same_answer(traveleval_sandbox: Sandbox) -> None:
    chinese = run_tool(traveleval_sandbox, "search_flights", {"from_city": "北京", "to_city": "上海", "page": 3})
    pinyin = run_tool(traveleval_sandbox, "search_flights", {"from_city": "beijing", "to_city": "shanghai", "page": 3})
    assert chinese == pinyin and chinese.observation.startswith("46 flights.\n")  # the last page says no more


def test_hotel_filters_keep_free_rooms_under_the_price(traveleval_sandbox: Sandbox) -> None:
    result = run_tool(traveleval_sandbox, "search_hotels", {"city": "上海", "feature": "免费停车", "max_price": 400})
    rows = result.observation.splitlines()[2:]
    assert rows[0] == "上海柏思特酒店 | 免费停车 | 单人房 340 (1 left), 大床房 378 (1 left), 双人房 382 (1 left)"
    for row in rows:
        name, feature, offers = row.split(" | ")
        hotel = traveleval_sandbox.hotel("上海", name)
        assert hotel is not None and feature == "免费停车"
        for offer in offers.split(", "):
            room_type, price, _ = offer.split(" ", 2)
            room = hotel.room(room_type)
            assert room is not None and room.price == int(price) <= 400 and room.stock > 0


def test_attraction_and_restaurant_filters(traveleval_sandbox: Sandbox) -> None:
    attractions = run_tool(traveleval_sandbox, "search_attractions", {"city": "上海", "type": "历史古迹"}).observation
    assert attractions.startswith("24 attractions.")
    assert "城隍庙 | 历史古迹、城市地标、网红打卡点 | 00:00-24:00 | 10 | 0.5-1 h | 4.9" in attractions
    restaurants = run_tool(traveleval_sandbox, "search_restaurants",
                           {"city": "shanghai", "cuisine": "本帮菜", "max_price": 100}).observation
    assert all(" | 本帮菜 | " in row and float(row.split(" | ")[2]) <= 100 for row in restaurants.splitlines()[2:])


def test_places_subway_and_distance(traveleval_sandbox: Sandbox) -> None:
    places = run_tool(traveleval_sandbox, "find_place", {"city": "上海", "name": "虹桥国际机场"}).observation
    assert "上海虹桥国际机场" in places.splitlines()
    subway = run_tool(traveleval_sandbox, "search_subway", {"city": "上海", "station": "陆家嘴"}).observation
    assert subway.startswith("2 subway lines.") and "\n2号线 | 浦东国际机场 - " in subway
    distance = run_tool(traveleval_sandbox, "get_distance",
                        {"city": "上海", "origin": "东方明珠", "destination": "上海虹桥站"}).observation
    assert distance == "东方明珠 -> 上海虹桥站: 18.6 km in a straight line."


def test_haversine_matches_a_known_distance() -> None:
    # Beijing (39.9042, 116.4074) to Shanghai (31.2304, 121.4737): about 1,068 km great-circle
    assert haversine_km(39.9042, 116.4074, 31.2304, 121.4737) == pytest.approx(1067.3, abs=1)


def test_an_empty_result_is_an_answer_not_an_error(traveleval_sandbox: Sandbox) -> None:
    result = run_tool(traveleval_sandbox, "search_restaurants", {"city": "上海", "cuisine": "no such cuisine"})
    assert result.observation == "No restaurants found." and result.error is None


@pytest.mark.parametrize(("name", "arguments", "error", "says"), [
    ("book_hotel", {"city": "上海"}, INVALID_ACTION, "There is no tool 'book_hotel'"),
    ("search_hotels", {}, ARGUMENT_ERROR, "needs 'city'"),
    ("search_hotels", {"city": "拉萨"}, ARGUMENT_ERROR, "Unknown city '拉萨'"),
    ("search_hotels", {"city": ["上海"]}, ARGUMENT_ERROR, "'city' must be a JSON string"),
    ("search_hotels", {"city": "上海", "max_price": True}, ARGUMENT_ERROR, "'max_price' must be a JSON number"),
    ("search_hotels", {"city": "上海", "page": 99}, ARGUMENT_ERROR, "page must be between 1 and"),
    ("search_hotels", {"city": "上海", "page": 2.0}, ARGUMENT_ERROR, "'page' must be a JSON integer, not 2.0"),
    ("search_hotels", {"city": "上海", "stars": 5}, ARGUMENT_ERROR, "takes no argument stars"),
    ("search_hotels", {"city": "上海' OR 1=1 --"}, ARGUMENT_ERROR, "Unknown city"),
    ("find_place", {"city": "上海", "name": "\ud800"}, None, "No places whose name contains"),
    ("get_distance", {"city": "上海", "origin": "东方明珠", "destination": "月球"}, ARGUMENT_ERROR,
     "No place named '月球'"),
])
def test_bad_calls_are_classed_observations(traveleval_sandbox: Sandbox, name: str, arguments: dict[str, Any],
                                            error: str | None, says: str) -> None:
    result = run_tool(traveleval_sandbox, name, arguments)
    assert result.error == error and says in result.observation


def test_every_tool_is_in_the_prompt_text() -> None:
    for name in TOOLS:
        assert f"\n{name} {{" in f"\n{TOOLS_TEXT}"


def test_intercity_stations_are_the_train_stations_then_both_cities_airports(traveleval_sandbox: Sandbox) -> None:
    assert intercity_stations(traveleval_sandbox, "北京", "上海") == [
        "北京南站", "上海虹桥站", "上海站", "北京站", "上海松江站", "北京丰台站", "上海南站", "上海金山北站",
        "北京亦庄站", "北京大兴国际机场", "北京首都国际机场", "上海浦东国际机场", "上海虹桥国际机场"]
    suzhou_hangzhou = intercity_stations(traveleval_sandbox, "苏州", "杭州")
    assert [name for name in suzhou_hangzhou if name.endswith("机场")] == ["杭州萧山国际机场"]  # 苏州 has no airport
