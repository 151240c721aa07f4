"""Each official quirk (docs/fidelity/travelplanner.md §7, §11), in both modes: strict flips exactly the documented
ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.travelplanner.dataset import LocalConstraint, Query
from benchmarks.travelplanner.evaluation import OfficialEvaluator, StrictEvaluator
from benchmarks.travelplanner.evaluation.verdict import Result

Mutation = Callable[[list[Any]], None]


def _set(day: int, key: str, value: Any) -> Mutation:
    def mutate(plan: list[Any]) -> None:
        plan[day - 1][key] = value
    return mutate


def _all(*mutations: Mutation) -> Mutation:
    def mutate(plan: list[Any]) -> None:
        for mutation in mutations:
            mutation(plan)
    return mutate


ELSEWHERE = _all(_set(1, "current_city", "from St. Petersburg to Chicago"), _set(2, "current_city", "Chicago"),
                 _set(3, "current_city", "from Chicago to St. Petersburg"))
DRIVE = _set(1, "transportation", "Drive from St. Petersburg to Rockford")

# (id, mutation of the docs/fidelity/travelplanner.md §11 plan, constraint key, official result, strict result)
FLIPPED: list[tuple[str, Mutation, str, Result, Result]] = [
    ("per-character meal city #50", _set(2, "lunch", "Flying Mango, Chicago"), "is_valid_information_in_current_city",
     (True, None), (False, "The lunch in day 2 is invalid city choice.")),
    ("per-character hotel city #50", _set(2, "accommodation", "Foo, Chicagd"), "is_valid_information_in_current_city",
     (True, None), (False, "The accommodation in day 2 is invalid city choice.")),
    ("substring names", _set(2, "lunch", "Fly, Rockford"), "is_valid_information_in_sandbox",
     (True, None), (False, "The lunch in day 2 is invalid in the sandbox.")),
    ("last attraction dropped", _set(2, "attraction", "Fake Place, Rockford"), "is_valid_information_in_sandbox",
     (True, None), (False, "The attraction Fake Place, Rockford in day 2 is invalid in the sandbox.")),
    ("last attraction dropped in diversity",
     _all(_set(2, "attraction", "Burpee Museum of Natural History, Rockford;Sinnissippi Park, Rockford"),
          _set(3, "attraction", "Klehm Arboretum & Botanic Garden, Rockford;Sinnissippi Park, Rockford;")),
     "is_valid_attractions", (True, None),
     (False, "The attraction 'Sinnissippi Park, Rockford' in day 3 is repeated.")),
    ("Drive is no mode #51, sandbox", DRIVE, "is_valid_information_in_sandbox",
     (True, None), (False, "The self-driving in day 1 is invalid in the sandbox.")),
    ("Drive is no mode #51, conflict", DRIVE, "is_valid_transportation",
     (True, None), (False, "The transportation is conflicting.")),
    ("unknown modes unchecked #51", _set(3, "transportation", "Bus from Rockford to St. Petersburg"),
     "is_valid_information_in_sandbox",
     (True, None), (False, "The transportation in day 3 is not a flight, self-driving or taxi.")),
    ("null counts as filled", _set(2, "breakfast", None), "is_not_absent",
     (True, None), (False, "No meal in day 2 is not allowed.")),
    ("3-day destination unchecked", ELSEWHERE, "is_reasonable_visiting_city",
     (True, None), (False, "Chicago is not Rockford.")),
]

# quirks both modes keep (same result): (id, mutation, key, result)
SHARED: list[tuple[str, Mutation, str, Result]] = [
    ("parenthesis keeps the space", _set(2, "current_city", "Rockford (Illinois)"), "is_reasonable_visiting_city",
     (False, "The city sequence is invalid.")),
    ("travel day cities lose their state",
     _set(1, "current_city", "from St. Petersburg(Florida) to Rockford(Illinois)"),
     "is_valid_information_in_current_city", (True, None)),
    ("travel day states, both directions",
     _set(3, "current_city", "from Rockford(Illinois) to St. Petersburg(Florida)"),
     "is_valid_information_in_current_city", (True, None)),
    ("travel day state keeps the space", _set(1, "current_city", "from St. Petersburg to Rockford (Illinois)"),
     "is_valid_information_in_current_city", (False, "The transportation in day 1 is invalid city choice.")),
    ("travel day state, a hotel elsewhere", _all(_set(1, "current_city", "from St. Petersburg to Rockford(Illinois)"),
                                                  _set(1, "accommodation", "Foo, Chicago")),
     "is_valid_information_in_current_city", (False, "The accommodation in day 1 is invalid city choice.")),
    ("first day leaves from org", _set(1, "current_city", "from Tampa to Rockford"), "is_reasonable_visiting_city",
     (False, "The first day's city should be St. Petersburg.")),
    ("repeated restaurant, raw string", _set(2, "lunch", "Coco Bambu, Rockford"), "is_valid_restaurants",
     (False, "The restaurant in day 2 lunch Coco Bambu, Rockford is repeated.")),
    ("restaurant differing by a space", _set(2, "lunch", "Coco Bambu, Rockford "), "is_valid_restaurants",
     (True, None)),
    ("one-match minimum nights", _all(_set(1, "accommodation", "The heart of Brooklyn, Rockford"),
                                      _set(2, "accommodation", "The heart of Brooklyn, Rockford")),
     "is_valid_accommodation",
     (False, "The accommodation The heart of Brooklyn, Rockford do not obey the minumum nights rule.")),
    ("empty first leg", _set(1, "transportation", "-"), "is_valid_transportation",
     (False, "The transportation in day 1 should not be empty.")),
    ("taxi plus flight is allowed", _set(3, "transportation", "Taxi, from Rockford to St. Petersburg"),
     "is_valid_transportation", (True, None)),
    ("travel day may skip meals", _set(3, "breakfast", "-"), "is_not_absent", (True, None)),
    ("the last day needs no hotel", _set(3, "accommodation", "-"), "is_not_absent", (True, None)),
    ("other days need a hotel", _set(2, "accommodation", "-"), "is_not_absent",
     (False, "No accommodation in day 2 is not allowed.")),
    ("non-travel days need an attraction", _set(2, "attraction", "-"), "is_not_absent",
     (False, "No attaction in day 2 is not allowed.")),
]


@pytest.mark.parametrize(("mutation", "key", "official_result", "strict_result"),
                         [case[1:] for case in FLIPPED], ids=[case[0] for case in FLIPPED])
def test_strict_flips_documented_quirks(official: OfficialEvaluator, strict: StrictEvaluator, rockford_query: Query,
                                       rockford_plan: list[Any], mutation: Mutation, key: str,
                                       official_result: Result, strict_result: Result) -> None:
    mutation(rockford_plan)
    assert official.evaluate(rockford_query, rockford_plan).commonsense[key] == official_result  # type: ignore[index]
    assert strict.evaluate(rockford_query, rockford_plan).commonsense[key] == strict_result  # type: ignore[index]


@pytest.mark.parametrize(("mutation", "key", "result"), [case[1:] for case in SHARED], ids=[case[0] for case in SHARED])
def test_shared_behaviour(evaluator: OfficialEvaluator, rockford_query: Query, rockford_plan: list[Any],
                          mutation: Mutation, key: str, result: Result) -> None:
    mutation(rockford_plan)
    assert evaluator.evaluate(rockford_query, rockford_plan).commonsense[key] == result  # type: ignore[index]


def test_cuisine_continue_skips_the_rest_of_the_day(official: OfficialEvaluator, strict: StrictEvaluator,
                                                    hard_rockford_query: Query, rockford_plan: list[Any]) -> None:
    """Spec §11: a day-2 breakfast in the origin city hides that day's Seafood lunch and dinner officially."""
    rockford_plan[1]["breakfast"] = "Applebee's, St. Petersburg"
    official_verdict = official.evaluate(hard_rockford_query, rockford_plan)
    strict_verdict = strict.evaluate(hard_rockford_query, rockford_plan)
    assert official_verdict.hard is not None and strict_verdict.hard is not None
    assert official_verdict.hard["valid_cuisine"] == (False, "The cuisine Seafood is not satisfied.")
    assert strict_verdict.hard["valid_cuisine"] == (True, None)


