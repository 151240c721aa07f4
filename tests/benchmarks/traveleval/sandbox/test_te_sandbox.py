"""The TravelEval sandbox against the staged files read as the official loader reads them (pandas, json)."""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchmarks.traveleval.sandbox.cities import CITY_DIRS
from benchmarks.traveleval.sandbox.sandbox import Sandbox

# Row counts of SOURCES.md §4 and the spec.
COUNTS = {"attractions": 3411, "hotels": 4976, "restaurants": 4655, "poi": 13271, "trains": 8089, "flights": 1703,
          "subway_lines": 161}


def _nan_to_none(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _pandas_rows(path: Path) -> list[dict[str, Any]]:
    return [{k: _nan_to_none(v) for k, v in row.items()} for row in pd.read_csv(path).to_dict("records")]


def test_row_counts_match_the_staged_files(traveleval_sandbox: Sandbox) -> None:
    assert traveleval_sandbox.counts() == COUNTS
    assert traveleval_sandbox.cities() == tuple(sorted(CITY_DIRS.values()))
    sandbox = traveleval_sandbox
    assert sum(len(sandbox.attractions(city)) for city in sandbox.cities()) == COUNTS["attractions"]
    assert sum(len(sandbox.hotels(city)) for city in sandbox.cities()) == COUNTS["hotels"]
    assert sum(len(sandbox.restaurants(city)) for city in sandbox.cities()) == COUNTS["restaurants"]
    assert sum(len(sandbox.poi_names(city)) for city in sandbox.cities()) == COUNTS["poi"]
    assert sum(len(sandbox.subway_lines(city)) for city in sandbox.cities()) == COUNTS["subway_lines"]
    assert sum(len(sandbox.trains(a, b)) for a in CITY_DIRS for b in CITY_DIRS if a != b) == COUNTS["trains"]


@pytest.mark.parametrize("city", sorted(CITY_DIRS.values()))
def test_csv_tables_hold_what_pandas_reads(traveleval_data: Path, traveleval_sandbox: Sandbox, city: str) -> None:
    database = traveleval_data / "database"
    attractions = _pandas_rows(database / "attractions" / city / "attractions.csv")
    assert [{k: v for k, v in vars_of(a).items() if k != "city"} for a in traveleval_sandbox.attractions(city)] \
        == attractions
    hotels = _pandas_rows(database / "accommodations" / city / "accommodations.csv")
    ours = []
    for hotel in traveleval_sandbox.hotels(city):
        row = {k: v for k, v in vars_of(hotel).items() if k not in ("city", "rooms")}
        for room in hotel.rooms:
            row |= {f"{room.column}_price": room.price, f"{room.column}_stock": room.stock}
        ours.append(row)
    assert ours == hotels
    restaurants = _pandas_rows(database / "restaurants" / city / f"restaurants_{city}.csv")
    assert [{k: v for k, v in vars_of(r).items() if k != "city"} for r in traveleval_sandbox.restaurants(city)] \
        == restaurants


def vars_of(row: Any) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__slots__}


def test_missing_stars_are_none_and_every_other_field_is_present(traveleval_sandbox: Sandbox) -> None:
    starless = [(a.city, a.name) for city in traveleval_sandbox.cities() for a in traveleval_sandbox.attractions(city)
                if a.star is None]
    assert starless == [("chengdu", "天然图画"), ("chongqing", "芙蓉江"), ("guangzhou", "空中缆车")]


def test_single_lookups_by_chinese_or_pinyin_city(traveleval_sandbox: Sandbox) -> None:
    palace = traveleval_sandbox.attraction("北京", "故宫博物院")
    assert palace == traveleval_sandbox.attraction("beijing", "故宫博物院")
    assert palace is not None and (palace.opentime, palace.endtime, palace.star) == ("8:30", "17:00", 4.9)
    assert palace.types == ("历史古迹", "网红打卡点", "城市地标")
    hotel = traveleval_sandbox.hotel("北京", "北京天安门王府井漫心酒店")
    assert hotel is not None and hotel.featurehoteltype == "机器人服务"
    assert hotel.room("大床房") == hotel.room("king_room")
    assert (hotel.room("大床房").price, hotel.room("家庭房").stock) == (655, 2)  # type: ignore[union-attr]
    restaurant = traveleval_sandbox.restaurant("北京", "提督·TIDU(北京坊店)")
    assert restaurant is not None and (restaurant.cuisine, restaurant.price) == ("北京菜", 337.0)
    assert traveleval_sandbox.poi_position("北京", "北京站") == (39.902895, 116.427915)
    assert traveleval_sandbox.attraction("上海", "故宫博物院") is None
    assert traveleval_sandbox.poi_position("北京", "不存在的地方") is None


