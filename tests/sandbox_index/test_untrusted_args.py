"""Lookup arguments are untrusted model text: bound parameters only, empty results, never an exception."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pandas as pd
import pytest

from sandbox_index import Sandbox

HOSTILE = [
    "Rockford'",
    "Rockford' OR '1'='1",
    "'; DROP TABLE restaurants; --",
    '"); DELETE FROM flights; --',
    "%",
    "_ockford",
    "Rock%",
    "x" * 1_000_000,
    "\ud800",
    "Rockford\ud800",
    "Rock\x00ford",
    "Ｒｏｃｋｆｏｒｄ",
    "Rockford\u200b",
    "rockford",
    "",
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:20]))
def test_hostile_text_finds_nothing_and_breaks_nothing(sandbox: Sandbox, text: str) -> None:
    assert len(sandbox.flights(text, "Rockford", "2022-03-16")) == 0
    assert len(sandbox.flights("St. Petersburg", "Rockford", text)) == 0
    for lookup in (sandbox.accommodations, sandbox.restaurants, sandbox.attractions):
        assert len(lookup(text)) == 0
    assert sandbox.distance(text, "Norfolk") is None
    assert len(sandbox.flights_by_number(text)) == 0
    assert len(sandbox.match_restaurants("Subway", text)) == 0
    assert len(sandbox.match_restaurants(text, "Rockford", exact=True)) == 0
    # The tables are intact afterwards.
    assert len(sandbox.restaurants("Rockford")) > 0 and len(sandbox.flights_by_number("F3573659")) == 1


@pytest.mark.parametrize("name", ["%", "_", "S_bway", "Sub%", "a'b", "(", ".*", "\ud800"])
def test_substring_match_is_literal_like_re_escape(
    sandbox: Sandbox, travelplanner_data: Path, name: str
) -> None:
    # The evaluator's `Name.str.contains(re.escape(name))`: wildcards and regex syntax are plain text.
    restaurants = pd.read_csv(travelplanner_data / "database/restaurants/clean_restaurant_2022.csv").dropna()
    in_city = restaurants[restaurants.City == "Rockford"]
    try:
        expected = in_city[in_city.Name.astype(str).str.contains(re.escape(name))].index.tolist()
    except UnicodeEncodeError:  # pragma: no cover - pandas handles lone surrogates itself
        expected = []
    assert list(sandbox.match_restaurants(name, "Rockford").index) == expected


def test_empty_name_matches_every_row_of_the_city(sandbox: Sandbox) -> None:
    # docs/fidelity/travelplanner.md §2: an empty name matches every restaurant in the city.
    assert sandbox.match_restaurants("", "Rockford").index == sandbox.restaurants("Rockford").index


def test_lookups_from_several_threads(sandbox: Sandbox) -> None:
    expected = sandbox.restaurants("Rockford").rows
    results: list[bool] = []

    def work() -> None:
        results.extend(sandbox.restaurants("Rockford").rows == expected for _ in range(50))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [True] * 200
