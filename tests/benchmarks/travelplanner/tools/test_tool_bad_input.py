"""Tool arguments are untrusted model text: every odd input gives the official not-found or error observation."""

from __future__ import annotations

import pytest

from benchmarks.travelplanner.reference import city_entries, flight_entry, ground_entry
from benchmarks.travelplanner.tools import (
    CITY_ERROR,
    DATE_ERROR,
    INVALID_ACTION,
    MAX_FIELD_CHARS,
    OTHER_ERROR,
    SUCCESSFUL,
    cost_enquiry,
    execute_action,
    parse_action,
)

HOSTILE = {
    "sql_quote": "Rockford' OR '1'='1",
    "sql_statement": "Rockford\"; DROP TABLE flights; --",
    "sql_wildcards": "%_%",
    "semicolons": ";;;",
    "brackets": "Rockford]FlightSearch[Chicago",
    "empty": "",
    "spaces": "   ",
    "megabyte": "x" * 1_000_000,
    "lone_surrogate": "Rock\ud800ford",
    "nul": "Rock\x00ford",
    "rtl_and_zero_width": "\u202eRockford\u200b",
    "emoji": "🏙️",
    "combining": "Rockfor\u0064\u0301",
    "fullwidth": "Ｒｏｃｋｆｏｒｄ",
    "newline": "Rockford\n",
    "parenthesis": "Rockford(Illinois",
    "format_braces": "{0}{city}%s",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("tool", ["AttractionSearch", "AccommodationSearch", "RestaurantSearch"])
def test_city_tools_reject_odd_cities(sandbox, tool: str, name: str) -> None:
    outcome = execute_action(sandbox, tool, HOSTILE[name])
    assert outcome.state == CITY_ERROR
    assert outcome.observation.startswith(f"{HOSTILE[name]} is not valid city in ['San Diego', ")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_flight_search_with_odd_pieces(sandbox, name: str) -> None:
    text = HOSTILE[name]
    assert execute_action(sandbox, "FlightSearch", text).observation == "Illegal Flight Search. Please try again."
    assert execute_action(sandbox, "FlightSearch", f"Rockford, Chicago, {text}").state == DATE_ERROR
    city_error = execute_action(sandbox, "FlightSearch", f"{text}, Chicago, 2022-03-16")
    assert city_error.state == (OTHER_ERROR if ", " in text else CITY_ERROR)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_distance_and_city_search_with_odd_text(sandbox, name: str) -> None:
    text = HOSTILE[name]
    outcome = execute_action(sandbox, "GoogleDistanceMatrix", f"{text}, Chicago, {text}")
    assert outcome.state == SUCCESSFUL
    assert outcome.observation.endswith(", no valid information.")
    assert execute_action(sandbox, "CitySearch", text).observation == "Invalid State"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_odd_actions_parse_or_are_invalid(sandbox, name: str) -> None:
    action_type, argument = parse_action(f"{HOSTILE[name]}[x]")
    outcome = execute_action(sandbox, action_type, argument)
    assert outcome.observation == INVALID_ACTION
    assert parse_action(HOSTILE[name]) == (None, None)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_reference_builder_and_cost_enquiry_with_odd_text(sandbox, name: str) -> None:
    text = HOSTILE[name]
    assert [entry.content for entry in city_entries(sandbox, text)] == [
        "There is no attraction in this city.",
        "There is no restaurant in this city.",
        "There is no attraction in this city.",
    ]
    assert flight_entry(sandbox, text, "Chicago", "2022-03-16").content.startswith("There is no flight from ")
    assert ground_entry(sandbox, "Chicago", text, "taxi").content.endswith(", no valid information.")
    plan = {"people_number": 2, "current_city": text, "transportation": f"Flight Number: {text}, from A to B",
            "breakfast": f"{text}, {text}", "lunch": text, "dinner": "-", "accommodation": f"{text}, Chicago"}
    if len(text) > MAX_FIELD_CHARS:  # the official regexes are quadratic: refused, as the evaluator does
        with pytest.raises(TypeError, match="characters long"):
            cost_enquiry(sandbox, plan)
    else:
        assert cost_enquiry(sandbox, plan).startswith("Sorry, the cost of your plan is not available")
