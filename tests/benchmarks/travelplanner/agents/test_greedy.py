"""The greedy-search baseline (docs/fidelity/travelplanner.md §8) on the staged splits, scored by our official
evaluator.

Paper Table 3 (validation), Greedy Search: delivery 100, commonsense micro 74.4 / macro 0, hard micro 60.8 /
macro 37.8, final 0. The commonsense figures and the hard macro reproduce within a few points; the hard micro
does not (48.8 here). Hard constraints are only scored for plans that pass Complete Information, and 52 of the 180
validation plans fail it (`test_why_plans_get_no_hard_box`): 36 visit a city that has no attraction at all in the
official attractions table (the same for the paper), 16 have a leg with neither a distance row nor a flight in the
staged, partial flights table (the full table would have a flight there). Scoring those 16 would add at most 24
hard passes (54.5 %); the 2024-04-26 `parties` fix (docs/fidelity/travelplanner.md §7.3) fails 5 room rules the
paper-era evaluator passed (55.7 %). The remaining ~5 points are not explained by anything we can check here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from benchmarks.base import DELIVERED, Task
from benchmarks.travelplanner.agents.greedy import GreedyStrategy, greedy_plan
from benchmarks.travelplanner.dataset import load_queries
from benchmarks.travelplanner.evaluation.metrics import compute_scores
from benchmarks.travelplanner.evaluation.official import OfficialEvaluator
from benchmarks.travelplanner.tools import distance_for_evaluation

PAPER_VALIDATION = {"Commonsense Constraint Micro Pass Rate": 0.744, "Hard Constraint Macro Pass Rate": 0.378}


@pytest.fixture(scope="module")
def splits(travelplanner_data: Path):
    return {split: load_queries(travelplanner_data / "queries" / f"{split}.jsonl") for split in ("train", "validation")}


@pytest.mark.parametrize("split", ["train", "validation"])
def test_scores_beside_the_paper(sandbox, splits, split: str):
    queries = splits[split]
    evaluator = OfficialEvaluator(sandbox)
    verdicts = [evaluator.evaluate(q, greedy_plan(sandbox, q).plan) for q in queries]
    rates = compute_scores(queries, verdicts, split=split).rates
    assert rates["Delivery Rate"] == 1.0
    # the same restaurant for all three meals fails Diverse Restaurants in every plan: no plan passes
    assert all(v.commonsense["is_valid_restaurants"][0] is False for v in verdicts)
    assert rates["Commonsense Constraint Macro Pass Rate"] == 0 and rates["Final Pass Rate"] == 0
    if split == "validation":
        for name, paper in PAPER_VALIDATION.items():
            assert abs(rates[name] - paper) <= 0.03, (name, rates[name], paper)


def test_official_quirks(sandbox, splits):
    query = splits["train"][0]  # St. Petersburg -> Rockford, 3 days
    plan = greedy_plan(sandbox, query).plan
    assert [day["current_city"] for day in plan] == [
        "from St. Petersburg to Rockford", "Rockford", "from Rockford to St. Petersburg"]
    for day in plan:
        assert day["breakfast"] == day["lunch"] == day["dinner"]
        assert ";" not in day["attraction"]
    # the return day's meals are chosen in the origin city (the arrival city of that day's leg)
    assert plan[2]["breakfast"].endswith(", St. Petersburg") and plan[2]["accommodation"] == "-"
    # without a trailing ';' the evaluator never looks the attraction up (docs/fidelity/travelplanner.md §7.2 (1))
    evaluator = OfficialEvaluator(sandbox)
    invented = [dict(day, attraction="Nowhere Museum, Rockford") for day in plan]
    assert evaluator.evaluate(query, invented).commonsense["is_valid_information_in_sandbox"] == (True, None)
    # people_number and the local constraints are ignored: a group of 8 with rules gets the very same plan
    group = dataclasses.replace(query, people_number=8, local_constraint=splits["train"][40].local_constraint)
    assert greedy_plan(sandbox, group).plan == plan


def test_dates_are_parsed_before_use(sandbox, splits):
    queries = splits["train"]
    plans = [greedy_plan(sandbox, q).plan for q in queries]
    assert any("Flight Number: " in day["transportation"] for plan in plans for day in plan)
    # as the script would run on the Hub's string field: date[0] is "[", so no flight ever matches
    as_string = [dataclasses.replace(q, date=tuple(repr(list(q.date)))) for q in queries]
    assert not any("Flight Number" in day["transportation"] for q in as_string
                   for day in greedy_plan(sandbox, q).plan)


def test_seeded_attractions(sandbox, splits):
    queries = splits["train"]
    first = [greedy_plan(sandbox, q, seed=0).plan for q in queries]
    assert first == [greedy_plan(sandbox, q, seed=0).plan for q in queries]
    other = [greedy_plan(sandbox, q, seed=1).plan for q in queries]
    assert first != other
    strip = [[{k: v for k, v in day.items() if k != "attraction"} for day in plan] for plan in first]
    assert strip == [[{k: v for k, v in day.items() if k != "attraction"} for day in plan] for plan in other]


async def test_strategy_needs_no_model(sandbox, splits):
    query = splits["validation"][0]
    task = Task("1", {"org": query.org, "dest": query.dest, "days": query.days, "date": list(query.date),
                      "query": query.query, "level": query.level})
    result = await GreedyStrategy()(task, model=None, tools=sandbox)  # type: ignore[arg-type]
    assert result.status == DELIVERED and result.plan == greedy_plan(sandbox, query).plan
    assert result.answer.startswith("Day 1:\nCurrent City: from ")


def test_why_plans_get_no_hard_box(sandbox, splits):
    """Every greedy plan without a hard box fails Complete Information for one of the two reasons in the docstring."""
    queries = splits["validation"]
    evaluator = OfficialEvaluator(sandbox)
    reasons: dict[str, int] = {}
    for query in queries:
        plan = greedy_plan(sandbox, query).plan
        verdict = evaluator.evaluate(query, plan)
        if verdict.hard is not None:
            continue
        passed, message = verdict.commonsense["is_not_absent"]
        assert passed is False and message is not None
        day = plan[int(message.split(" day ")[1].split(" ")[0]) - 1]
        if message.startswith("No attaction"):
            # a stay day in a city the official attractions table does not list at all
            assert len(sandbox.attractions(day["current_city"])) == 0
            reasons["no attraction in the city"] = reasons.get("no attraction in the city", 0) + 1
        else:
            assert message.startswith("No transportation") and day["transportation"] == "-"
            origin, destination = day["current_city"].removeprefix("from ").split(" to ")
            date = query.date[day["day"] - 1]
            assert len(sandbox.flights(origin, destination, date)) == 0
            assert distance_for_evaluation(sandbox, origin, destination, "driving").cost is None
            reasons["no flight, no distance"] = reasons.get("no flight, no distance", 0) + 1
    assert reasons == {"no attraction in the city": 36, "no flight, no distance": 16}
