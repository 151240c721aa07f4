"""The docs/fidelity/travelplanner.md §2 string helpers, on the spec's verified examples."""

from __future__ import annotations

import pytest

from benchmarks.travelplanner.plan_fields import (
    count_consecutive_values,
    extract_before_parenthesis,
    extract_from_to,
    flight_number,
    get_valid_name_city,
    is_valid_city_sequence,
    transportation_match,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("Pensacola (Florida)", "Pensacola "),  # the space before the parenthesis stays
    ("Pensacola(Florida)", "Pensacola"),
    ("Pensacola", "Pensacola"),
    ("A (x) B (y)", "A "),
])
def test_extract_before_parenthesis(text: str, expected: str) -> None:
    assert extract_before_parenthesis(text) == expected


@pytest.mark.parametrize(("info", "expected"), [
    ("Bright, Modern, Clean, Spacious, Brooklyn Home, Atlanta",
     ("Bright, Modern, Clean, Spacious, Brooklyn Home", "Atlanta")),
    ("Catfish Charlie's, Myrtle Beach; Cost: 14", ("Catfish Charlie's", "Myrtle Beach; Cost: 14")),
    ("Subway, Charlotte(North Carolina)", ("Subway", "Charlotte")),
    (", Charlotte", ("", "Charlotte")),
    ("No comma here", ("-", "-")),
    ("Peaceful, beautiful home away , Denver(Colorado)", ("Peaceful, beautiful home away", "Denver")),
])
def test_get_valid_name_city(info: str, expected: tuple[str, str]) -> None:
    assert get_valid_name_city(info) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("from A to B", ("A", "B")),
    ("Flight Number: F1, from St. Petersburg to Rockford, Departure Time: 15:40", ("St. Petersburg", "Rockford")),
    ("from A to B(State)", ("A", "B(State)")),
    ("from A to B departure 10:00", ("A", "B departure 10:00")),
    ("from Rockford", (None, None)),
    ("Self-driving", (None, None)),
])
def test_extract_from_to(text: str, expected: tuple[str | None, str | None]) -> None:
    assert extract_from_to(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Taxi, from A to B", "Taxi"),
    ("Self-driving, from A to B", "Self-driving"),
    ("Flight Number: F1", "Flight"),
    ("self-driving or taxi", "Taxi"),  # taxi has precedence
    ("Driving from A to B", None),
])
def test_transportation_match(text: str, expected: str | None) -> None:
    assert transportation_match(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Flight Number: F3573659, from St. Petersburg to Rockford", "F3573659"),
    ("Flight Number: F1", "F1"),
    ("Flight number: F1, from A to B", None),
    ("Flight Number:F1, from A to B", None),
])
def test_flight_number(text: str, expected: str | None) -> None:
    assert flight_number(text) == expected


@pytest.mark.parametrize(("route", "valid"), [
    (["A", "B", "A"], False),
    (["A", "B", "B", "A"], True),
    (["A", "B", "C", "A"], False),
    (["A", "B", "B", "C", "C", "A"], True),
    (["A", "B", "B", "A", "A"], False),
    (["A", "A"], False),
    (["A", "X", "X", "X", "A"], True),
    (["A", "X", "X", "X", "Y", "Y", "Y", "A"], True),
])
def test_city_sequence_examples_of_spec(route: list[str], valid: bool) -> None:
    assert is_valid_city_sequence(route) is valid


def test_count_consecutive_values() -> None:
    assert count_consecutive_values(["a", "a", "b", "a"]) == [("a", 2), ("b", 1), ("a", 1)]
