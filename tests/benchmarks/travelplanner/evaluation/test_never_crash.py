"""Plans that crash the official evaluator (docs/fidelity/travelplanner.md §7.6) fail the constraint that could not be
checked, and nothing else; arbitrary junk never raises."""

from __future__ import annotations

import copy
import dataclasses
import random
import time
from typing import Any

import pytest

from benchmarks.travelplanner.dataset import Query
from benchmarks.travelplanner.evaluation import COMMONSENSE_KEYS, HARD_KEYS, OfficialEvaluator


def _verdict(evaluator: OfficialEvaluator, query: Query, plan: Any) -> dict[str, Any]:
    verdict = evaluator.evaluate(query, plan)
    assert verdict.commonsense is not None
    return verdict.commonsense


def test_empty_day_object(evaluator: OfficialEvaluator, rockford_query: Query) -> None:
    assert _verdict(evaluator, rockford_query, [{}]) == {
        "is_reasonable_visiting_city": (False, "Could not check: day 1 has no 'current_city'"),
        "is_valid_restaurants": (True, None),
        "is_valid_attractions": (True, None),
        "is_valid_accommodation": (False, "No Accommodation Info."),
        "is_valid_transportation": (False, "Could not check: day 1 has no 'transportation'"),
        "is_valid_information_in_current_city": (False, "Could not check: day 1 has no 'current_city'"),
        "is_valid_information_in_sandbox": (False, "Could not check: day 1 has no 'transportation'"),
        "is_not_absent": (False, "Invalid Days"),  # `{}` days are simply absent officially
    }


CRASHES = [
    ("unparsable from", 1, "current_city", "from St. Petersburg", "is_reasonable_visiting_city",
     "day 1 current_city 'from St. Petersburg' has 'from' but no parsable 'from A to B'"),
    ("flight number spelling", 1, "transportation", "Flight number: F3573659, from St. Petersburg to Rockford",
     "is_valid_information_in_sandbox",
     "day 1 transportation lacks the exact text 'Flight Number: '"),
    ("flight number without space", 1, "transportation", "Flight Number:F3573659, from St. Petersburg to Rockford",
     "is_valid_information_in_sandbox",
     "day 1 transportation lacks the exact text 'Flight Number: '"),
    ("non-text value", 2, "breakfast", 5, "is_valid_information_in_sandbox", "day 2 breakfast is not text (int)"),
    ("list value", 2, "lunch", ["Flying Mango, Rockford"], "is_valid_restaurants", "day 2 lunch is not text (list)"),
    ("null current city", 2, "current_city", None, "is_valid_information_in_current_city",
     "day 2 current_city is null"),
    ("huge text", 2, "dinner", "Cafe Southall, Rockford" * 100_000, "is_valid_information_in_sandbox",
     "day 2 dinner is 2,300,000 characters long (limit 2,000)"),
]


@pytest.mark.parametrize(("day", "key", "value", "constraint", "reason"), [c[1:] for c in CRASHES],
                         ids=[c[0] for c in CRASHES])
def test_official_crash_inputs_fail_the_unchecked_constraint(
        evaluator: OfficialEvaluator, rockford_query: Query, rockford_plan: list[Any],
        day: int, key: str, value: Any, constraint: str, reason: str) -> None:
    rockford_plan[day - 1][key] = value
    started = time.perf_counter()
    result = _verdict(evaluator, rockford_query, rockford_plan)
    assert time.perf_counter() - started < 2  # no quadratic regex on huge text
    assert result[constraint] == (False, f"Could not check: {reason}")


def test_flight_leg_without_cities(evaluator: OfficialEvaluator, rockford_query: Query,
                                   rockford_plan: list[Any]) -> None:
    rockford_plan[0]["current_city"] = "St. Petersburg"
    rockford_plan[0]["transportation"] = "Flight Number: F3573659"
    assert _verdict(evaluator, rockford_query, rockford_plan)["is_valid_information_in_sandbox"] == (
        False, "Could not check: The transportation Flight Number: F3573659 in day 1 can not be parsed.")


def test_empty_current_city(evaluator: OfficialEvaluator, rockford_query: Query, rockford_plan: list[Any]) -> None:
    rockford_plan[1]["current_city"] = ""
    result = _verdict(evaluator, rockford_query, rockford_plan)
    # official: no character of '' occurs in the breakfast, so it fails before reaching the hotel
    assert result["is_valid_information_in_current_city"] == (False, "The breakfast in day 2 is invalid city choice.")
    for meal in ("breakfast", "lunch", "dinner", "attraction"):
        rockford_plan[1][meal] = "-"
    result = _verdict(evaluator, rockford_query, rockford_plan)
    # official: IndexError on ''[-1]
    assert result["is_valid_information_in_current_city"] == (False, "Could not check: day 2 current_city is empty")


