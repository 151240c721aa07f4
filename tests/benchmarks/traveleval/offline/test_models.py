"""The offline models answer each strategy's prompt (the prompts module's contract): the plan for direct and cot,
one look-up then `finish` for ReAct, a sentence for a reflection; prompts of tasks not loaded are left to others."""

from __future__ import annotations

import json

import pytest

from benchmarks.base import Responder
from benchmarks.offline import OfflineModels
from benchmarks.traveleval import dataset, prompts
from benchmarks.traveleval.benchmark import TravelEvalOptions
from benchmarks.traveleval.offline import models
from benchmarks.traveleval.offline.mistakes import NOISY, injected_mistake
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.offline.world import TravelEvalWorld
from benchmarks.traveleval.plan import parse_plan
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import TOOLS, TOOLS_TEXT
from errors import UserError


@pytest.fixture(scope="module")
def responder(world: TravelEvalWorld) -> Responder:
    """TravelEval's answers to the prompts of the world's tasks."""
    tasks = dataset.load_tasks(world.folder, "all") + dataset.load_tasks(world.folder, "progressive")
    return models.responder(tasks, TravelEvalOptions(data_dir=world.folder))


@pytest.fixture(scope="module")
def offline(responder: Responder) -> OfflineModels:
    return OfflineModels([responder])


@pytest.fixture(scope="module")
def queries(world: TravelEvalWorld) -> list[dict[str, object]]:
    tasks = dataset.load_tasks(world.folder, "all") + dataset.load_tasks(world.folder, "progressive")
    return [dict(task.input) for task in tasks]


def _plan(reply: str) -> dict[str, object]:
    return parse_plan(reply).model_dump(mode="json")


def test_direct_and_cot_answer_with_the_oracle_plan(queries: list[dict[str, object]], world_sandbox: Sandbox,
                                                    offline: OfflineModels) -> None:
    for query in queries:
        expected = build_plan(world_sandbox, query)
        direct = offline.reply_for("oracle", prompts.request_prompt(query, prompts.DIRECT_TASK))
        assert direct.startswith("```json") and json.loads(direct.strip("`\n").removeprefix("json")) == expected
        cot = offline.reply_for("oracle", prompts.request_prompt(query, prompts.COT_TASK))
        assert cot.startswith("1. Legs:") and _plan(cot) == _plan(direct)


def test_react_looks_once_then_finishes(queries: list[dict[str, object]], world_sandbox: Sandbox,
                                        offline: OfflineModels) -> None:
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


def test_noisy_answers_carry_the_drawn_mistake(queries: list[dict[str, object]], offline: OfflineModels) -> None:
    differing = 0
    for query in queries:
        prompt = prompts.request_prompt(query, prompts.DIRECT_TASK)
        same = offline.reply_for("noisy?seed=0", prompt) == offline.reply_for("oracle", prompt)
        assert same == (injected_mistake(query, NOISY.parse("seed=0")) is None)
        differing += not same
    assert differing >= 6
    assert offline.reply_for("noisy?rate=0", prompt) == offline.reply_for("oracle", prompt)


def test_other_prompts_are_not_answered(queries: list[dict[str, object]], responder: Responder,
                                        world: TravelEvalWorld) -> None:
    unknown = {**queries[0], "uid": "T9999"}
    assert responder.reply("oracle", prompts.request_prompt(unknown, prompts.DIRECT_TASK)) is None
    assert responder.reply("oracle", "Plan me a trip to Rome.") is None
    built_from_no_task = models.responder([], TravelEvalOptions(data_dir=world.folder))
    assert built_from_no_task.reply("oracle", prompts.request_prompt(queries[0], prompts.DIRECT_TASK)) is None


@pytest.mark.parametrize("name", ["noisy?rate=2", "noisy?colour=red", "noisy?seed=x", "oracle?seed=1", "genius"])
def test_bad_model_names_are_user_errors(name: str) -> None:
    with pytest.raises(UserError):
        models.validate(name)
