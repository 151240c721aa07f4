"""CostEnquiry (docs/fidelity/travelplanner.md §3.9) on the human-annotated plan of the docs/fidelity/travelplanner.md
§11 query, and its error texts."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from benchmarks.travelplanner.tools import COST_UNAVAILABLE, cost_enquiry


@pytest.fixture(scope="module")
def annotated_days(travelplanner_data: Path) -> list[dict]:
    """The annotated plan of train query 1 (St. Petersburg -> Rockford, 3 days, docs/fidelity/travelplanner.md §11)."""
    with open(travelplanner_data / "queries/train.jsonl", encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    _query, days = ast.literal_eval(first["annotated_plan"])  # [query dict, list of day dicts]
    return [day for day in days if day]


def _total(text: str) -> float:
    match = re.fullmatch(r"The cost of your plan is (\S+) dollars\.", text)
    assert match, text
    return float(match.group(1))


@pytest.mark.parametrize("people, texts, total", [
    # docs/fidelity/travelplanner.md §11: flights 474+346, meals 302, accommodation 243 per night; 1608 for one person,
    # 7704 for six (two rooms of maximum occupancy 3). A day with an accommodation adds a float64 price: `.0`.
    (1, ["789.0", "348.0", "471"], 1608),
    (6, ["3762.0", "1116.0", "2826"], 7704),
])
def test_annotated_plan_costs_add_up_to_the_verified_totals(sandbox, annotated_days, people, texts, total) -> None:
    results = [cost_enquiry(sandbox, {**day, "people_number": people}) for day in annotated_days]
    assert results == [f"The cost of your plan is {text} dollars." for text in texts]
    assert sum(_total(text) for text in results) == total


def test_reflect_environment_prices_the_same(sandbox, annotated_days) -> None:
    for day in annotated_days:
        plan = {**day, "people_number": 2}
        assert cost_enquiry(sandbox, plan, reflect=True) == cost_enquiry(sandbox, plan)


@pytest.mark.parametrize("people, cost", [(1, 71), (5, 71), (6, 142)])
def test_self_driving_is_priced_per_car_of_five(sandbox, people: int, cost: int) -> None:
    plan = {"people_number": people, "transportation": "Self-driving, from Kansas City to Pensacola"}
    assert cost_enquiry(sandbox, plan) == f"The cost of your plan is {cost} dollars."


@pytest.mark.parametrize("people, cost", [(4, 1433), (5, 2866)])
def test_taxi_is_priced_per_car_of_four(sandbox, people: int, cost: int) -> None:
    plan = {"people_number": people, "transportation": "Taxi", "current_city": "from Kansas City to Pensacola"}
    assert cost_enquiry(sandbox, plan) == f"The cost of your plan is {cost} dollars."


def test_reasons_are_numbered_and_tab_separated(sandbox) -> None:
    plan = {"people_number": 1, "current_city": "Rockford", "transportation": "Self-driving",
            "breakfast": "Nowhere Diner, Rockford", "lunch": "Coco Bambu, Rockford", "dinner": "Nope, Rockford",
            "accommodation": "No Such Home, Rockford"}
    assert cost_enquiry(sandbox, plan) == (
        COST_UNAVAILABLE
        + "1. The transporation information is not valid, please check. You have to make sure there are two cities"
          " (from A to B) in your transportation plan. \t"
        + "2. The breakfase information is not valid, please check. \t"
        + "3. The dinner information is not valid, please check. \t"
        + "4. The accommodation information is not valid, please check. \t"
    )
    # ReactReflectEnv checks the cities first and words it shorter (docs/fidelity/travelplanner.md §3.9).
    assert cost_enquiry(sandbox, plan, reflect=True).startswith(
        COST_UNAVAILABLE + "1. The transporation information is not valid, please check. \t2. The breakfase")


@pytest.mark.parametrize("transportation, reason", [
    ("Flight Number: F0000000, from Rockford to Chicago", "1. The filght information is not valid \t"),
    ("flight number F3573659, from St. Petersburg to Rockford", "1. The filght information is not valid \t"),
    ("Taxi, from Hartford to Denver", "1. The transporation information is not valid, please check. \t"),
])
def test_invalid_legs(sandbox, transportation: str, reason: str) -> None:
    assert cost_enquiry(sandbox, {"people_number": 1, "transportation": transportation}) == COST_UNAVAILABLE + reason


def test_unparsable_and_empty_fields_are_skipped(sandbox) -> None:
    plan = {"people_number": 3, "transportation": "Walk, from A to B", "breakfast": "Coco Bambu",
            "lunch": "-", "dinner": "", "accommodation": None, "attraction": "Anything, Anywhere"}
    assert cost_enquiry(sandbox, plan) == "The cost of your plan is 0 dollars."


def test_flight_matches_the_number_only(sandbox) -> None:
    """The flight's route is not checked (docs/fidelity/travelplanner.md §3.9): only `Flight Number: ` up to the next
    comma."""
    plan = {"people_number": 2, "transportation": "Flight Number: F3573659, from Rockford to Chicago"}
    assert cost_enquiry(sandbox, plan) == "The cost of your plan is 948 dollars."
    assert cost_enquiry(sandbox, {**plan, "people_number": 2.0}) == "The cost of your plan is 948.0 dollars."


@pytest.mark.parametrize("plan, error", [
    ({"breakfast": "Coco Bambu, Rockford"}, KeyError),
    ({"people_number": 1, "transportation": "Taxi"}, KeyError),  # falls back to the missing current_city
    ({"people_number": 1, "lunch": ["Coco Bambu", "Rockford"]}, TypeError),
    ({"people_number": 1, "lunch": "x" * 5000 + ", Rockford"}, TypeError),
])
def test_inputs_the_official_planner_crashes_on(sandbox, plan: dict, error: type[Exception]) -> None:
    with pytest.raises(error):
        cost_enquiry(sandbox, plan)


FLIGHT = "Flight Number: F3573659, from St. Petersburg to Rockford"
"""Train query 1's outbound flight (docs/fidelity/travelplanner.md §11)."""


