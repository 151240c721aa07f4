"""The offline models answer each strategy's prompt (the prompts module's contract), finding the query by the uid the
prompt names: the plan for the paper's strategies (after reasoning, rounds or a critique), one look-up then `finish`
for react-tools, a sentence for a reflection; prompts of queries not loaded are left to others."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.base import Responder, Task
from benchmarks.offline import OfflineModels
from benchmarks.traveleval import dataset, prompts
from benchmarks.traveleval.benchmark import TravelEvalOptions
from benchmarks.traveleval.offline import models
from benchmarks.traveleval.offline.known import KnownQueries, query_key
from benchmarks.traveleval.offline.mistakes import NOISY, injected_mistake
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.offline.world import TravelEvalWorld
from benchmarks.traveleval.plan import parse_plan
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import TOOLS, TOOLS_TEXT
from errors import UserError
from runner.engine.prepared import prepare
from runner.engine.session import EngineSession, Purpose


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


def test_the_paper_strategies_get_the_oracle_plan(queries: list[dict[str, object]], world_sandbox: Sandbox,
                                                  offline: OfflineModels) -> None:
    for query in queries:
        expected = build_plan(world_sandbox, query)
        direct = offline.reply_for("oracle", prompts.paper_user(query, "direct"))
        assert direct.startswith("```json") and json.loads(direct.strip("`\n").removeprefix("json")) == expected
        cot = offline.reply_for("oracle", prompts.paper_user(query, "cot"))
        assert cot.startswith("1. Legs:") and _plan(cot) == _plan(direct)
        react = offline.reply_for("oracle", prompts.paper_user(query, "react"))
        assert react.startswith("Thought:") and react.count("Observation:") == 3 and _plan(react) == _plan(direct)
        if expected is not None:
            critique = offline.reply_for("oracle", prompts.critique_prompt(json.dumps(expected, ensure_ascii=False)))
            assert critique.startswith(models.CRITIQUE) and _plan(critique) == _plan(direct)


def test_react_tools_looks_once_then_finishes(queries: list[dict[str, object]], world_sandbox: Sandbox,
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


def test_of_two_queries_with_one_uid_the_one_the_prompt_quotes_is_answered(
        queries: list[dict[str, object]], world: TravelEvalWorld) -> None:
    first, other = queries[0], queries[1]
    twin = {**other, "uid": first["uid"]}  # another query file reusing the uid
    for order in ([first, twin], [twin, first]):
        known = KnownQueries([Task(id=str(query["uid"]), input=query) for query in order], world.folder)
        assert known.query_for(str(first["uid"]), prompts.paper_user(first, "direct")) == first
        assert known.query_for(str(first["uid"]), prompts.paper_user(twin, "direct")) == twin
        assert known.query_for(str(first["uid"])) == order[-1]  # no request quoted: the one seen last


def test_noisy_answers_carry_the_drawn_mistake(queries: list[dict[str, object]], offline: OfflineModels) -> None:
    differing = 0
    for query in queries:
        prompt = prompts.paper_user(query, "direct")
        same = offline.reply_for("noisy?seed=0", prompt) == offline.reply_for("oracle", prompt)
        assert same == (injected_mistake(query, NOISY.parse("seed=0")) is None)
        differing += not same
    assert differing >= 6
    assert offline.reply_for("noisy?rate=0", prompt) == offline.reply_for("oracle", prompt)


def test_other_prompts_are_not_answered(queries: list[dict[str, object]], responder: Responder,
                                        world: TravelEvalWorld) -> None:
    unknown = {**queries[0], "uid": "T9999"}
    assert responder.reply("oracle", prompts.paper_user(unknown, "direct")) is None
    assert responder.reply("oracle", "Plan me a trip to Rome.") is None
    built_from_no_task = models.responder([], TravelEvalOptions(data_dir=world.folder))
    assert built_from_no_task.reply("oracle", prompts.paper_user(queries[0], "direct")) is None


@pytest.mark.parametrize("name", ["noisy?rate=2", "noisy?colour=red", "noisy?seed=x", "oracle?seed=1", "genius"])
def test_bad_model_names_are_user_errors(name: str) -> None:
    with pytest.raises(UserError):
        models.validate(name)


def test_a_planner_owns_its_sandbox_and_plans_until_closed(world: TravelEvalWorld, queries: list[dict[str, object]],
                                                           open_files: Callable[[Path], int]) -> None:
    index = ensure_index(world.folder)
    before = open_files(index)
    planner = models.Planner(world.folder)
    text = planner.plan_text(query_key(queries[0]), "oracle")
    assert text is not None and open_files(index) == before + 1
    sandbox = weakref.ref(planner.sandbox())
    planner.close()
    assert open_files(index) == before
    gc.collect()
    assert sandbox() is None  # neither the plans kept nor the planner's lookups (a city's sights) keep it
    assert planner.plan_text(query_key(queries[0]), "oracle") == text  # asked again: the sandbox opened again
    planner.close()


def test_closing_the_offline_models_closes_their_sandbox(world: TravelEvalWorld, queries: list[dict[str, object]],
                                                         open_files: Callable[[Path], int]) -> None:
    tasks = dataset.load_tasks(world.folder, "all")
    offline = OfflineModels([models.responder(tasks, TravelEvalOptions(data_dir=world.folder))])
    index = ensure_index(world.folder)
    before = open_files(index)
    prompt = prompts.paper_user(dict(tasks[0].input), "direct")
    offline.reply_for("oracle", prompt)
    assert open_files(index) == before + 1
    offline.close()
    assert open_files(index) == before


async def test_a_runs_session_closes_its_offline_models_sandbox(world: TravelEvalWorld, tmp_path: Path,
                                                                open_files: Callable[[Path], int]) -> None:
    spec = tmp_path / "run.toml"
    spec.write_text(f'benchmark = "traveleval"\nsplit = "all"\nstrategies = ["direct"]\ncache = "off"\n\n[options]\n'
                    f'data_dir = "{world.folder}"\ndistance = "offline"\n\n[[models]]\nmodel = "offline:oracle"\n',
                    encoding="utf-8")
    prepared = prepare(spec)
    index = ensure_index(world.folder)
    before = open_files(index)
    async with EngineSession(prepared, Purpose.PREFLIGHT):
        with_tools = open_files(index)  # the tools' sandbox, the run's own
        prepared.offline.reply_for("oracle", prompts.paper_user(dict(prepared.tasks[0].input), "direct"))
        assert open_files(index) == with_tools + 1  # the offline model's, opened to plan
    assert open_files(index) == before
