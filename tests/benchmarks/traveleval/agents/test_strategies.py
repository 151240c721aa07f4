"""The four strategies driven by a scripted model over the staged sandbox: what they send, how they end."""

from __future__ import annotations

import json

import pytest

from benchmarks.base import DELIVERED, Task
from benchmarks.traveleval import prompts
from benchmarks.traveleval.agents import statuses
from benchmarks.traveleval.agents.direct import COT, DIRECT
from benchmarks.traveleval.agents.react import ReactLimits, react, reflexion
from benchmarks.traveleval.plan import FinalTravelPlan
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from tests.benchmarks.travelplanner.agents.conftest import ScriptedModel

from .conftest import QUERY, fenced, plan

TASK = Task(id="T0001", input=QUERY)
SEARCH = prompts.format_action("search_trains", {"from_city": "北京", "to_city": "上海"}, thought="trains first")


def finish(value: dict[str, object]) -> str:
    return prompts.format_finish(json.dumps(value, ensure_ascii=False), thought="done")


async def test_direct_sends_the_contract_and_delivers_the_validated_plan(traveleval_sandbox: Sandbox,
                                                                        scripted_model: ScriptedModel) -> None:
    result = await DIRECT(TASK, scripted_model.enqueue(fenced(plan())), traveleval_sandbox)
    assert result.status == DELIVERED and result.error is None
    assert result.plan == FinalTravelPlan.model_validate(plan()).model_dump(mode="json")
    assert result.plan["itinerary"]["daily_plans"][0]["activities"][0]["details"]["ticket_number"] == 2
    (request,) = scripted_model.requests
    system, user = request.messages
    assert "上海虹桥站" in system.content and '"query_uid"' in system.content  # the stations and the plan format
    assert prompts.find_query(user.content) == QUERY and prompts.prompt_kind(user.content) == "direct"


async def test_cot_keeps_its_reasoning_and_reads_the_plan_after_it(traveleval_sandbox: Sandbox,
                                                                  scripted_model: ScriptedModel) -> None:
    answer = "1. Two travellers, 3 days, 3400 RMB.\n2. G101 and a cheap hotel.\n" + fenced(plan())
    result = await COT(TASK, scripted_model.enqueue(answer), traveleval_sandbox)
    assert result.status == DELIVERED and result.answer == answer
    assert prompts.prompt_kind(scripted_model.prompts[0]) == "cot"


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty answer"),
    ("Sorry, I cannot plan this trip.", "no JSON object in the answer"),
    (fenced({"query_uid": "T0001", "itinerary": {"summary": {}}}), "itinerary.summary.total_days"),
    (fenced(plan() | {"itinerary": {**plan()["itinerary"], "accommodation": {"hotel_name": "x", "total_cost": 1,
                                                                           "room_type": [{"type": "总统套房"}]}}}),
     "itinerary.accommodation.room_type[0].type"),
])
async def test_an_answer_that_does_not_parse_is_a_parse_failure_with_the_reason(
        traveleval_sandbox: Sandbox, scripted_model: ScriptedModel, answer: str, reason: str) -> None:
    result = await DIRECT(TASK, scripted_model.enqueue(answer), traveleval_sandbox)
    assert result.status == statuses.PARSE_FAILURE and result.plan is None
    assert result.error is not None and reason in result.error and result.answer == answer