def test_missing_transportation_key(evaluator: OfficialEvaluator, rockford_query: Query,
                                    rockford_plan: list[Any]) -> None:
    del rockford_plan[1]["transportation"]
    result = _verdict(evaluator, rockford_query, rockford_plan)
    assert result["is_valid_information_in_sandbox"] == (False, "Could not check: day 2 has no 'transportation'")
    assert result["is_valid_transportation"] == (False, "Could not check: day 2 has no 'transportation'")
    assert result["is_not_absent"] == (False, "No Transportation Info.")
    assert result["is_valid_restaurants"] == (True, None)


def test_null_accommodation(official: OfficialEvaluator, strict: OfficialEvaluator, rockford_query: Query,
                            rockford_plan: list[Any]) -> None:
    rockford_plan[2]["accommodation"] = None
    assert _verdict(official, rockford_query, rockford_plan)["is_valid_accommodation"] == (
        False, "Could not check: an accommodation is null")
    assert _verdict(strict, rockford_query, rockford_plan)["is_valid_accommodation"] == (True, None)


@pytest.mark.parametrize("plan", ["a plan as text", {"day 1": "Rockford"}, 42])
def test_plan_that_is_not_a_list(evaluator: OfficialEvaluator, rockford_query: Query, plan: Any) -> None:
    verdict = evaluator.evaluate(rockford_query, plan)
    assert verdict.delivered and verdict.hard is None
    assert all(result[0] is False and result[1].startswith("Could not check: the plan is not a list")
               for result in verdict.commonsense.values())  # type: ignore[union-attr]


def test_non_dict_days(evaluator: OfficialEvaluator, rockford_query: Query, rockford_plan: list[Any]) -> None:
    rockford_plan[1] = "day two"
    result = _verdict(evaluator, rockford_query, rockford_plan)
    assert result["is_valid_information_in_sandbox"] == (False, "Could not check: day 2 is not an object (str)")


def test_days_outside_3_5_7(evaluator: OfficialEvaluator, rockford_query: Query, rockford_plan: list[Any]) -> None:
    """Official eval keys its tables by days in {3, 5, 7}; ours scores any trip length."""
    four_days = dataclasses.replace(rockford_query, days=4)
    plan = rockford_plan[:2] + [copy.deepcopy(rockford_plan[1]), rockford_plan[2]]
    plan[2]["breakfast"], plan[2]["lunch"], plan[2]["dinner"] = ("Subway, Rockford", "Nutri Punch, Rockford",
                                                                  "Gajalee Sea Food, Rockford")
    result = _verdict(evaluator, four_days, plan)
    assert result["is_not_absent"] == (True, None)
    assert result["is_valid_restaurants"] == (False, "The restaurant in day 4 breakfast is repeated.")


JUNK: list[Any] = [None, 0, 7, 1.5, True, [], {}, "", "-", "from", "from  to ", "Flight Number: ", "Flight number: F1",
                   "to", ";", ";;;", ",", "x" * 3000, "\ud800", "Rockford(", "(Illinois)", "from A to B(", "taxi",
                   "self-driving", "Self-driving, from Rockford to", "Name, ", ", Rockford;", ["a"], {"a": 1}]


def test_random_junk_never_raises(evaluator: OfficialEvaluator, train_queries: list[Query]) -> None:
    rng = random.Random(20240101)
    for _ in range(400):
        query = rng.choice(train_queries)
        plan: Any = copy.deepcopy(query.annotated_plan)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(plan))
            action = rng.random()
            if action < 0.1:
                plan[i] = rng.choice(JUNK)
            elif action < 0.2 and isinstance(plan[i], dict) and plan[i]:
                del plan[i][rng.choice(list(plan[i]))]
            elif action < 0.25:
                plan = plan[: rng.randint(1, len(plan))]
            elif isinstance(plan[i], dict):
                plan[i][rng.choice(["current_city", "transportation", "breakfast", "attraction", "lunch", "dinner",
                                    "accommodation"])] = rng.choice(JUNK)
        verdict = evaluator.evaluate(query, plan)
        assert verdict.commonsense is not None and list(verdict.commonsense) == list(COMMONSENSE_KEYS)
        for result, message in verdict.commonsense.values():
            assert result is True and message is None or result is False and isinstance(message, str)
        if verdict.hard is not None:
            assert list(verdict.hard) == list(HARD_KEYS)
            for result, message in verdict.hard.values():  # budget fails without a message, officially
                assert result in (True, False, None) and (message is None or result is False)
