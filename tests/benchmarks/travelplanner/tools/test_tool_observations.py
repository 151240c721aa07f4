"""execute_action: the two-stage agent's observation, state, counter and data per action (docs/fidelity/travelplanner.md
§3, §4.4-§4.7).

References: the official outputs stored in the train split's reference_information, pandas over the staged
CSVs, and the spec's verified strings.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.travelplanner.tools import (
    CITY_ERROR,
    COUNTERS,
    DATE_ERROR,
    EARLY_STOP_KEYS,
    INVALID_ACTION,
    OTHER_ERROR,
    SUCCESSFUL,
    DistanceInfo,
    Notebook,
    data_text,
    distance_for_evaluation,
    distance_matrix,
    execute_action,
    parse_action,
)


def run(sandbox, action: str):
    return execute_action(sandbox, *parse_action(action))


@pytest.fixture(scope="module")
def official_outputs(travelplanner_data: Path) -> dict[str, str]:
    """Description -> official Content of the first train query (St. Petersburg -> Rockford,
    docs/fidelity/travelplanner.md §11)."""
    with open(travelplanner_data / "queries/train.jsonl", encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    return {e["Description"]: e["Content"] for e in ast.literal_eval(first["reference_information"])}


@pytest.fixture(scope="module")
def city_set(travelplanner_data: Path) -> list[str]:
    """The agent's city list, loaded as the official code does (`read().strip().split('\\n')`)."""
    return (travelplanner_data / "database/background/citySet.txt").read_text(encoding="utf-8").strip().split("\n")


def test_flight_search_observation_is_the_official_table_unstripped(sandbox, official_outputs) -> None:
    outcome = run(sandbox, "FlightSearch[St. Petersburg, Rockford, 2022-03-16]")
    assert outcome.observation == official_outputs["Flight from St. Petersburg to Rockford on 2022-03-16"]
    assert outcome.observation.startswith("Flight Number  Price")
    assert (outcome.state, outcome.counter, outcome.stores_data, outcome.masks) == (SUCCESSFUL, None, True, True)
    assert outcome.data == sandbox.flights("St. Petersburg", "Rockford", "2022-03-16")


@pytest.mark.parametrize("tool, description", [
    ("AttractionSearch", "Attractions in Rockford"),
    ("AccommodationSearch", "Accommodations in Rockford"),
])
def test_city_table_observations_are_the_official_tables_stripped(sandbox, official_outputs, tool, description) -> None:
    outcome = run(sandbox, f"{tool}[Rockford]")
    official = official_outputs[description]
    assert outcome.observation == official.strip("\n").strip()
    # Stripping only removes the header line's leading spaces (docs/fidelity/travelplanner.md §4.6).
    assert official.startswith(" ") and official.endswith(outcome.observation)
    assert data_text(outcome.data) == official
    assert (outcome.state, outcome.counter, outcome.stores_data, outcome.masks) == (SUCCESSFUL, None, True, True)


def test_restaurant_observation_is_the_table_without_labels_stripped(sandbox, travelplanner_data: Path) -> None:
    table = pd.read_csv(travelplanner_data / "database/restaurants/clean_restaurant_2022.csv").dropna()
    expected = table[table["City"] == "Rockford"][["Name", "Average Cost", "Cuisines", "Aggregate Rating", "City"]]
    outcome = run(sandbox, "RestaurantSearch[Rockford]")
    assert outcome.observation == expected.to_string(index=False).strip()
    assert outcome.observation.startswith("Name  Average Cost")


@pytest.mark.parametrize("action, observation", [
    ("FlightSearch[Rockford, St. Petersburg, 2022-03-01]",
     "There is no flight from Rockford to St. Petersburg on 2022-03-01."),
    ("AttractionSearch[Sarasota]", "There is no attraction in this city."),
    ("CitySearch[Atlantis]", "Invalid State"),
    ("GoogleDistanceMatrix[Killeen, Mission, taxi]", "No valid information."),
])
def test_empty_results_are_successful_steps(sandbox, action: str, observation: str) -> None:
    outcome = run(sandbox, action)
    assert (outcome.observation, outcome.state, outcome.counter) == (observation, SUCCESSFUL, None)


