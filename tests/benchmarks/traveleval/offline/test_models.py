"""The offline models answer each strategy's prompt (the prompts module's contract), finding the query by the uid the
prompt names: the plan for the paper's strategies (after reasoning, rounds or a critique), one look-up then `finish`
for react-tools, a sentence for a reflection; prompts of queries not loaded are left to others."""

from __future__ import annotations

import json

import pytest

from benchmarks import offline
from benchmarks.base import Task
from benchmarks.registry import get_benchmark
from benchmarks.traveleval import dataset, prompts
from benchmarks.traveleval.offline import known, models
from benchmarks.traveleval.offline.mistakes import NoisyConfig, injected_mistake
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.offline.world import TravelEvalWorld
from benchmarks.traveleval.plan import parse_plan
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import TOOLS, TOOLS_TEXT
from errors import UserError


@pytest.fixture(scope="module")
def queries(world: TravelEvalWorld) -> list[dict[str, object]]:
    tasks = dataset.load_tasks(world.folder, "all") + dataset.load_tasks(world.folder, "progressive")
    get_benchmark("traveleval")  # the offline models answer as the benchmarks the registry loaded
    known.remember(tasks, world.folder)
    return [dict(task.input) for task in tasks]


def _plan(reply: str) -> dict[str, object]:
    return parse_plan(reply).model_dump(mode="json")


def test_the_paper_strategies_get_the_oracle_plan(queries: list[dict[str, object]], world_sandbox: Sandbox) -> None:
    for query in queries:
        expected = build_plan(world_sandbox, query)
        direct = offline.reply_for("oracle", prompts.paper_user(query, "direct"))
        assert direct.startswith("```json") and json.loads(direct.strip("`\n").removeprefix("json")) == expected
        cot = offline.reply_for("oracle", prompts.paper_user(query, "cot"))
        assert cot.startswith("1. Legs:") and _plan(cot) == _plan(direct)
        react = offline.reply_for("oracle", prompts.paper_user(query, "react"))
        assert react.startswith("Thought:") and react.count("Observation:") == 3 and _plan(react) == _plan(direct)
        if expected is not None:
            critique = offline.reply_for("oracle", prompts.critique_prompt(expected))
            assert critique.startswith(models.CRITIQUE) and _plan(critique) == _plan(direct)


def test_react_tools_looks_once_then_finishes(queries: list[dict[str, object]], world_sandbox: Sandbox) -> None:
    query = queries[0]
    stations = ["北京南站"]
    first = offline.reply_for("oracle", prompts.react_prompt(query, TOOLS_TEXT, stations, ""))
    action = prompts.parse_action(first)
    assert action.name in TOOLS and action.arguments == {"city": query["target_city"]}
    pad = prompts.format_step(1, first, "(the attractions)")
    final = prompts.parse_action(offline.reply_for("oracle", prompts.react_prompt(query, TOOLS_TEXT, stations, pad)))
    assert final.name == prompts.FINISH and json.loads(final.answer) == build_plan(world_sandbox, query)
    reflection = offline.reply_for("oracle", prompts.reflect_prompt(query, pad, "over budget"))
    assert reflection == models.REFLECTION


def test_of_two_queries_with_one_uid_the_one_the_prompt_quotes_is_answered(
        queries: list[dict[str, object]], world: TravelEvalWorld) -> None:
    first, other = queries[0], queries[1]
    twin = {**other, "uid": first["uid"]}  # another query file reusing the uid
    known.remember([Task(id=str(twin["uid"]), input=twin)], world.folder)
    try:
        assert known.query_for(str(first["uid"]), prompts.paper_user(first, "direct"))[0] == first  # type: ignore[index]
        assert known.query_for(str(first["uid"]), prompts.paper_user(twin, "direct"))[0] == twin  # type: ignore[index]
    finally:
        known.remember([Task(id=str(first["uid"]), input=first)], world.folder)  # the newest again


def test_noisy_answers_carry_the_drawn_mistake(queries: list[dict[str, object]], world_sandbox: Sandbox) -> None:
    differing = 0
    for query in queries:
        prompt = prompts.paper_user(query, "direct")
        same = offline.reply_for("noisy?seed=0", prompt) == offline.reply_for("oracle", prompt)
        assert same == (injected_mistake(query, NoisyConfig(seed=0)) is None)
        differing += not same
    assert differing >= 6
    assert offline.reply_for("noisy?rate=0", prompt) == offline.reply_for("oracle", prompt)


def test_other_prompts_are_not_answered(queries: list[dict[str, object]]) -> None:
    unknown = {**queries[0], "uid": "T9999"}
    assert models.reply_for("oracle", prompts.paper_user(unknown, "direct")) is None
    assert models.reply_for("oracle", "Plan me a trip to Rome.") is None


@pytest.mark.parametrize("name", ["noisy?rate=2", "noisy?colour=red", "noisy?seed=x", "oracle?seed=1", "genius"])
def test_bad_model_names_are_user_errors(name: str) -> None:
    with pytest.raises(UserError):
        models.validate(name)
