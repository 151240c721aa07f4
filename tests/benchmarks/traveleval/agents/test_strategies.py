"""The strategies driven by a scripted model over the staged sandbox: what they send, how many calls, the sampling
and parsing, how they end."""

from __future__ import annotations

import json

import pytest

from benchmarks.base import DELIVERED, Task
from benchmarks.traveleval import prompts
from benchmarks.traveleval.agents import statuses
from benchmarks.traveleval.agents.paper import PaperStrategy
from benchmarks.traveleval.agents.react import ReactLimits, react_tools, reflexion_tools
from benchmarks.traveleval.plan import FinalTravelPlan
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from providers.interface import ChatRequest, ChatResponse
from providers.stages import PLANNER, current_stage
from tests.benchmarks.travelplanner.agents.conftest import ScriptedModel

from .conftest import QUERY, fenced, plan

TASK = Task(id="T0001", input=QUERY)
DIRECT = PaperStrategy("direct", "direct")
COT = PaperStrategy("cot", "cot")
REACT = PaperStrategy("react", "react")
REFLEXION = PaperStrategy("reflexion", "react", critique=True)
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
    # in Chinese by default, as the official prompts are
    zh = prompts.PAPER_TEXTS["zh"]
    assert system.content.startswith(zh.role) and zh.plan_format in system.content
    assert user.content == f"查询编号：T0001\n旅行者的请求：{QUERY['nature_language']}\n\n{zh.closing['direct']}"
    assert (request.temperature, request.max_tokens, request.stop) == (1.3, 8192, ())  # the official sampling


async def test_the_english_instructions_are_an_option(traveleval_sandbox: Sandbox,
                                                      scripted_model: ScriptedModel) -> None:
    english = PaperStrategy("direct", "direct", language="en")
    result = await english(TASK, scripted_model.enqueue(fenced(plan())), traveleval_sandbox)
    assert result.status == DELIVERED
    system, user = scripted_model.requests[0].messages
    assert system.content.startswith(prompts.PAPER_TEXTS["en"].role) and prompts.PLAN_FORMAT in system.content
    assert user.content == f"Query uid: T0001\nRequest: {QUERY['nature_language']}\n\n{prompts.PAPER_CLOSING['direct']}"


async def test_cot_keeps_its_reasoning_and_reads_the_plan_after_it(traveleval_sandbox: Sandbox,
                                                                  scripted_model: ScriptedModel) -> None:
    answer = "1. Two travellers, 3 days, 3400 RMB.\n2. G101 and a cheap hotel.\n" + fenced(plan())
    result = await COT(TASK, scripted_model.enqueue(answer), traveleval_sandbox)
    assert result.status == DELIVERED and result.answer == answer
    assert prompts.prompt_kind(scripted_model.prompts[0]) == "cot"


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty answer"),
    ("Sorry, I cannot plan this trip.", "not JSON, even with single quotes made double"),
    ("Here it is:\n" + json.dumps(plan()), "not JSON"),  # the official parsing reads the whole text: no object found
    ("```json\n" + json.dumps(plan()), "no closing fence"),
    (fenced({k: v for k, v in plan().items() if k != "query_uid"}), "query_uid: Field required"),
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


