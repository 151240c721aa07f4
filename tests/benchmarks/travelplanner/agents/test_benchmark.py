"""TravelPlannerBenchmark: tasks from the staged splits, strategy statuses, evaluation and the submission file."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.base import DELIVERED, RolloutResult, Task
from benchmarks.registry import get_benchmark
from benchmarks.travelplanner.agents.parsing import render_plan
from benchmarks.travelplanner.agents.react import ReactLimits
from benchmarks.travelplanner.agents.strategies import SolePlanningStrategy, TwoStageStrategy
from errors import DataError


@pytest.fixture(scope="module")
def benchmark():
    return get_benchmark("travelplanner")


@pytest.fixture(scope="module")
def options(benchmark, travelplanner_data: Path, travelplanner_index: Path):
    return benchmark.options_model(data_dir=travelplanner_data, index=travelplanner_index)


@pytest.fixture(scope="module")
def train(benchmark, options) -> list[Task]:
    return list(benchmark.load_tasks("train", options))


def test_tasks_of_the_staged_splits(benchmark, options, train, travelplanner_data):
    assert [t.id for t in train[:3]] == ["1", "2", "3"] and len(train) == 45
    first = train[0].input
    assert (first["org"], first["dest"], first["days"], first["budget"]) == ("St. Petersburg", "Rockford", 3, 1700)
    assert first["reference_source"] == "dataset" and "annotated_plan" not in first
    validation = benchmark.load_tasks("validation", options)
    assert len(validation) == 180 and "reference_information" not in validation[0].input
    assert validation[0].input["reference_route"] == ["Myrtle Beach"]
    by_path = benchmark.load_tasks(travelplanner_data / "queries" / "validation.jsonl", options)
    assert [t.input for t in by_path] == [t.input for t in validation]
    with pytest.raises(DataError, match="test"):
        benchmark.load_tasks("test", options)


def test_annotated_plans_score_as_the_spec_fixture(benchmark, options, travelplanner_data, train):
    from benchmarks.travelplanner.dataset import load_queries

    plans = [[d for d in q.annotated_plan if d] for q in load_queries(travelplanner_data / "queries" / "train.jsonl")]
    results = [RolloutResult(status=DELIVERED, plan=plan) for plan in plans[:3]]
    results.append(RolloutResult(status="max_steps"))
    evaluations = benchmark.evaluate(train[:4], results, "official", options)
    first = {v.constraint: v.passed for v in evaluations[0].verdicts}
    # Spec §11: every commonsense check passes, local constraints do not apply, the budget holds at 1608.
    assert all(first[key] for key in ("is_valid_information_in_sandbox", "is_not_absent", "is_valid_restaurants"))
    assert [v.passed for v in evaluations[0].verdicts if v.group == "commonsense"] == [True] * 8
    assert first["valid_cost"] is True and first["valid_cuisine"] is None
    assert evaluations[0].details["total_cost"] == 1608
    assert evaluations[3].verdicts == () and evaluations[3].details["delivered"] is False
    lines = list(benchmark.submission(train[:4], results))
    assert lines[0] == {"idx": 1, "query": train[0].input["query"], "plan": plans[0]}
    assert lines[3]["plan"] is None


async def test_direct_on_validation_uses_rebuilt_reference_information(benchmark, options, scripted_model, sandbox):
    task = benchmark.load_tasks("validation", options)[0]
    scripted_model.enqueue("I cannot plan this.")
    strategy = SolePlanningStrategy(name="direct")
    result = await strategy(task, scripted_model, sandbox)
    prompt = scripted_model.prompts[0]
    text = prompt.split("Given information: ")[1].split("\nQuery: ")[0]
    assert text.startswith("[{'Description': 'Attractions in Myrtle Beach', 'Content': ")
    assert "'Description': 'Self-driving from Washington to Myrtle Beach'" in text
    assert "'Description': 'Taxi from Myrtle Beach to Washington'" in text
    assert result.status == "parse_failure" and result.plan is None and result.answer == "I cannot plan this."


async def test_two_stage_statuses(scripted_model, sandbox, train):
    strategy = TwoStageStrategy(limits=ReactLimits())
    for n in range(4):
        scripted_model.enqueue("t", f"FlightSearch[Atlantis {n}, Rockford, 2022-03-16]")
    dead = await strategy(train[0], scripted_model, sandbox)
    assert dead.status == "argument_error_dead_loop" and dead.error == "argument_error_dead_loop (flights)"
    assert dead.answer is None and dead.plan is None

    scripted_model.enqueue("t", "Planner[Plan it]", "")
    empty = await strategy(train[0], scripted_model, sandbox)
    assert empty.status == "empty_answer"

    scripted_model.enqueue("t", "Planner[Plan it]", "Travel Plan:\n" + render_plan([dict(
        days=1, current_city="Rockford", transportation="-", breakfast="-", attraction="-", lunch="-", dinner="-",
        accommodation="-")]))
    delivered = await strategy(train[0], scripted_model, sandbox)
    assert delivered.status == DELIVERED and delivered.plan[0]["current_city"] == "Rockford"
    assert delivered.steps[-1] == {"parse": "rules", "error": None}


def test_rebuilt_reference_information_matches_the_dataset_on_3_day_train_queries(train, sandbox):
    import ast

    from benchmarks.travelplanner.agents.strategies import reference_text

    checked = 0
    for task in (t for t in train if t.input["days"] == 3):
        record = {k: v for k, v in task.input.items() if k != "reference_information"}
        rebuilt = ast.literal_eval(reference_text(Task(task.id, record | {"reference_route": [record["dest"]]}),
                                                  sandbox))
        dataset = task.input["reference_information"]
        assert [e["Description"] for e in rebuilt] == [e["Description"] for e in dataset]
        # Flight tables differ where the staged flights table (merged from two sources) has other rows or order.
        assert [e for e in rebuilt if not e["Description"].startswith("Flight ")] == [
            e for e in dataset if not e["Description"].startswith("Flight ")]
        checked += 1
    assert checked == 15


def test_a_misspelt_split_is_named_with_the_splits_there_are(benchmark, options) -> None:
    with pytest.raises(DataError, match=r"unknown split 'valdation' \(train, validation, test\)"):
        benchmark.load_tasks("valdation", options)