def test_accommodation_empty_result_names_attractions(sandbox) -> None:
    from benchmarks.travelplanner.tools import accommodation_search

    # official quirk, docs/fidelity/travelplanner.md §3.3 (no city of citySet.txt lacks accommodations, so only
    # reachable directly).
    assert accommodation_search(sandbox, "Atlantis") == "There is no attraction in this city."


def test_city_error_lists_every_city_as_a_python_list(sandbox, city_set) -> None:
    outcome = run(sandbox, "FlightSearch[Rockford, Gotham, 2022-03-16]")
    assert outcome.observation == f"Gotham is not valid city in {city_set}."
    assert '"Martha\'s Vineyard"' in outcome.observation  # repr quoting of the one name with an apostrophe
    assert (outcome.state, outcome.counter, outcome.stores_data, outcome.masks) == (CITY_ERROR, "flights", False, False)


@pytest.mark.parametrize("action, observation, state, counter", [
    # The date is validated before the cities (docs/fidelity/travelplanner.md §4.5).
    ("FlightSearch[Gotham, Metropolis, 16-03-2022]", "'16-03-2022' is not in the format YYYY-MM-DD", DATE_ERROR,
     "flights"),
    ("FlightSearch[St. Petersburg,Rockford,2022-03-16]", "Illegal Flight Search. Please try again.", OTHER_ERROR,
     "flights"),
    ("FlightSearch[St. Petersburg, Rockford]", "Illegal Flight Search. Please try again.", OTHER_ERROR, "flights"),
    ("GoogleDistanceMatrix[Rockford, Chicago]", "Illegal GoogleDistanceMatrix. Please try again.", OTHER_ERROR,
     "googleDistanceMatrix"),
    ("AccommodationSearch[Jackson]", None, CITY_ERROR, "accommodations"),  # in citySet_with_states.txt only
    ("RestaurantSearch[rockford]", None, CITY_ERROR, "restaurants"),
    ("AttractionSearch[Rockford, Illinois]", None, CITY_ERROR, "attractions"),
    ("Finish[plan]", INVALID_ACTION, "invalidAction", "invalidAction"),
    ("FlightSearch St. Petersburg", INVALID_ACTION, "invalidAction", "invalidAction"),
])
def test_failures_give_the_official_text_state_and_counter(sandbox, action, observation, state, counter) -> None:
    outcome = run(sandbox, action)
    if observation is not None:
        assert outcome.observation == observation
    assert (outcome.state, outcome.counter, outcome.data, outcome.stores_data) == (state, counter, None, False)
    assert counter in COUNTERS


def test_only_a_failing_distance_call_masks(sandbox) -> None:
    """GoogleDistanceMatrix masks before splitting its arguments; the other tools after validating them."""
    assert run(sandbox, "GoogleDistanceMatrix[Rockford]").masks
    assert not run(sandbox, "FlightSearch[Rockford]").masks
    assert not run(sandbox, "Foo[bar]").masks


def test_city_search_masks_but_keeps_the_current_data(sandbox) -> None:
    outcome = run(sandbox, "CitySearch[Illinois]")
    # docs/fidelity/travelplanner.md §3.6
    illinois = ["Moline", "Belleville", "Bloomington", "Champaign", "Chicago", "Rockford", "Peoria"]
    assert outcome.observation == str(illinois)
    assert (outcome.state, outcome.stores_data, outcome.masks) == (SUCCESSFUL, False, True)


@pytest.mark.parametrize("action, parsed", [
    ("FlightSearch[A, B, 2022-03-16]", ("FlightSearch", "A, B, 2022-03-16")),
    ("Planner[Give me a plan [3 days]]", ("Planner", "Give me a plan [3 days]")),
    ("FlightSearch[]", (None, None)),
    ("Flight Search[A, B, C]", (None, None)),
    (" FlightSearch[A]", (None, None)),
    ("FlightSearch[A] ", (None, None)),
    ("", (None, None)),
])
def test_parse_action(action: str, parsed) -> None:
    assert parse_action(action) == parsed


