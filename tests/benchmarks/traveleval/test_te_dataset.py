"""TravelEval's splits from the staged query files, and malformed files named precisely."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.traveleval.dataset import SPLITS, load_tasks, read_queries
from errors import DataError


def test_the_six_splits(traveleval_data: Path) -> None:
    sizes = {split: len(load_tasks(traveleval_data, split)) for split in SPLITS}
    assert sizes == {"easy": 200, "medium": 400, "hard": 400, "all": 1000, "progressive": 150, "full": 1150}
    assert [task.id for task in load_tasks(traveleval_data, "full")] == [
        task.id for split in ("all", "progressive") for task in load_tasks(traveleval_data, split)]
    # The official hard.json names its 340th query T1002 where T0940 would be (a quirk of the data, kept).
    expected = [f"T{n:04d}" for n in range(1, 1001)]
    expected[939] = "T1002"
    assert [task.id for task in load_tasks(traveleval_data, "all")] == expected
    assert {task.input["tag"] for task in load_tasks(traveleval_data, "medium")} == {"medium"}


def test_inputs_are_the_query_objects(traveleval_data: Path) -> None:
    raw = json.loads((traveleval_data / "data" / "queries" / "hard.json").read_text(encoding="utf-8"))
    assert [dict(task.input) for task in load_tasks(traveleval_data, "hard")] == raw["queries"]


def test_progressive_queries_carry_group_and_step(traveleval_data: Path) -> None:
    raw = json.loads((traveleval_data / "data" / "queries" / "progressive.json").read_text(encoding="utf-8"))
    tasks = load_tasks(traveleval_data, "progressive")
    assert [t.id for t in tasks[:4]] == ["G01-1", "G01-2", "G01-3", "G02-1"]
    assert all(t.id == f"{t.input['group']}-{t.input['step']}" for t in tasks)
    assert {k: v for k, v in tasks[4].input.items() if k not in ("group", "step")} == raw["query_groups"][1][1]
    assert [t.input["tag"] for t in tasks[:3]] == ["easy", "medium", "hard"]


def test_an_unknown_split_or_a_missing_file(traveleval_data: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="unknown TravelEval split 'test'"):
        load_tasks(traveleval_data, "test")
    with pytest.raises(DataError, match=r"data/queries/easy\.json: no such file \(run `tripbench data fetch"):
        load_tasks(tmp_path, "easy")


def _query(**changes: Any) -> dict[str, Any]:
    query: dict[str, Any] = {"uid": "T0001", "tag": "easy", "start_city": "北京", "target_city": "上海", "days": 3,
                             "people_number": 2, "budget": 3000, "dates": "2024-12-15 to 2024-12-17",
                             "transportation": {}, "diet": {"preferences": ["川菜"], "constraints": []}}
    query.update(changes)
    return {k: v for k, v in query.items() if v is not None}


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not a readable JSON file"),
    ([], 'expected an object with a "queries" or "query_groups" list'),
    ({"queries": [_query(days="3")]}, "queries[0] (T0001): days: expected an integer, got '3'"),
    ({"queries": [_query(uid=None)]}, "queries[0]: uid: expected text, got nothing"),
    ({"queries": [_query(budget=True)]}, "queries[0] (T0001): budget: expected a number, got True"),
    ({"queries": [_query(), _query()]}, "queries[1]: uid 'T0001' appears twice"),
    ({"queries": [_query(diet={"preferences": "川菜"})]}, "diet.preferences: expected a list of text, got '川菜'"),
    ({"queries": [_query(rhythm=[])]}, "rhythm: expected an object (preferences / constraints), got []"),
    ({"query_groups": [[_query()], {"uid": "G"}]}, "query_groups[1]: expected a list of queries, got dict"),
    ({"query_groups": [[_query(), "G01-2"]]}, "query_groups[0][1]: expected a query object, got str"),
])
def test_a_malformed_file_names_file_query_and_field(tmp_path: Path, content: Any, message: str) -> None:
    path = tmp_path / "queries.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False),
                    encoding="utf-8")
    with pytest.raises(DataError) as raised:
        read_queries(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)
