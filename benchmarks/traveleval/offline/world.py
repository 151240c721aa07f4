"""A small generated TravelEval world in the official `environment/` layout: three cities' synthetic attractions,
hotels, restaurants, stations, trains, flights and subway lines, plus a few queries of each tier and one progressive
group. The demo runs it (no download); tests use it where the staged data holds no such case.

Every name, price and time is made up here from the seed (the real database is not redistributable); the file
layout, column names and value formats are the official ones, so the real index builder and query loader read it
exactly as they read the fetched data. The three cities are real ones because the official code maps city names to
folders by a fixed table. Same seed, same bytes.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CITIES: dict[str, tuple[str, float, float]] = {
    "北京": ("beijing", 39.9042, 116.4074),
    "上海": ("shanghai", 31.2304, 121.4737),
    "杭州": ("hangzhou", 30.2741, 120.1551),
}
"""Chinese name -> (folder, centre latitude, centre longitude)."""
STATIONS = {"北京": ("北京南站", "北京首都国际机场"), "上海": ("上海虹桥站", "上海浦东国际机场"),
            "杭州": ("杭州东站", "杭州萧山国际机场")}
"""City -> (its railway station, its airport); names start with the city, as the official matching expects."""
ATTRACTION_KINDS = (
    ("公园", ("公园", "自然风光"), (1.0, 2.0)), ("古寺", ("历史古迹", "小众秘境"), (1.0, 2.0)),
    ("博物馆", ("博物馆/纪念馆", "亲子友好"), (1.5, 3.0)), ("园", ("园林", "网红打卡点"), (1.0, 2.5)),
    ("古镇", ("人文景观", "美食目的地"), (2.0, 3.0)), ("乐园", ("游乐园/体育娱乐", "亲子友好"), (2.0, 4.0)),
    ("美术馆", ("美术馆/艺术馆", "小众秘境"), (1.0, 2.0)), ("步行街", ("商业街区", "夜经济热点"), (1.0, 2.0)),
)
"""Name suffix -> its categories (`{a;b}` in the file) and recommended visit hours (min, max)."""
PLACE_WORDS = ("云栖", "明湖", "青石", "紫竹", "金鳞", "白鹭", "翠屏", "望江", "龙泉", "凤鸣", "松涛", "落霞",
               "星河", "梅岭", "兰亭", "清溪")
HOTEL_FEATURES = ("免费停车", "家庭房", "泳池", "位置超好", "停车场", "管家服务")
HOTEL_BRANDS = ("悦居", "锦程", "雅舍", "澜庭", "栖云", "恒安")
CUISINES = ("北京菜", "本帮菜", "江浙菜", "川菜", "火锅", "粤菜", "小吃", "西餐")
DISHES = ("招牌烤鸭", "红烧肉", "清蒸鲈鱼", "麻婆豆腐", "小笼包", "葱油拌面", "糖醋排骨", "时蔬")
ROOMS = ("single_room", "king_room", "double_bed", "family_room")
SPLIT_FILES = ("easy", "medium", "hard")


@dataclass(frozen=True, slots=True)
class TravelEvalWorld:
    folder: Path
    """The data folder: `data/queries/*.json` and `database/`, as `[options] data_dir` takes it."""
    queries: int
    """Queries in the three tier files (the progressive file has one group of three besides)."""


def generate_world(folder: Path, *, seed: int = 0) -> TravelEvalWorld:
    """Writes the world under `folder` (created; existing files are overwritten)."""
    rng = random.Random(f"traveleval-world\x1f{seed}")
    database = folder / "database"
    files: dict[str, str] = {"categories.json": _json(_categories())}
    subways: dict[str, list[dict[str, Any]]] = {}
    for city, (pinyin, lat, lon) in CITIES.items():
        pois: list[dict[str, Any]] = []
        station, airport = STATIONS[city]
        for name, offset in ((station, 0.06), (airport, 0.25)):
            pois.append({"name": name, "position": [round(lat - offset, 6), round(lon + offset, 6)]})
        files[f"attractions/{pinyin}/attractions.csv"] = "\ufeff" + _attractions(rng, city, lat, lon, pois)
        files[f"accommodations/{pinyin}/accommodations.csv"] = "\ufeff" + _hotels(rng, city, lat, lon, pois)
        files[f"restaurants/{pinyin}/restaurants_{pinyin}.csv"] = _restaurants(rng, city, lat, lon, pois)
        files[f"poi/{pinyin}/poi.json"] = _json(pois)
        subways[pinyin] = [{"name": f"{n}号线", "stations": [
            {"name": f"{PLACE_WORDS[(n * 3 + k) % len(PLACE_WORDS)]}站",
             "position": f"{lon + 0.02 * (k - 3):.6f},{lat + 0.01 * n * (k % 2):.6f}"} for k in range(7)]}
            for n in (1, 2)]
    files["transportation/subways.json"] = _json(subways)
    flights: list[str] = []
    for origin in CITIES:
        for destination in CITIES:
            if origin != destination:
                files[f"intercity_transport/train/from_{origin}_to_{destination}.json"] = _json(
                    _trains(rng, origin, destination))
                flights += [json.dumps(row, ensure_ascii=False) for row in _flights(rng, origin, destination)]
    files["intercity_transport/airplane.jsonl"] = "\n".join(flights) + "\n"
    for relative, text in files.items():
        path = database / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    queries = folder / "data" / "queries"
    queries.mkdir(parents=True, exist_ok=True)
    tiers = _queries()
    for tier in SPLIT_FILES:
        (queries / f"{tier}.json").write_bytes(_json({
            "version": "1.0", "description": f"tripbench demo world, {tier} queries",
            "queries": [query for query in tiers if query["tag"] == tier]}).encode("utf-8"))
    (queries / "progressive.json").write_bytes(_json({
        "version": "1.0", "description": "tripbench demo world, progressive group",
        "query_groups": [_progressive_group()]}).encode("utf-8"))
    return TravelEvalWorld(folder, len(tiers))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def _csv(header: list[str], rows: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _near(rng: random.Random, lat: float, lon: float, spread: float = 0.08) -> tuple[float, float]:
    return round(lat + rng.uniform(-spread, spread), 6), round(lon + rng.uniform(-spread, spread), 6)


def _attractions(rng: random.Random, city: str, lat: float, lon: float, pois: list[dict[str, Any]]) -> str:
    rows: list[list[Any]] = []
    for n, word in enumerate(PLACE_WORDS[:14]):
        suffix, categories, (low, high) = ATTRACTION_KINDS[n % len(ATTRACTION_KINDS)]
        name = f"{city}{word}{suffix}"
        a, b = _near(rng, lat, lon)
        opens, closes = ("0:00", "24:00") if suffix in ("公园", "步行街") else ("8:30", "17:30")
        price = 0 if suffix in ("公园", "步行街", "古镇") else rng.choice((20, 30, 45, 60, 80, 120))
        rows.append([n, name, "{" + ";".join(categories) + "}", a, b, opens, closes, price, low, high,
                     round(rng.uniform(4.0, 4.9), 1)])
        pois.append({"name": name, "position": [a, b]})
    return _csv(["id", "name", "type", "lat", "lon", "opentime", "endtime", "price", "recommendmintime",
                 "recommendmaxtime", "star"], rows)


def _hotels(rng: random.Random, city: str, lat: float, lon: float, pois: list[dict[str, Any]]) -> str:
    rows: list[list[Any]] = []
    for n, brand in enumerate(HOTEL_BRANDS):
        name = f"{city}{PLACE_WORDS[n + 4]}{brand}酒店"
        a, b = _near(rng, lat, lon, 0.05)
        base = rng.choice((180, 240, 320, 420))
        rooms: list[Any] = []
        for k, _ in enumerate(ROOMS):
            rooms += [base + 60 * k, rng.randint(1, 3)]
        rows.append([n, name, f"{PLACE_WORDS[n + 4]} {brand} Hotel", HOTEL_FEATURES[n], a, b, *rooms])
        pois.append({"name": name, "position": [a, b]})
    header = ["id", "name", "hotelname_en", "featurehoteltype", "lat", "lon"]
    header += [f"{room}_{field}" for room in ROOMS for field in ("price", "stock")]
    return _csv(header, rows)


def _restaurants(rng: random.Random, city: str, lat: float, lon: float, pois: list[dict[str, Any]]) -> str:
    rows: list[list[Any]] = []
    for n in range(16):
        cuisine = CUISINES[n % len(CUISINES)]
        name = f"{PLACE_WORDS[(n + 7) % len(PLACE_WORDS)]}{cuisine}馆({city}{n + 1}号店)"
        a, b = _near(rng, lat, lon)
        rows.append([n, name, a, b, float(rng.choice((45, 60, 80, 110, 150))), cuisine,
                     rng.choice(("10:00", "11:00")), rng.choice(("21:00", "22:00")),
                     ",".join(rng.sample(DISHES, 3))])
        pois.append({"name": name, "position": [a, b]})
    return _csv(["id", "name", "lat", "lon", "price", "cuisine", "opentime", "endtime", "recommendedfood"], rows)


def _clock(minutes: int, *, pad: bool = True) -> str:
    hours, rest = divmod(minutes % (24 * 60), 60)
    return f"{hours:02d}:{rest:02d}" if pad else f"{hours}:{rest:02d}"


def _trains(rng: random.Random, origin: str, destination: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    hours = 4.5 if "北京" in (origin, destination) else 1.5
    for n, departs in enumerate((7 * 60, 9 * 60 + 30, 13 * 60, 15 * 60 + 20, 17 * 60 + 45)):
        kind = "高铁" if n % 2 == 0 else "动车"
        minutes = int(hours * 60 * (1.0 if kind == "高铁" else 1.4)) + rng.randint(0, 20)
        rows.append({"TrainID": f"{'G' if kind == '高铁' else 'D'}{rng.randint(100, 9999)}", "TrainType": kind,
                     "From": STATIONS[origin][0], "To": STATIONS[destination][0], "BeginTime": _clock(departs),
                     "EndTime": _clock(departs + minutes), "Duration": round(minutes / 60, 2),
                     "Cost": float(round(hours * (120 if kind == "高铁" else 85) + rng.randint(0, 30)))})
    return rows


def _flights(rng: random.Random, origin: str, destination: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for departs in (8 * 60, 12 * 60 + 30, 16 * 60 + 10):
        minutes = 120 + rng.randint(0, 40)
        rows.append({"FlightID": f"{rng.choice(('CA', 'MU', 'HO'))}{rng.randint(1000, 9999)}",
                     "From": STATIONS[origin][1], "To": STATIONS[destination][1],
                     "BeginTime": _clock(departs, pad=False), "EndTime": _clock(departs + minutes, pad=False),
                     "Duration": round(minutes / 60, 2), "Cost": float(rng.choice((560, 680, 790, 920)))})
    return rows


def _categories() -> dict[str, list[str]]:
    return {"accommodations": list(HOTEL_FEATURES), "diet": list(CUISINES),
            "attractions": sorted({c for _, categories, _ in ATTRACTION_KINDS for c in categories}),
            "rhythm": ["慢游", "特种兵式", "亲子家庭游", "普通"]}


def _query(uid: str, tag: str, origin: str, destination: str, days: int, people: tuple[int, int, int],
           budget: int, start: str, **blocks: dict[str, list[str]]) -> dict[str, Any]:
    adults, children, seniors = people
    total = adults + children + seniors
    last = datetime.date.fromisoformat(start) + datetime.timedelta(days=days - 1)
    text = f"我们{total}人从{origin}去{destination}玩{days}天，预算{budget}元。"
    query: dict[str, Any] = {
        "uid": uid, "tag": tag, "start_city": origin, "target_city": destination, "days": days,
        "people_number": total, "people_composition": {"adults": adults, "children": children, "seniors": seniors},
        "budget": budget, "dates": f"{start} to {last.isoformat()}"}
    for block in ("transportation", "accommodations", "diet", "attractions", "rhythm"):
        query[block] = blocks.get(block, {})
    query["nature_language"] = text
    query["nature_language_en"] = (f"{total} of us travel from {CITIES[origin][0]} to {CITIES[destination][0]} for "
                                   f"{days} days with a budget of {budget} RMB.")
    return query


def _queries() -> list[dict[str, Any]]:
    """Nine queries, three per tier; their budgets are such that `offline:noisy` (seed 0) draws a different mistake
    for each and, with the progressive group, every mistake it has (the demo then checks them all)."""
    return [
        _query("T0001", "easy", "北京", "上海", 3, (2, 0, 0), 6000, "2024-11-12"),
        _query("T0002", "easy", "上海", "杭州", 2, (1, 0, 0), 2900, "2024-11-19"),
        _query("T0003", "easy", "杭州", "北京", 4, (2, 1, 0), 12200, "2024-12-02"),
        _query("T0004", "medium", "北京", "杭州", 3, (2, 0, 0), 8950, "2024-11-05",
               accommodations={"preferences": ["免费停车"], "constraints": []},
               diet={"preferences": ["江浙菜"], "constraints": []}),
        _query("T0005", "medium", "上海", "北京", 4, (3, 0, 0), 15800, "2024-11-26",
               transportation={"preferences": ["高铁"], "constraints": []},
               attractions={"preferences": ["历史古迹"], "constraints": []}),
        _query("T0006", "medium", "杭州", "上海", 3, (2, 0, 1), 9000, "2024-12-10",
               diet={"preferences": ["本帮菜", "小吃"], "constraints": []}),
        _query("T0007", "hard", "北京", "上海", 4, (2, 2, 0), 16400, "2024-11-19",
               transportation={"preferences": ["飞机"], "constraints": ["高铁"]},
               accommodations={"preferences": ["家庭房"], "constraints": []},
               attractions={"preferences": ["亲子友好"], "constraints": ["小众秘境"]},
               rhythm={"preferences": ["亲子家庭游"], "constraints": []}),
        _query("T0008", "hard", "上海", "杭州", 3, (2, 0, 0), 6350, "2024-12-03",
               transportation={"preferences": ["高铁"], "constraints": ["飞机"]},
               diet={"preferences": ["江浙菜"], "constraints": ["火锅", "川菜"]},
               rhythm={"preferences": ["特种兵式"], "constraints": []}),
        _query("T0009", "hard", "杭州", "北京", 5, (2, 0, 0), 14150, "2024-11-11",
               accommodations={"preferences": ["位置超好"], "constraints": []},
               diet={"preferences": ["北京菜"], "constraints": ["西餐"]},
               attractions={"preferences": ["博物馆/纪念馆", "历史古迹"], "constraints": []},
               rhythm={"preferences": ["慢游"], "constraints": []}),
    ]


def _progressive_group() -> list[dict[str, Any]]:
    """One trip asked three times, each step adding constraints (as the official groups do)."""
    hotel = {"preferences": ["泳池"], "constraints": []}
    food = {"preferences": ["本帮菜"], "constraints": ["火锅"]}
    return [
        _query("G01-1", "easy", "北京", "上海", 3, (2, 0, 0), 8000, "2024-11-12"),
        _query("G01-2", "medium", "北京", "上海", 3, (2, 0, 0), 8000, "2024-11-12", accommodations=hotel),
        _query("G01-3", "hard", "北京", "上海", 3, (2, 0, 0), 8000, "2024-11-12", accommodations=hotel, diet=food,
               transportation={"preferences": ["高铁"], "constraints": ["飞机"]}),
    ]
