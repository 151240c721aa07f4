"""Acceptance: the 45 human-annotated train plans pass every official constraint (final pass rate 100 %)."""

from __future__ import annotations

from benchmarks.travelplanner.dataset import Query
from benchmarks.travelplanner.evaluation import COMMONSENSE_KEYS, HARD_KEYS, OfficialEvaluator, StrictEvaluator
from benchmarks.travelplanner.evaluation.metrics import compute_scores


def test_every_annotated_plan_passes_every_official_constraint(
        train_queries: list[Query], official: OfficialEvaluator) -> None:
    verdicts = [official.evaluate(query, query.annotated_plan) for query in train_queries]
    for query, verdict in zip(train_queries, verdicts):
        assert verdict.commonsense is not None and verdict.hard is not None, query.query
        assert list(verdict.commonsense) == list(COMMONSENSE_KEYS)
        assert list(verdict.hard) == list(HARD_KEYS)
        assert all(result == (True, None) for result in verdict.commonsense.values()), (query.query, verdict)
        assert all(result[0] is not False for result in verdict.hard.values()), (query.query, verdict)
        assert verdict.total_cost is not None and verdict.total_cost <= query.budget  # type: ignore[operator]
    scores = compute_scores(train_queries, verdicts, split="train")
    assert scores.hard_total == 105
    assert scores.rates == dict.fromkeys(scores.rates, 1.0)


def test_hard_constraints_requested_are_scored_not_skipped(
        train_queries: list[Query], official: OfficialEvaluator) -> None:
    """None only where the query does not ask (docs/fidelity/travelplanner.md §7.4): every requested constraint is
    True."""
    for query in train_queries:
        verdict = official.evaluate(query, query.annotated_plan)
        assert verdict.hard is not None and query.local_constraint is not None
        asked = query.local_constraint
        for key, value in (("valid_cuisine", asked.cuisine), ("valid_room_rule", asked.house_rule),
                           ("valid_transportation", asked.transportation), ("valid_room_type", asked.room_type)):
            assert verdict.hard[key] == ((True, None) if value else (None, None))


def test_strict_mode_finds_the_one_human_plan_that_only_passes_by_character_matching(
        train_queries: list[Query], strict: StrictEvaluator) -> None:
    """Train query 41 (San Antonio day 4) lists San Angelo attractions: the official per-character city test
    (issue #50) lets it through; strict mode flags exactly that and nothing else among the 45 plans."""
    failures = {}
    for i, query in enumerate(train_queries):
        verdict = strict.evaluate(query, query.annotated_plan)
        assert verdict.hard is not None
        failed = {key: result for key, result in {**verdict.commonsense, **verdict.hard}.items()  # type: ignore[dict-item]
                  if result[0] is False}
        if failed:
            failures[i] = failed
    assert failures == {41: {"is_valid_information_in_current_city":
                             (False, "The attraction in day 4 is invalid city choice.")}}
