"""The verified worked examples of docs/fidelity/travelplanner.md §11 and §7.3, in both modes."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from benchmarks.travelplanner.dataset import LocalConstraint, Query
from benchmarks.travelplanner.evaluation import COMMONSENSE_KEYS, OfficialEvaluator


def test_rockford_reference_plan_costs_1608(
        evaluator: OfficialEvaluator, rockford_query: Query, rockford_plan: list[Any]) -> None:
    verdict = evaluator.evaluate(rockford_query, rockford_plan)
    assert verdict.commonsense == dict.fromkeys(COMMONSENSE_KEYS, (True, None))
    # flights 474+346, meals 72+29+20+56+42 (first "Subway" row)+49+34, accommodation 243 x 2 nights
    assert verdict.total_cost == 1608
    assert verdict.hard == {"valid_cuisine": (None, None), "valid_room_rule": (None, None),
                            "valid_transportation": (None, None), "valid_room_type": (None, None),
                            "valid_cost": (True, None)}


def test_rockford_for_six_with_hard_constraints_costs_7704(
        evaluator: OfficialEvaluator, hard_rockford_query: Query, rockford_plan: list[Any]) -> None:
    verdict = evaluator.evaluate(hard_rockford_query, rockford_plan)
    assert verdict.total_cost == 820 * 6 + 302 * 6 + 243 * 2 * 2 == 7704
    assert verdict.hard == {
        "valid_cuisine": (True, None),  # Coco Bambu is French, Flying Mango and Cafe Southall Seafood
        "valid_room_rule": (False, "The house rule should be smoking."),  # the flat has "No smoking"
        "valid_transportation": (False, "The transportation should not be no flight."),
        "valid_room_type": (True, None),
        "valid_cost": (False, None),
    }


def test_truncated_plan_fails_days_and_closed_circle(
        evaluator: OfficialEvaluator, rockford_query: Query, rockford_plan: list[Any]) -> None:
    verdict = evaluator.evaluate(rockford_query, rockford_plan[:2])
    assert verdict.commonsense is not None
    assert verdict.commonsense["is_not_absent"] == (False, "Invalid Days")
    assert verdict.commonsense["is_reasonable_visiting_city"] == (False, "The trip should be a closed circle.")
    assert verdict.hard is None and verdict.total_cost is None


def test_vehicle_counts_of_road_legs(evaluator: OfficialEvaluator, train_queries: list[Query]) -> None:
    """Spec §7.3: Kansas City -> Pensacola (1,433 km) by taxi adds 1433 x ceil(6/4) = 2866 for six people,
    self-driving int(1433 x 0.05) = 71 x ceil(6/5) = 142."""
    query = dataclasses.replace(train_queries[1], people_number=6)
    assert (query.org, query.dest) == ("Kansas City", "Pensacola")
    driving = copy.deepcopy(query.annotated_plan)
    assert driving is not None
    assert driving[0]["transportation"].startswith("Self-driving, from Kansas City to Pensacola")
    taxi = copy.deepcopy(driving)
    taxi[0]["transportation"] = "Taxi, from Kansas City to Pensacola"
    by_car, by_taxi = evaluator.evaluate(query, driving), evaluator.evaluate(query, taxi)
    assert by_car.total_cost is not None and by_taxi.total_cost is not None
    assert by_taxi.total_cost - by_car.total_cost == 2866 - 142
    assert by_taxi.commonsense is not None
    assert by_taxi.commonsense["is_valid_transportation"] == (False, "The transportation is conflicting.")


def test_hard_constraints_need_complete_and_sandboxed_plans(
        evaluator: OfficialEvaluator, hard_rockford_query: Query, rockford_plan: list[Any]) -> None:
    rockford_plan[1]["dinner"] = "Nowhere Diner, Rockford"
    verdict = evaluator.evaluate(hard_rockford_query, rockford_plan)
    assert verdict.commonsense is not None
    assert verdict.commonsense["is_valid_information_in_sandbox"] == (
        False, "The dinner in day 2 is invalid in the sandbox.")
    assert verdict.hard is None and verdict.total_cost is None


def test_undelivered_plans(evaluator: OfficialEvaluator, rockford_query: Query) -> None:
    for plan in (None, [], ""):
        verdict = evaluator.evaluate(rockford_query, plan)
        assert (verdict.commonsense, verdict.hard, verdict.total_cost, verdict.delivered) == (None, None, None, False)


def test_local_constraint_none_gives_none(evaluator: OfficialEvaluator, rockford_query: Query,
                                          rockford_plan: list[Any]) -> None:
    only_room = dataclasses.replace(rockford_query, local_constraint=LocalConstraint(room_type="private room"))
    verdict = evaluator.evaluate(only_room, rockford_plan)
    assert verdict.hard is not None
    assert verdict.hard["valid_room_type"] == (False, "The room type should be private room.")
    assert verdict.hard["valid_cuisine"] == verdict.hard["valid_room_rule"] == (None, None)
