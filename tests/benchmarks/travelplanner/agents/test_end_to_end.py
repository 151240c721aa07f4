"""The two-stage agent end to end: real openai and anthropic SDKs, real HTTP, the mock server replying from a script.

On Claude the agent's `"\n"` stop is applied by the client (the Messages API refuses whitespace-only stops, and so
does the mock server): the run must be the same.

The reply function reads the prompt the way a model would (which step is due, thought or action) and answers
from `SCRIPT`; the Planner prompt gets the human-annotated plan of train query 1 in the official day format.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.base import DELIVERED
from benchmarks.registry import get_benchmark
from benchmarks.travelplanner.agents.parsing import render_plan
from benchmarks.travelplanner.agents.strategies import TwoStageStrategy
from benchmarks.travelplanner.dataset import load_queries
from providers.anthropic_messages import AnthropicMessages
from providers.openai_chat import OpenAIChat
from runner.mock_server import MockConfig, MockRequest

SCRIPT = [
    ("I need flights there.", "FlightSearch[St. Petersburg, Rockford, 2022-03-16]"),
    ("Keep them.", "NotebookWrite[Flights from St. Petersburg to Rockford on 2022-03-16]"),
    ("And flights back.", "FlightSearch[Rockford, St. Petersburg, 2022-03-18]"),
    ("Keep them.", "NotebookWrite[Flights from Rockford to St. Petersburg on 2022-03-18]"),
    ("Where to sleep?", "AccommodationSearch[Rockford]"),
    ("Keep them.", "NotebookWrite[Accommodations in Rockford]"),
    ("Where to eat?", "RestaurantSearch[Rockford]"),
    ("Keep them.", "NotebookWrite[Restaurants in Rockford]"),
    ("What to see?", "AttractionSearch[Rockford]"),
    ("Keep them.", "NotebookWrite[Attractions in Rockford]"),
    ("Time to plan.", "Planner[A 3-day trip from St. Petersburg to Rockford, March 16-18, 2022, budget $1,700]"),
]
PLAN_TEXT: list[str] = []  # filled by the test: the annotated plan, rendered
_DUE = re.compile(r"\n(Thought|Action) (\d+):$")


def scripted_agent_reply(request: MockRequest) -> str:
    """What the scripted 'model' says to each prompt (runs inside the mock server)."""
    prompt = request.messages[-1].content
    if prompt.startswith("You are a proficient planner."):
        return PLAN_TEXT[0]
    due = _DUE.search(prompt)
    assert due, "the prompt should end with the step the model must write"
    thought, action = SCRIPT[int(due.group(2)) - 1]
    # A model keeps talking past the stop sequence; the server cuts at "\n" as the real API does.
    return f"{thought}\nAction {due.group(2)}: ..." if due.group(1) == "Thought" else action


@pytest.fixture(params=["openai", "anthropic"])
async def mock_model(request, start_mock_llm):
    server = await start_mock_llm(MockConfig(reply=f"{__name__}:scripted_agent_reply"))
    model = (OpenAIChat("gpt-mock", api_key="sk-test", base_url=server.openai_base_url) if request.param == "openai"
             else AnthropicMessages("claude-mock", api_key="sk-test", base_url=server.base_url))
    try:
        yield server, model
    finally:
        await model.aclose()


async def test_two_stage_run_through_the_sdks(mock_model, travelplanner_data: Path, travelplanner_index):
    server, model = mock_model
    train = load_queries(travelplanner_data / "queries" / "train.jsonl")
    annotated = [day for day in train[0].annotated_plan if day]
    PLAN_TEXT[:] = ["Travel Plan:\n" + render_plan(annotated)]
    benchmark = get_benchmark("travelplanner")
    options = benchmark.options_model(data_dir=travelplanner_data, index=travelplanner_index)
    task = benchmark.load_tasks("train", options)[0]

    with benchmark.open_tools(options) as sandbox:
        result = await TwoStageStrategy()(task, model, sandbox)

    assert result.status == DELIVERED and result.plan == annotated
    assert [step["state"] for step in result.steps[:-1]] == ["Successful"] * len(SCRIPT)
    assert result.steps[-1] == {"parse": "rules", "error": None}
    bodies = [r.body for r in server.received]
    assert len(bodies) == 2 * len(SCRIPT) + 1  # a thought and an action per step, then the Planner
    for body in bodies[:-1]:
        stop = body.get("stop", body.get("stop_sequences"))  # Claude: not sent, applied by the client
        assert stop == (["\n"] if isinstance(model, OpenAIChat) else None)
        assert body.get("max_completion_tokens", body.get("max_tokens")) == 256
    assert server.tally.statuses == {"200": len(bodies)}
    planner_prompt = bodies[-1]["messages"][-1]["content"]
    assert "'Short Description': 'Flights from St. Petersburg to Rockford on 2022-03-16'" in planner_prompt
    assert "F3573659" in planner_prompt and "Coco Bambu" in planner_prompt
    assert planner_prompt.endswith("Query: " + SCRIPT[-1][1][len("Planner["):-1] + "\nTravel Plan:")
    # NotebookWrite masked each table: the last ReAct prompt shows no raw table, only the masks.
    last_react_prompt = bodies[-2]["messages"][-1]["content"]
    assert "F3573659" not in last_react_prompt and last_react_prompt.count("Masked due to limited length") == 5

    evaluation = benchmark.evaluate([task], [result], "official", options)[0]
    assert [v.passed for v in evaluation.verdicts if v.group == "commonsense"] == [True] * 8
    assert evaluation.details["total_cost"] == 1608
