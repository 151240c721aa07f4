"""The evaluator's name lookups equal the official pandas ones (docs/fidelity/travelplanner.md §2), on every place of
the train plans.

Official: `df.dropna()`, then `df[df[name].astype(str).str.contains(re.escape(name)) & (df[city] == city)]`,
first row wins. Ours: the sandbox's city table, matched in Python.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from benchmarks.travelplanner.dataset import Query
from benchmarks.travelplanner.evaluation.lookups import PlanLookups
from benchmarks.travelplanner.plan_fields import get_valid_name_city

ODD_NAMES = ["", "Fly", "(", ".", "a|b", "Café", "Subway", "The", "'", "\\d+", "Sea Food"]


def _places(queries: list[Query]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {"restaurants": set(), "attractions": set(), "accommodations": set()}
    for query in queries:
        for day in query.annotated_plan or []:
            if not day:
                continue
            for meal in ("breakfast", "lunch", "dinner"):
                found["restaurants"].add(day[meal])
            found["attractions"].update(day["attraction"].split(";"))
            found["accommodations"].add(day["accommodation"])
    cities = sorted({get_valid_name_city(place)[1] for places in found.values() for place in places})[:8]
    for table in found:  # prefixes and odd names in every city of the trips
        found[table] |= {f"{get_valid_name_city(p)[0][:4]}, {get_valid_name_city(p)[1]}" for p in list(found[table])}
        found[table] |= {f"{name}, {city}" for name in ODD_NAMES for city in cities}
    return {table: {p for p in places if p not in ("", "-")} for table, places in found.items()}


class OfficialTable:
    """A dropna'd official table; rows of a city are pre-split (same rows, same order as one mask)."""

    def __init__(self, path: Path, name_column: str, city_column: str) -> None:
        df = pd.read_csv(path).dropna()
        self.name_column = name_column
        self.by_city = {city: rows for city, rows in df.groupby(city_column, sort=False)}
        self.empty = df.iloc[:0]

    def lookup(self, place: str) -> pd.DataFrame:
        name, city = get_valid_name_city(place)
        rows = self.by_city.get(city, self.empty)
        return rows[rows[self.name_column].astype(str).str.contains(re.escape(name))]


@pytest.fixture(scope="module")
def official_tables(travelplanner_data: Path) -> dict[str, OfficialTable]:
    database = travelplanner_data / "database"
    return {
        "restaurants": OfficialTable(database / "restaurants" / "clean_restaurant_2022.csv", "Name", "City"),
        "attractions": OfficialTable(database / "attractions" / "attractions.csv", "Name", "City"),
        "accommodations": OfficialTable(database / "accommodations" / "clean_accommodations_2022.csv", "NAME", "city"),
    }


def test_substring_lookups_match_pandas(sandbox: Any, train_queries: list[Query],
                                        official_tables: dict[str, OfficialTable]) -> None:
    places = _places(train_queries)
    lookups = PlanLookups(sandbox, {}, set(), exact_names=False)
    checked = 0
    for place in places["restaurants"]:
        rows = official_tables["restaurants"].lookup(place)
        ours = lookups.restaurants(place)
        assert [(r.average_cost, r.cuisines) for r in ours] == list(
            zip(rows["Average Cost"], rows["Cuisines"])), place
        checked += 1
    for place in places["attractions"]:
        assert lookups.attraction_exists(place) == (
            len(official_tables["attractions"].lookup(place)) > 0), place
        checked += 1
    for place in places["accommodations"]:
        rows = official_tables["accommodations"].lookup(place)
        ours = lookups.accommodations(place)
        assert [(a.price, a.room_type, a.house_rules, a.minimum_nights, a.maximum_occupancy) for a in ours] == list(
            zip(rows["price"], rows["room type"], rows["house_rules"], rows["minimum nights"],
                rows["maximum occupancy"])), place
        checked += 1
    assert checked > 1000