def test_a_name_twice_in_a_city_finds_the_first_row(traveleval_data: Path, traveleval_sandbox: Sandbox) -> None:
    frame = pd.read_csv(traveleval_data / "database" / "accommodations" / "shenzhen" / "accommodations.csv")
    name = frame[frame.name.duplicated()].name.iloc[0]
    first = frame[frame.name == name].iloc[0]
    hotel = traveleval_sandbox.hotel("深圳", name)
    assert hotel is not None and hotel.id == first.id and hotel.lat == first.lat


def test_trains_are_the_files_records_and_both_ways_concatenates(traveleval_data: Path,
                                                                 traveleval_sandbox: Sandbox) -> None:
    folder = traveleval_data / "database" / "intercity_transport" / "train"
    there = json.loads((folder / "from_北京_to_上海.json").read_text(encoding="utf-8"))
    back = json.loads((folder / "from_上海_to_北京.json").read_text(encoding="utf-8"))

    def official(train: Any) -> dict[str, Any]:
        return {"TrainID": train.train_id, "TrainType": train.train_type, "From": train.from_station,
                "To": train.to_station, "BeginTime": train.begin_time, "EndTime": train.end_time,
                "Duration": train.duration, "Cost": train.cost}

    assert [official(t) for t in traveleval_sandbox.trains("北京", "shanghai")] == there
    assert [official(t) for t in traveleval_sandbox.trains("beijing", "上海", both_ways=True)] == there + back


def test_flights_match_airports_by_city_prefix_as_the_official_loader(traveleval_data: Path,
                                                                     traveleval_sandbox: Sandbox) -> None:
    lines = (traveleval_data / "database" / "intercity_transport" / "airplane.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in lines.splitlines() if line.strip()]
    one_way = [r for r in records if r["From"].startswith("北京") and r["To"].startswith("成都")]
    both = [r for r in records if (r["From"].startswith("北京") and r["To"].startswith("成都"))
            or (r["From"].startswith("成都") and r["To"].startswith("北京"))]
    assert len(one_way) > 0 and len(both) > len(one_way)
    assert [f.flight_id for f in traveleval_sandbox.flights("北京", "chengdu")] == [r["FlightID"] for r in one_way]
    assert [(f.flight_id, f.cost) for f in traveleval_sandbox.flights("beijing", "成都", both_ways=True)] \
        == [(r["FlightID"], r["Cost"]) for r in both]


def test_subway_positions_are_split_lon_lat(traveleval_data: Path, traveleval_sandbox: Sandbox) -> None:
    raw = json.loads((traveleval_data / "database" / "transportation" / "subways.json").read_text(encoding="utf-8"))
    line = traveleval_sandbox.subway_lines("北京")[0]
    first = raw["beijing"][0]
    assert line.name == first["name"] and len(line.stations) == len(first["stations"])
    lon, lat = (float(v) for v in first["stations"][0]["position"].split(","))
    assert (line.stations[0].name, line.stations[0].lat, line.stations[0].lon) == (first["stations"][0]["name"],
                                                                                  lat, lon)


def test_categories_are_the_files_lists(traveleval_data: Path, traveleval_sandbox: Sandbox) -> None:
    raw = json.loads((traveleval_data / "database" / "categories.json").read_text(encoding="utf-8"))
    assert traveleval_sandbox.categories() == {kind: tuple(values) for kind, values in raw.items()}
    assert len(raw["attractions"]) == 24 and len(raw["rhythm"]) == 4


@pytest.mark.parametrize("text", ["\ud800", "' OR 1=1 --", "北京%", "", 42, None])
def test_untrusted_arguments_find_nothing(traveleval_sandbox: Sandbox, text: Any) -> None:
    assert traveleval_sandbox.attraction("北京", text) is None
    assert traveleval_sandbox.hotel(text, "北京天安门王府井漫心酒店") is None
    assert traveleval_sandbox.poi_position("北京", text) is None
    assert traveleval_sandbox.attractions(text) == ()
    assert traveleval_sandbox.trains(text, "上海") == ()
    assert traveleval_sandbox.flights("北京", text, both_ways=True) == ()


def test_lists_are_read_once(traveleval_sandbox: Sandbox) -> None:
    assert traveleval_sandbox.trains("北京", "上海") is traveleval_sandbox.trains("beijing", "shanghai")
    assert traveleval_sandbox.attractions("北京") is traveleval_sandbox.attractions("beijing")
    assert traveleval_sandbox.trains("北京", "上海", both_ways=True) != traveleval_sandbox.trains("北京", "上海")


def test_lookups_from_many_threads_agree(traveleval_index: Path) -> None:
    with Sandbox.open(traveleval_index) as sandbox:
        def work(city: str) -> tuple[int, int, int]:
            return (len(sandbox.attractions(city)), len(sandbox.hotels(city)),
                    sum(sandbox.poi_position(city, name) is not None for name in sandbox.poi_names(city)[:50]))

        cities = list(CITY_DIRS) * 4
        with ThreadPoolExecutor(8) as pool:
            found = list(pool.map(work, cities))
        assert found == [work(city) for city in cities]
        assert all(hits == 50 for _, _, hits in found)