def test_early_stop_keys_keep_the_accommodation_typo() -> None:
    assert EARLY_STOP_KEYS["AccommodationSearch"] not in COUNTERS
    assert all(key in COUNTERS for action, key in EARLY_STOP_KEYS.items() if action != "AccommodationSearch")


@pytest.mark.parametrize("origin, destination, mode, text", [
    ("Kansas City", "Pensacola", "self-driving",
     "self-driving, from Kansas City to Pensacola, duration: 14 hours 4 mins, distance: 1,433 km, cost: 71"),
    ("Kansas City", "Pensacola", "taxi",
     "taxi, from Kansas City to Pensacola, duration: 14 hours 4 mins, distance: 1,433 km, cost: 1433"),
    # Only `driving` anywhere or exactly `taxi` is priced (docs/fidelity/travelplanner.md §3.2).
    ("Kansas City", "Pensacola", "Taxi",
     "Taxi, from Kansas City to Pensacola, duration: 14 hours 4 mins, distance: 1,433 km, cost: None"),
    ("Kansas City", "Pensacola", "walking",
     "walking, from Kansas City to Pensacola, duration: 14 hours 4 mins, distance: 1,433 km, cost: None"),
    ("Kansas City(Missouri)", "Pensacola(Florida)", "driving",
     "driving, from Kansas City to Pensacola, duration: 14 hours 4 mins, distance: 1,433 km, cost: 71"),
    # official quirk, docs/fidelity/travelplanner.md §2: the space before "(" stays, so the lookup misses.
    ("Kansas City (Missouri)", "Pensacola", "taxi", "taxi, from Kansas City  to Pensacola, no valid information."),
    ("Gotham", "Pensacola", "self-driving", "self-driving, from Gotham to Pensacola, no valid information."),
    ("Killeen", "Mission", "self-driving", "No valid information."),  # a row without values
    ("Hartford", "Denver", "self-driving", "No valid information."),  # "1 day 3 hours"
])
def test_distance_matrix_texts(sandbox, origin, destination, mode, text) -> None:
    assert distance_matrix(sandbox, origin, destination, mode) == text
    assert run(sandbox, f"GoogleDistanceMatrix[{origin}, {destination}, {mode}]").observation == text


@pytest.mark.parametrize("origin, destination, mode, info", [
    ("Kansas City", "Pensacola", "self-driving",
     DistanceInfo("Kansas City", "Pensacola", 71, "14 hours 4 mins", "1,433 km")),
    ("Kansas City", "Pensacola", "taxi",
     DistanceInfo("Kansas City", "Pensacola", 1433, "14 hours 4 mins", "1,433 km")),
    ("Hartford", "Denver", "taxi", DistanceInfo("Hartford", "Denver", None, "1 day 3 hours", "3,022 km")),
    ("Killeen", "Mission", "taxi", DistanceInfo("Killeen", "Mission", None, None, None)),
    ("Gotham", "Denver", "taxi", DistanceInfo("Gotham", "Denver", None, None, None)),
])
def test_distance_for_evaluation(sandbox, origin, destination, mode, info) -> None:
    assert distance_for_evaluation(sandbox, origin, destination, mode) == info


def test_notebook_records_and_lists_like_the_official_one(sandbox) -> None:
    notebook = Notebook()
    frame = sandbox.flights("St. Petersburg", "Rockford", "2022-03-16")
    assert notebook.write(frame, "Flights") == "The information has been recorded in Notebook, and its index is 0."
    assert notebook.write(None, "Nothing yet") == "The information has been recorded in Notebook, and its index is 1."
    notebook.write("No valid information.", "Driving")
    assert notebook.list_all() == [
        {"index": 0, "Short Description": "Flights", "Content": data_text(frame)},
        {"index": 1, "Short Description": "Nothing yet", "Content": None},
        {"index": 2, "Short Description": "Driving", "Content": "No valid information."},
    ]
    notebook.reset()
    assert notebook.list_all() == [] and len(notebook) == 0


def test_notebook_write_and_planner_belong_to_the_agent(sandbox) -> None:
    for action_type in ("NotebookWrite", "Planner"):
        with pytest.raises(ValueError):
            execute_action(sandbox, action_type, "x")
