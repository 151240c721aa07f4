"""Submission files: pairing by position, embedded query records, bad lines, and the format check (§6.4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.travelplanner.dataset import Query
from benchmarks.travelplanner.evaluation.submission import (
    DAY_KEYS,
    check_submission,
    evaluate_submission,
    plan_problems,
)
from errors import DataError, UserError


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def _record(query: Query, **changes: Any) -> dict[str, Any]:
    """A Hugging Face-layout record with Python-literal string fields, as the Hub serves it."""
    record = {"org": query.org, "dest": query.dest, "days": query.days,
              "visiting_city_number": query.visiting_city_number, "date": repr(list(query.date)),
              "people_number": query.people_number, "local_constraint": repr(query.local_constraint.as_dict()),  # type: ignore[union-attr]
              "budget": query.budget, "query": query.query, "level": query.level}
    return {**record, **changes}


def test_lines_pair_with_queries_by_position(tmp_path: Path, sandbox: Any, train_queries: list[Query]) -> None:
    plans = [q.annotated_plan for q in train_queries[:3]]
    path = _write(tmp_path / "s.jsonl", [{"idx": 99, "query": "ignored", "plan": plan} for plan in plans])
    result = evaluate_submission(path, sandbox, split_queries=train_queries[:3])
    assert result.queries == train_queries[:3]
    assert result.scores.rates["Final Pass Rate"] == 1.0
    swapped = _write(tmp_path / "swapped.jsonl", [{"idx": 1, "query": "", "plan": plans[1]},
                                                  {"idx": 2, "query": "", "plan": plans[0]}])
    result = evaluate_submission(swapped, sandbox, split_queries=train_queries[:2])
    assert result.scores.rates["Final Pass Rate"] == 0.0
    assert result.misaligned == []  # empty texts say nothing
    labelled = _write(tmp_path / "labelled.jsonl", [{"idx": 1, "query": train_queries[1].query, "plan": plans[1]},
                                                    {"idx": 2, "query": train_queries[1].query, "plan": plans[0]}])
    assert evaluate_submission(labelled, sandbox, split_queries=train_queries[:2]).misaligned == [1]


def test_embedded_query_record_is_used(tmp_path: Path, sandbox: Any, rockford_query: Query) -> None:
    """A line carrying a full record (literal-string fields) is scored against it: docs/fidelity/travelplanner.md §11's
    7704 case."""
    record = _record(rockford_query, people_number=6, level="hard", local_constraint=str(
        {"house rule": "smoking", "cuisine": ["French", "Seafood"], "room type": "entire room",
         "transportation": "no flight"}))
    path = _write(tmp_path / "s.jsonl", [{"idx": 1, "query": record, "plan": rockford_query.annotated_plan}])
    result = evaluate_submission(path, sandbox)
    (verdict,) = result.verdicts
    assert verdict.total_cost == 7704
    assert verdict.hard is not None and verdict.hard["valid_room_rule"] == (False, "The house rule should be smoking.")
    assert result.scores.hard_total == 5


def test_mixed_file(tmp_path: Path, sandbox: Any, train_queries: list[Query]) -> None:
    lines = [{"idx": 1, "query": _record(train_queries[5]), "plan": train_queries[5].annotated_plan},
             {"idx": 2, "query": train_queries[1].query, "plan": train_queries[1].annotated_plan}]
    result = evaluate_submission(_write(tmp_path / "s.jsonl", lines), sandbox, split_queries=train_queries,
                                 split="train")
    embedded = result.queries[0]
    assert (embedded.query, embedded.local_constraint, embedded.people_number) == (
        train_queries[5].query, train_queries[5].local_constraint, train_queries[5].people_number)
    assert result.queries[1] is train_queries[1]
    assert all(v.commonsense is not None for v in result.verdicts[:2])
    assert len(result.verdicts) == 45  # the split's other queries have no line: not delivered
    assert result.verdicts[2].error == "no submission line for this query"
    assert result.scores.hard_total == 105
    assert result.scores.rates["Delivery Rate"] == pytest.approx(2 / 45)


def test_unreadable_lines_are_undelivered(tmp_path: Path, sandbox: Any, train_queries: list[Query]) -> None:
    path = _write(tmp_path / "s.jsonl", ['{"idx": 1, "plan": [', '[1, 2]', {"idx": 3, "plan": None},
                                         "[" * 100_000 + "]" * 100_000])
    result = evaluate_submission(path, sandbox, split_queries=train_queries[:4])
    assert [v.error for v in result.verdicts] == [
        "line 1: not valid JSON (Expecting value)", "line 2: expected a JSON object, got list", None,
        "line 4: JSON nested too deeply (more than 64 levels)"]
    assert not any(v.delivered for v in result.verdicts)


def test_pairing_errors(tmp_path: Path, sandbox: Any, train_queries: list[Query]) -> None:
    path = _write(tmp_path / "s.jsonl", [{"idx": 1, "query": "q", "plan": None}] * 3)
    with pytest.raises(DataError, match="line 3: the query set has only 2 queries"):
        evaluate_submission(path, sandbox, split_queries=train_queries[:2])
    with pytest.raises(UserError, match="line 1 has no query record: pass --split or --queries"):
        evaluate_submission(path, sandbox)
    with pytest.raises(UserError, match="public test split hides"):
        evaluate_submission(path, sandbox, split="test")
    bad = _write(tmp_path / "bad.jsonl", [{"idx": 1, "query": _record(train_queries[0], days="x"), "plan": None}])
    with pytest.raises(DataError, match=r"bad\.jsonl:1: query record: field 'days'"):
        evaluate_submission(bad, sandbox)


def test_test_split_without_labels_is_refused(tmp_path: Path, sandbox: Any, train_queries: list[Query]) -> None:
    hidden = _record(train_queries[0], people_number=None, budget=None, local_constraint=None,
                     visiting_city_number=None)
    path = _write(tmp_path / "s.jsonl", [{"idx": 1, "query": hidden, "plan": train_queries[0].annotated_plan}])
    with pytest.raises(UserError, match="query 1 has no labels: the public test split hides"):
        evaluate_submission(path, sandbox)


def test_a_query_record_missing_some_labels_is_named(tmp_path: Path, sandbox: Any, train_queries: list[Query]) -> None:
    """A custom record without a budget is not the public test split: the message names the line and field."""
    plan = train_queries[0].annotated_plan
    lines = [{"idx": 1, "query": _record(train_queries[0]), "plan": plan},
             {"idx": 2, "query": _record(train_queries[0], budget=None), "plan": plan}]
    with pytest.raises(UserError) as raised:
        evaluate_submission(_write(tmp_path / "s.jsonl", lines), sandbox)
    assert str(raised.value) == ("line 2: its query record lacks budget: the evaluator needs every one of "
                                 "visiting_city_number, people_number, local_constraint, budget")


def test_check_submission_reports_each_bad_line(tmp_path: Path, train_queries: list[Query]) -> None:
    good = train_queries[0].annotated_plan
    broken = [dict(day) for day in train_queries[1].annotated_plan]  # type: ignore[union-attr]
    broken[0]["transportation"] = "Flight number: F1, from Kansas City to Pensacola"
    del broken[1]["lunch"]
    broken[2]["current_city"] = "from Pensacola"
    broken[2]["accommodation"] = None
    lines = [{"idx": 1, "query": train_queries[0].query, "plan": good},
             {"idx": 2, "query": train_queries[1].query, "plan": broken},
             "not json",
             {"idx": 7, "query": "another query", "plan": "text"}]
    problems = check_submission(_write(tmp_path / "s.jsonl", lines), split="train", split_queries=train_queries[:4])
    assert problems == [
        "line 2: day 1: transportation 'Flight number: F1, from Kansas City to Pensacola' must spell the flight "
        "as 'Flight Number: '",
        "line 2: day 2: missing key 'lunch'",
        "line 2: day 3: accommodation is null (the official minimum-nights check crashes on it)",
        "line 2: day 3: current_city 'from Pensacola' contains 'from' but not 'from A to B'",
        "line 3: not valid JSON (Expecting value)",
        "line 4: idx is 7, expected 4 (lines are paired by position)",
        "line 4: query text differs from query 4 of the split",
        "line 4: plan must be a list of day objects, got str",
    ]


def test_check_submission_counts_test_lines(tmp_path: Path, train_queries: list[Query]) -> None:
    lines = [{"idx": i + 1, "query": q.query, "plan": q.annotated_plan} for i, q in enumerate(train_queries)]
    path = _write(tmp_path / "s.jsonl", lines)
    assert check_submission(path, split="test") == [
        f"{path}: 45 lines, but the test set has 1000 queries (lines are paired with queries by position; "
        "the file must cover every query)"]
    assert check_submission(path, split="train", split_queries=train_queries) == []


def test_plan_days_are_inferred_without_the_query(train_queries: list[Query]) -> None:
    """Public test split: no `days`, so the leading filled day objects are checked, trailing `{}` ignored."""
    plan = [dict(day) for day in train_queries[0].annotated_plan]  # type: ignore[union-attr]
    assert len(plan) == 7 and plan[3:] == [{}, {}, {}, {}]
    assert plan_problems(plan, None) == []
    assert plan_problems(plan, 7) == [f"day {i}: missing key {key!r}" for i in range(4, 8) for key in DAY_KEYS]
    plan[2]["transportation"] = "Flight Number:F3573120, from Rockford to St. Petersburg"
    assert plan_problems(plan, None) == [
        "day 3: transportation 'Flight Number:F3573120, from Rockford to St. Petersburg' must spell the flight "
        "as 'Flight Number: '"]