async def test_react_tools_calls_a_tool_shows_its_answer_and_finishes(traveleval_sandbox: Sandbox,
                                                               scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue(SEARCH + "\nObservation: the model must not write this", finish(plan()))
    result = await react_tools(ReactLimits())(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED and result.plan is not None and result.plan["query_uid"] == "T0001"
    first, last = result.steps
    assert first["action"] == "search_trains" and first["error"] is None
    assert first["observation"].startswith("56 trains.")
    assert last == {"attempt": 1, "step": 2, "thought": "done", "action": "finish", "arguments": {}}
    assert all(request.stop == ("\nObservation",) for request in model.requests)
    second = model.prompts[1]
    assert prompts.prompt_kind(second) == "react-tools" and prompts.find_uid(second) == "T0001"
    assert "Step 1:\nThought: trains first\nAction: search_trains" in second
    assert "Observation: 56 trains." in second and "must not write" not in second


async def test_react_tools_finish_with_a_broken_plan_is_a_parse_failure(traveleval_sandbox: Sandbox,
                                                                  scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue("Thought: done\nAction: finish {\"query_uid\": \"T0001\"")
    result = await react_tools(ReactLimits())(TASK, model, traveleval_sandbox)
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
async def test_react_tools_stops_on_its_limits(traveleval_sandbox: Sandbox, scripted_model: ScriptedModel,
                                         replies: list[str], status: str, calls: int) -> None:
    model = scripted_model.enqueue(*replies)
    result = await react_tools(ReactLimits(max_steps=4))(TASK, model, traveleval_sandbox)
    assert (result.status, len(model.requests), result.plan) == (status, calls, None)
    assert result.error is not None


async def test_a_successful_call_resets_the_failure_count(traveleval_sandbox: Sandbox,
                                                          scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue(BAD_ARGS, BAD_ARGS, GOOD, BAD_ARGS, BAD_ARGS, finish(plan()))
    result = await react_tools(ReactLimits())(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED
    bad = ["argument_error"] * 2
    assert [step.get("error") for step in result.steps] == [*bad, None, *bad, None]


async def test_the_same_call_is_not_run_the_last_time(traveleval_sandbox: Sandbox,
                                                      scripted_model: ScriptedModel) -> None:
    result = await react_tools(ReactLimits())(TASK, scripted_model.enqueue(SEARCH, SEARCH, SEARCH), traveleval_sandbox)
    assert ["observation" in step for step in result.steps] == [True, True, False]


async def test_reflexion_tools_reflects_on_a_failed_attempt_and_tries_again(traveleval_sandbox: Sandbox,
                                                                      scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue("Thought: done\nAction: finish no plan yet", "Write the whole plan as JSON.",
                                   SEARCH, finish(plan()))
    result = await reflexion_tools(ReactLimits(), max_reflections=3)(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED and len(model.requests) == 4
    reflect_prompt, retry_prompt = model.prompts[1], model.prompts[2]
    assert prompts.prompt_kind(reflect_prompt) == "reflect" and prompts.find_uid(reflect_prompt) == "T0001"
    assert "Why it failed: parse failure: not JSON" in reflect_prompt
    assert "Action: finish no plan yet" in reflect_prompt
    assert "- Write the whole plan as JSON." in retry_prompt and prompts.prompt_kind(retry_prompt) == "react-tools"
    assert [(step["attempt"], step.get("action", "reflection")) for step in result.steps] == [
        (1, "finish"), (1, "reflection"), (2, "search_trains"), (2, "finish")]


async def test_reflexion_tools_also_retries_a_plan_that_contradicts_its_query(traveleval_sandbox: Sandbox,
                                                                        scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue(finish(plan(days=2, total=5000)), "Three days, cheaper hotel.", finish(plan()))
    result = await reflexion_tools(ReactLimits(), max_reflections=3)(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED and result.plan is not None
    assert result.plan["itinerary"]["summary"]["total_days"] == 3
    failure = result.steps[1]["failure"]
    assert "total_days 2 and 2 daily plans; the trip lasts 3 days" in failure
    assert "costs 5000 RMB; the budget is 3400 RMB" in failure


async def test_reflexion_tools_stops_after_max_reflections_with_the_last_outcome(traveleval_sandbox: Sandbox,
                                                                           scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue("no action", "no action", "try harder", finish(plan(travelers=3)))
    result = await reflexion_tools(ReactLimits(max_retries=2), max_reflections=1)(TASK, model, traveleval_sandbox)
    # the second (last) attempt delivered a plan with the wrong group size: kept as delivered, not retried again
    assert result.status == DELIVERED and len(model.requests) == 4
    assert result.plan is not None and result.plan["itinerary"]["summary"]["total_travelers"] == 3


async def test_react_tools_is_reflexion_tools_without_reflections(traveleval_sandbox: Sandbox,
                                                      scripted_model: ScriptedModel) -> None:
    model = scripted_model.enqueue("no action")
    result = await react_tools(ReactLimits(max_retries=1))(TASK, model, traveleval_sandbox)
    assert result.status == statuses.INVALID_ACTION_DEAD_LOOP and len(scripted_model.requests) == 1


async def test_the_papers_react_is_one_call_that_writes_its_own_observations(traveleval_sandbox: Sandbox,
                                                                            scripted_model: ScriptedModel) -> None:
    answer = "Thought: a train\nAction: pick one\nObservation: G101 fits.\n" + fenced(plan())
    result = await REACT(TASK, scripted_model.enqueue(answer), traveleval_sandbox)
    assert result.status == DELIVERED and len(scripted_model.requests) == 1
    (request,) = scripted_model.requests
    assert request.stop == () and result.answer == answer  # nothing stops the model's own observations
    assert prompts.prompt_kind(request.messages[1].content) == "react"
    assert "Observation:" in request.messages[0].content and "search_trains" not in request.messages[0].content


async def test_the_papers_reflexion_always_critiques_the_first_plan_once(traveleval_sandbox: Sandbox,
                                                                         scripted_model: ScriptedModel) -> None:
    first, revised = plan(total=3300), plan(total=3100)
    first["itinerary"]["note"] = "a key the schema drops"  # shown to the critic as written, as the official does
    written = json.dumps(first, ensure_ascii=False, indent=1)
    model = scripted_model.enqueue(f"Thought: ready\n```json\n{written}\n```",
                                   "1. Good.\n2. Costly.\n3. Cheaper meals.\n" + fenced(revised))
    result = await REFLEXION(TASK, model, traveleval_sandbox)
    assert result.status == DELIVERED and len(model.requests) == 2
    assert result.plan is not None and result.plan["itinerary"]["summary"]["calculated_total_cost"] == 3100
    critique = model.requests[1]
    # the official form: one lone system message, in Chinese, showing the first answer's plan as the model wrote it
    (message,) = critique.messages  # the critic sees the first plan and the format, not the request
    assert message.role == "system" and prompts.prompt_kind(message.content) == "critique"
    zh = prompts.PAPER_TEXTS["zh"]
    assert message.content == f"{zh.critique}\n\n{zh.answer_label}\n{written}\n\n{zh.plan_format}"
    assert "Thought: ready" not in message.content  # the reasoning before the plan is not shown
    assert QUERY["nature_language"] not in message.content and "查询编号" not in message.content
    assert prompts.stations_text([], "zh") not in message.content
    assert (critique.temperature, critique.max_tokens) == (1.3, 8192)
    assert [step["call"] for step in result.steps] == ["react", "critique"]


async def test_the_papers_reflexion_has_no_critique_without_a_first_plan(traveleval_sandbox: Sandbox,
                                                                         scripted_model: ScriptedModel) -> None:
    result = await REFLEXION(TASK, scripted_model.enqueue("I cannot plan this."), traveleval_sandbox)
    assert result.status == statuses.PARSE_FAILURE and len(scripted_model.requests) == 1
    assert result.error is not None and result.error.startswith("the first plan, so no critique followed: not JSON")


@pytest.mark.parametrize(("model_name", "strategy", "sent"), [
    ("anthropic:claude-sonnet-4-5", DIRECT, (1.0, 8192)),
    ("openai-compatible:claude-3-haiku@http://127.0.0.1:1/v1", COT, (1.0, 8192)),
    ("openai:gpt-4o", REACT, (1.3, 8192)),
    ("openai:gpt-4o", PaperStrategy("direct", "direct", sampling="provider"), (None, None)),
    # the official call of qwen3-8b sends no temperature, only max_tokens
    ("openai-compatible:qwen3-8b@https://dashscope.aliyuncs.com/compatible-mode/v1", DIRECT, (None, 8192)),
])
async def test_the_paper_strategies_send_the_official_sampling_of_the_models_family(
        traveleval_sandbox: Sandbox, scripted_model: ScriptedModel, model_name: str, strategy: PaperStrategy,
        sent: tuple[float | None, int | None]) -> None:
    scripted_model.name = model_name  # type: ignore[attr-defined]  # the run's model string, as RolloutModel has it
    await strategy(TASK, scripted_model.enqueue(fenced(plan())), traveleval_sandbox)
    (request,) = scripted_model.requests
    assert (request.temperature, request.max_tokens) == sent


@pytest.mark.parametrize(("answer", "official", "lenient"), [
    (fenced(plan()), DELIVERED, DELIVERED),
    ("Here it is:\n" + json.dumps(plan()), statuses.PARSE_FAILURE, DELIVERED),
    ("```\n" + json.dumps(plan()) + "\n```", statuses.PARSE_FAILURE, DELIVERED),  # a fence that does not say json
    (fenced({k: v for k, v in plan().items() if k != "query_uid"}), statuses.PARSE_FAILURE, DELIVERED),
    ("```json\n" + json.dumps(plan()).replace('"', "'") + "\n```", DELIVERED, statuses.PARSE_FAILURE),
])
async def test_official_parsing_is_the_default_and_lenient_a_named_option(
        traveleval_sandbox: Sandbox, answer: str, official: str, lenient: str) -> None:
    for parsing, status in (("official", official), ("lenient", lenient)):
        model = ScriptedModel().enqueue(answer)
        result = await PaperStrategy("direct", "direct", parsing=parsing)(TASK, model, traveleval_sandbox)  # type: ignore[arg-type]
        assert result.status == status, (parsing, result.error)


class StageMarks:
    """A scripted model that notes the stage each call was made in (`providers.stages`)."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.stages: list[str | None] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.stages.append(current_stage())
        return await self.model.complete(request)


async def test_the_papers_calls_write_plans_and_are_made_as_the_planners(traveleval_sandbox: Sandbox,
                                                                         scripted_model: ScriptedModel) -> None:
    # what `batch = "planner"` sends through a batch API: every call of the paper's strategies (each writes a plan),
    # none of the tool agents' steps
    marks = StageMarks(scripted_model.enqueue(fenced(plan()), fenced(plan())))
    assert (await REFLEXION(TASK, marks, traveleval_sandbox)).status == DELIVERED  # type: ignore[arg-type]
    assert marks.stages == [PLANNER, PLANNER] and REFLEXION.planner_calls == REFLEXION.expected_calls == 2
    assert current_stage() is None  # the mark ends with the call
    tools = StageMarks(scripted_model.enqueue(SEARCH, finish(plan())))
    assert (await react_tools(ReactLimits())(TASK, tools, traveleval_sandbox)).status == DELIVERED  # type: ignore[arg-type]
    assert tools.stages == [None, None]