@pytest.mark.parametrize("people", ["2", "two", None, [2], {"n": 2}, ""])
def test_a_people_number_that_is_no_number_fails_only_where_the_official_code_multiplies(sandbox, annotated_days,
                                                                                        people) -> None:
    # Fields that never reach people_number price as usual: nothing, or "not valid" for what is not found.
    assert cost_enquiry(sandbox, {"people_number": people, "current_city": "Rockford"}) == (
        "The cost of your plan is 0 dollars.")
    assert cost_enquiry(sandbox, {"people_number": people, "breakfast": "Nowhere Diner, Rockford"}) == (
        COST_UNAVAILABLE + "1. The breakfase information is not valid, please check. \t")
    # The flight branch catches its failure (official `except:`): the flight reads as not valid.
    assert cost_enquiry(sandbox, {"people_number": people, "transportation": FLIGHT}) == (
        COST_UNAVAILABLE + "1. The filght information is not valid \t")
    # ReactEnv's ground branch catches it too; ReactReflectEnv's does not.
    leg = {"people_number": people, "transportation": "Taxi", "current_city": "from Kansas City to Pensacola"}
    assert cost_enquiry(sandbox, leg) == COST_UNAVAILABLE + (
        "1. The transporation information is not valid, please check. You have to make sure there are two cities "
        "(from A to B) in your transportation plan. \t")
    with pytest.raises(TypeError):
        cost_enquiry(sandbox, leg, reflect=True)
    # A meal or a stay multiplies outside any try: the official run aborts, as ours reports.
    meal = next(day for day in annotated_days if day["breakfast"] != "-")
    with pytest.raises(TypeError):
        cost_enquiry(sandbox, {"people_number": people, "breakfast": meal["breakfast"]})


@pytest.mark.parametrize("people, price", [(True, "474"), (2.5, "1185.0")])
def test_numbers_python_accepts_are_priced_as_the_official_code_prices_them(sandbox, people, price) -> None:
    assert cost_enquiry(sandbox, {"people_number": people, "transportation": FLIGHT}) == (
        f"The cost of your plan is {price} dollars.")
