"""Sandbox lookups on the real staged database, checked against rows read from the CSVs."""

from __future__ import annotations

from sandbox_index import DistanceRow, Frame, Sandbox


def test_flight_search_returns_the_train_reference_flight(sandbox: Sandbox) -> None:
    frame = sandbox.flights("St. Petersburg", "Rockford", "2022-03-16")
    assert isinstance(frame, Frame)
    assert frame.columns[:2] == ("Flight Number", "Price")
    assert [row[0] for row in frame.rows] == ["F3573659"]
    assert frame.rows[0][1] == 474 and frame.dtypes[1] == "int" and frame.dtypes[-1] == "float"


def test_first_duplicate_restaurant_row_comes_first(sandbox: Sandbox) -> None:
    # spec §11: the first "Subway" row in Rockford costs 42 (two rows, file order).
    frame = sandbox.match_restaurants("Subway", "Rockford", exact=True)
    assert [row[1] for row in frame.rows] == [42, 26]
    assert frame.index == tuple(sorted(frame.index))


def test_distance_and_background(sandbox: Sandbox) -> None:
    assert sandbox.distance("Detroit", "Norfolk") == DistanceRow("10 hours 55 mins", "1,144 km")
    assert sandbox.distance("Norfolk", "Nowhere") is None
    assert len(sandbox.cities()) == 311
    assert len(sandbox.city_states()) == 312 and sandbox.city_states()["Jackson"] == "Mississippi"
