"""The official metrics (docs/fidelity/travelplanner.md §7.5) on a crafted set with known counts."""

from __future__ import annotations

from fractions import Fraction

import pytest

from benchmarks.travelplanner.dataset import LocalConstraint, Query
from benchmarks.travelplanner.evaluation import COMMONSENSE_KEYS, HARD_KEYS, PlanVerdict
from benchmarks.travelplanner.evaluation.metrics import compute_scores, hard_denominator


def _query(level: str, days: int, constraint: LocalConstraint) -> Query:
    return Query(org="A", dest="B", days=days, date=(), query="q", level=level, visiting_city_number=1,
                 people_number=2, local_constraint=constraint, budget=1000)


def _commonsense(*failed: str) -> dict[str, tuple[bool | None, str | None]]:
    return {key: ((False, "no") if key in failed else (True, None)) for key in COMMONSENSE_KEYS}


def _hard(**results: bool) -> dict[str, tuple[bool | None, str | None]]:
    return {key: ((results[key], None if results[key] else "no") if key in results else (None, None))
            for key in HARD_KEYS}


EASY = _query("easy", 3, LocalConstraint())
MEDIUM = _query("medium", 3, LocalConstraint(cuisine=("Chinese", "Indian")))
HARD = _query("hard", 5, LocalConstraint(house_rule="pets", room_type="private room", transportation="no flight"))
QUERIES = [EASY, MEDIUM, HARD, HARD]
VERDICTS = [
    # passes everything: counts in every rate
    PlanVerdict(_commonsense(), _hard(valid_cost=True), 500),
    # one commonsense failure; cuisine passes, budget fails
    PlanVerdict(_commonsense("is_valid_restaurants"), _hard(valid_cuisine=True, valid_cost=False), 1500),
    # not delivered
    PlanVerdict(None, None, None),
    # fails Within Sandbox: no hard box
    PlanVerdict(_commonsense("is_valid_information_in_sandbox"), None, None),
]


def test_rates_of_a_crafted_set() -> None:
    scores = compute_scores(QUERIES, VERDICTS)
    assert scores.queries == 4
    assert scores.hard_total == hard_denominator(QUERIES) == 1 + 2 + 4 + 4
    expected = {
        "Delivery Rate": Fraction(3, 4),
        "Commonsense Constraint Micro Pass Rate": Fraction(8 + 7 + 7, 8 * 4),
        "Commonsense Constraint Macro Pass Rate": Fraction(1, 4),
        "Hard Constraint Micro Pass Rate": Fraction(1 + 1, 11),  # q1 budget, q2 cuisine
        "Hard Constraint Macro Pass Rate": Fraction(1, 4),  # q2 fails budget, q3/q4 have no hard box
        "Final Pass Rate": Fraction(1, 4),
    }
    assert list(scores.rates) == list(expected)
    for name, value in expected.items():
        assert scores.rates[name] == pytest.approx(float(value)), name


def test_hard_macro_counts_plans_failing_other_commonsense_checks() -> None:
    """Spec §7.5: a plan with a hard box and no hard failure counts in hard macro, not in final."""
    verdict = PlanVerdict(_commonsense("is_valid_restaurants"), _hard(valid_cost=True), 10)
    scores = compute_scores([EASY], [verdict])
    assert scores.rates["Hard Constraint Macro Pass Rate"] == 1.0
    assert scores.rates["Final Pass Rate"] == 0.0


def test_detailed_table() -> None:
    detailed = compute_scores(QUERIES, VERDICTS).detailed
    assert list(detailed["Commonsense Constraint"]) == ["easy", "medium", "hard"]
    assert detailed["Commonsense Constraint"]["hard"][5]["Within Sandbox"] == {"true": 0, "false": 1, "total": 2}
    assert detailed["Commonsense Constraint"]["medium"][3]["Diverse Restaurants"] == {"true": 0, "false": 1, "total": 1}
    assert detailed["Hard Constraint"]["easy"][3] == {"Budget": {"true": 1, "false": 0, "total": 1}}
    assert detailed["Hard Constraint"]["medium"][3] == {"Cuisine": {"true": 1, "false": 0, "total": 1},
                                                       "Budget": {"true": 0, "false": 1, "total": 1}}
    assert detailed["Hard Constraint"]["hard"][5] == {
        "Room Rule": {"true": 0, "false": 0, "total": 2}, "Transportation": {"true": 0, "false": 0, "total": 2},
        "Room Type": {"true": 0, "false": 0, "total": 2}, "Budget": {"true": 0, "false": 0, "total": 2}}


def test_fixed_denominators_only_for_whole_official_splits(train_queries: list[Query]) -> None:
    undelivered = [PlanVerdict(None, None, None)] * 45
    assert compute_scores(train_queries, undelivered, split="train").hard_total == 105
    assert compute_scores(train_queries[:44], undelivered[:44], split="train").hard_total == hard_denominator(
        train_queries[:44])
    assert hard_denominator(train_queries) == 105  # the general rule agrees with eval.py's constant
    assert compute_scores(train_queries, undelivered, split="train").rates == dict.fromkeys(
        compute_scores(train_queries, undelivered).rates, 0.0)