async def test_react_calls_a_tool_shows_its_answer_and_finishes(traveleval_sandbox: Sandbox,
                                                               scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue(SEARCH + "\nObservation: the model must not write this", finish(plan()))
    result = await react(ReactLimits())(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED and result.plan is not None and result.plan["query_uid"] == "T0001"
    first, last = result.steps
    assert first["action"] == "search_trains" and first["error"] is None
    assert first["observation"].startswith("56 trains.")
    assert last == {"attempt": 1, "step": 2, "thought": "done", "action": "finish", "arguments": {}}
    assert all(request.stop == ("\nObservation",) for request in model.requests)
    second = model.prompts[1]
    assert prompts.prompt_kind(second) == "react" and prompts.find_query(second) == QUERY
    assert "Step 1:\nThought: trains first\nAction: search_trains" in second
    assert "Observation: 56 trains." in second and "must not write" not in second


async def test_react_finish_with_a_broken_plan_is_a_parse_failure(traveleval_sandbox: Sandbox,
                                                                  scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue("Thought: done\nAction: finish {\"query_uid\": \"T0001\"")
    result = await react(ReactLimits())(TASK, model, traveleval_sandbox)
    assert result.status == statuses.PARSE_FAILURE and result.error is not None


BAD_ARGS = prompts.format_action("search_hotels", {"town": "上海"})
GOOD = prompts.format_action("search_hotels", {"city": "上海", "page": 2})


@pytest.mark.parametrize(("replies", "status", "calls"), [
    (["no action here", "Action: fly_to_moon {}", "Action: search_hotels {city}"],
     statuses.INVALID_ACTION_DEAD_LOOP, 3),
    ([BAD_ARGS, "Action: teleport {}", BAD_ARGS, BAD_ARGS], statuses.ARGUMENT_ERROR_DEAD_LOOP, 4),
    ([SEARCH, SEARCH, SEARCH], statuses.SAME_ACTION_DEAD_LOOP, 3),
    ([SEARCH, GOOD, SEARCH, GOOD], statuses.MAX_STEPS, 4),
    ([SEARCH, SEARCH, "no action", SEARCH], statuses.MAX_STEPS, 4),  # an invalid reply between: not in a row
])
async def test_react_stops_on_its_limits(traveleval_sandbox: Sandbox, scripted_model: ScriptedModel,
                                         replies: list[str], status: str, calls: int) -> None:
    model = scripted_model.enqueue(*replies)
    result = await react(ReactLimits(max_steps=4))(TASK, model, traveleval_sandbox)
    assert (result.status, len(model.requests), result.plan) == (status, calls, None)
    assert result.error is not None


async def test_a_successful_call_resets_the_failure_count(traveleval_sandbox: Sandbox,
                                                          scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue(BAD_ARGS, BAD_ARGS, GOOD, BAD_ARGS, BAD_ARGS, finish(plan()))
    result = await react(ReactLimits())(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED
    bad = ["argument_error"] * 2
    assert [step.get("error") for step in result.steps] == [*bad, None, *bad, None]


async def test_the_same_call_is_not_run_the_last_time(traveleval_sandbox: Sandbox,
                                                      scripted_model: ScriptedModel) -> None:
    result = await react(ReactLimits())(TASK, scripted_model.enqueue(SEARCH, SEARCH, SEARCH), traveleval_sandbox)
    assert ["observation" in step for step in result.steps] == [True, True, False]


async def test_reflexion_reflects_on_a_failed_attempt_and_tries_again(traveleval_sandbox: Sandbox,
                                                                      scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue("Thought: done\nAction: finish no plan yet", "Write the whole plan as JSON.",
                                   SEARCH, finish(plan()))
    result = await reflexion(ReactLimits(), max_reflections=3)(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED and len(model.requests) == 4
    reflect_prompt, retry_prompt = model.prompts[1], model.prompts[2]
    assert prompts.prompt_kind(reflect_prompt) == "reflect" and prompts.find_query(reflect_prompt) == QUERY
    assert "Why it failed: parse failure: no JSON object in the answer" in reflect_prompt
    assert "Action: finish no plan yet" in reflect_prompt
    assert "- Write the whole plan as JSON." in retry_prompt and prompts.prompt_kind(retry_prompt) == "react"
    assert [(step["attempt"], step.get("action", "reflection")) for step in result.steps] == [
        (1, "finish"), (1, "reflection"), (2, "search_trains"), (2, "finish")]


async def test_reflexion_also_retries_a_plan_that_contradicts_its_query(traveleval_sandbox: Sandbox,
                                                                        scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue(finish(plan(days=2, total=5000)), "Three days, cheaper hotel.", finish(plan()))
    result = await reflexion(ReactLimits(), max_reflections=3)(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED and result.plan is not None
    assert result.plan["itinerary"]["summary"]["total_days"] == 3
    failure = result.steps[1]["failure"]
    assert "total_days 2 and 2 daily plans; the trip lasts 3 days" in failure
    assert "costs 5000 RMB; the budget is 3400 RMB" in failure


async def test_reflexion_stops_after_max_reflections_with_the_last_outcome(traveleval_sandbox: Sandbox,
                                                                           scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue("no action", "no action", "try harder", finish(plan(travelers=3)))
    result = await reflexion(ReactLimits(max_retries=2), max_reflections=1)(TASK, model, traveleval_sandbox)
    # the second (last) attempt delivered a plan with the wrong group size: kept as delivered, not retried again
    assert result.status == DELIVERED and len(model.requests) == 4
    assert result.plan is not None and result.plan["itinerary"]["summary"]["total_travelers"] == 3


async def test_react_is_reflexion_without_reflections(traveleval_sandbox: Sandbox,
                                                      scripted_model: ScriptedModel) -> None:
    result = await react(ReactLimits(max_retries=1))(TASK, scripted_model.enqueue("no action"), traveleval_sandbox)
    assert result.status == statuses.INVALID_ACTION_DEAD_LOOP and len(scripted_model.requests) == 1
