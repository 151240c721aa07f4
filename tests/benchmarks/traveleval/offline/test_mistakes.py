"""The noisy model's mistakes, scored by the real evaluator (official mode, offline distances): on the generated
world the oracle's plans show no mistake and each mistaken plan shows exactly its own; on the staged queries each
mistake moves the metric it aims at wherever the oracle's plan was clean on it, and the oracle's plans pass every
check the sandbox cannot stand in the way of."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from benchmarks.traveleval import dataset
from benchmarks.traveleval.evaluation import evaluate_plan
from benchmarks.traveleval.evaluation.distance import open_distances
from benchmarks.traveleval.offline.mistakes import BY_NAME, MISTAKES, found_mistakes, make_mistake
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.offline.world import TravelEvalWorld
from benchmarks.traveleval.sandbox.sandbox import Sandbox

STAGED_EVERY = 25
"""Every 25th staged query (40 of the 1,000) for each mistake."""


def _metrics(plan: Mapping[str, Any] | None, query: Mapping[str, Any], sandbox: Sandbox,
             folder: Path) -> Mapping[str, Any]:
    assert plan is not None
    result = evaluate_plan(plan, query, sandbox, mode="official", distances=open_distances("offline", folder))
    assert "error" not in result, result
    metrics: Mapping[str, Any] = result["metrics"]
    return metrics


@pytest.mark.parametrize("mistake", [mistake.name for mistake in MISTAKES])
def test_world_mistake_shows_exactly_its_metric(mistake: str, world: TravelEvalWorld,
                                                world_sandbox: Sandbox) -> None:
    made = 0
    for task in dataset.load_tasks(world.folder, "all"):
        if not BY_NAME[mistake].admits(task.input):
            continue
        oracle = _metrics(build_plan(world_sandbox, task.input), task.input, world_sandbox, world.folder)
        assert found_mistakes(oracle) == [], task.id
        plan = make_mistake(world_sandbox, task.input, BY_NAME[mistake])
        if plan is None:
            continue
        assert found_mistakes(_metrics(plan, task.input, world_sandbox, world.folder)) == [mistake], task.id
        made += 1
    assert made >= 1


@pytest.fixture(scope="module")
def staged(traveleval_data: Path, traveleval_sandbox: Sandbox) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(query, the oracle plan's metrics) for the sampled staged queries."""
    tasks = dataset.load_tasks(traveleval_data, "all")[::STAGED_EVERY]
    return [(task.input, _metrics(build_plan(traveleval_sandbox, task.input), task.input, traveleval_sandbox,
                                  traveleval_data)) for task in tasks]


def test_staged_oracle_plans_pass_what_the_sandbox_allows(staged: list[tuple[Mapping[str, Any], Mapping[str, Any]]],
                                                          traveleval_sandbox: Sandbox) -> None:
    for query, metrics in staged:
        accuracy, constraint = metrics["accuracy"], metrics["constraint"]
        assert accuracy["cost_deviation_rate"] == 0 and accuracy["fictitious_attraction_rate"] == 0
        assert accuracy["opening_hours_violations"] == 0 and accuracy["intercity_planning_deviation"] < 0.05
        assert (constraint["time_compliance"], constraint["travel_time_satisfaction"]) == (1, 1), query["uid"]
        assert constraint["people_adaptability"] == 1, query["uid"]
        plan = build_plan(traveleval_sandbox, query)
        assert plan is not None
        assert constraint["budget_satisfaction"] == plan["itinerary"]["summary"]["is_within_budget"]


@pytest.mark.parametrize("mistake", [mistake.name for mistake in MISTAKES])
def test_staged_mistake_moves_its_metric(mistake: str, staged: list[tuple[Mapping[str, Any], Mapping[str, Any]]],
                                         traveleval_data: Path, traveleval_sandbox: Sandbox) -> None:
    moved = 0
    for query, oracle in staged:
        if not BY_NAME[mistake].admits(query) or mistake in found_mistakes(oracle):
            continue
        plan = make_mistake(traveleval_sandbox, query, BY_NAME[mistake])
        if plan is None:
            continue
        assert mistake in found_mistakes(_metrics(plan, query, traveleval_sandbox, traveleval_data)), query["uid"]
        moved += 1
    assert moved >= 1