def test_self_driving_rule_is_case_sensitive(official: OfficialEvaluator, strict: StrictEvaluator,
                                            train_queries: list[Query]) -> None:
    """Issue #51: lower-case `self-driving` escapes `no self-driving` officially."""
    query = dataclasses.replace(train_queries[1], local_constraint=LocalConstraint(transportation="no self-driving"))
    plan = [dict(day) for day in query.annotated_plan]  # type: ignore[union-attr]
    violation = (False, "The transportation should not be no self-driving.")
    for evaluator in (official, strict):
        assert evaluator.evaluate(query, plan).hard["valid_transportation"] == violation  # type: ignore[index]
    for day in plan:
        if day and day["transportation"] != "-":
            day["transportation"] = day["transportation"].replace("Self-driving", "self-driving")
    assert official.evaluate(query, plan).hard["valid_transportation"] == (True, None)  # type: ignore[index]
    assert strict.evaluate(query, plan).hard["valid_transportation"] == violation  # type: ignore[index]


def test_minimum_nights_with_several_matches(official: OfficialEvaluator, strict: StrictEvaluator,
                                             rockford_query: Query) -> None:
    """The Boston duplicate `IN MINT CONDITION-STUDIOS ...` (2 rows, 30 nights) is never checked officially."""
    query = dataclasses.replace(rockford_query, org="Rockford", dest="Boston")
    stay = "IN MINT CONDITION-STUDIOS EAST 44TH/UNITED NATIONS, Boston"
    plan = [{"current_city": "from Rockford to Boston", "accommodation": stay},
            {"current_city": "Boston", "accommodation": stay},
            {"current_city": "from Boston to Rockford", "accommodation": "-"}]
    assert official.evaluate(query, plan).commonsense["is_valid_accommodation"] == (True, None)  # type: ignore[index]
    assert strict.evaluate(query, plan).commonsense["is_valid_accommodation"] == (  # type: ignore[index]
        False, f"The accommodation {stay} do not obey the minumum nights rule.")
