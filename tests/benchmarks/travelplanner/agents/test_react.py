"""The two-stage ReAct agent against the spec's verified behaviour (docs/fidelity/travelplanner.md §4), on the real
sandbox."""

from __future__ import annotations

import ast

import pytest

from benchmarks.travelplanner.agents.planner_tool import count_tokens
from benchmarks.travelplanner.agents.react import (
    FILTERED_ACTION,
    MASK,
    NULL_ACTION_FEEDBACK,
    NULL_ACTION_OBSERVATION,
    ReactAgent,
    ReactLimits,
)
from benchmarks.travelplanner.prompts import ZEROSHOT_REACT_INSTRUCTION
from benchmarks.travelplanner.tools import INVALID_ACTION
from providers.stages import PLANNER, current_stage

QUERY = "Please help me plan a trip from St. Petersburg to Rockford spanning 3 days from March 16th to March 18th."
FLIGHTS = "FlightSearch[St. Petersburg, Rockford, 2022-03-16]"


def script(model, *steps: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Enqueue (thought, action) pairs: the agent asks for a thought and an action separately per step."""
    for thought, action in steps:
        model.enqueue(thought, action)


async def run(model, sandbox, **limits):  # type: ignore[no-untyped-def]
    return await ReactAgent(model, sandbox, ReactLimits(**limits)).run(QUERY)


def states(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [step["state"] for step in result.steps]


async def test_calls_are_separate_thought_and_action_requests_stopped_at_newline(scripted_model, sandbox):
    script(scripted_model, ("I need flights.\nAction 1: ignored", "CitySearch[Illinois]\n"))
    script(scripted_model, ("Done.", "CitySearch[Texas]"), ("Done.", "CitySearch[Ohio]"))
    result = await run(scripted_model, sandbox, max_steps=3)
    first, second = scripted_model.requests[:2]
    assert first.stop == ("\n",) and first.max_tokens == 256 and len(first.messages) == 1
    assert first.messages[0].content == ZEROSHOT_REACT_INSTRUCTION.format(query=QUERY, scratchpad="\nThought 1:")
    assert second.messages[0].content.endswith("\nThought 1: I need flights.\nAction 1:")
    assert result.steps[0] == {
        "step": 1,
        "thought": "Thought 1: I need flights.",  # official quirk: the prefix stays in the log
        "action": "Action 1: CitySearch[Illinois]",
        "observation": "['Moline', 'Belleville', 'Bloomington', 'Champaign', 'Chicago', 'Rockford', 'Peoria']",
        "state": "Successful",
    }
    assert result.scratchpad.startswith(
        "\nThought 1: I need flights.\nAction 1: CitySearch[Illinois]\nObservation 1: ['Moline', ")
    assert result.halted == "max_steps" and result.answer == ""


async def test_first_search_masks_every_none_in_the_scratchpad(scripted_model, sandbox):
    # official quirk, docs/fidelity/travelplanner.md §4.5: before any search current_data is None, so "None" is masked
    # everywhere.
    script(scripted_model, ("None of this is known yet.", FLIGHTS), ("Write it.", "NotebookWrite[Flights]"),
           ("Restaurants next.", "RestaurantSearch[Rockford]"))
    scripted_model.enqueue("Stop.", "Planner[Plan my trip]", "Day 1: ...")
    result = await run(scripted_model, sandbox)
    flights_table = result.steps[0]["observation"]
    assert "F3573659" in flights_table
    step2_prompt = scripted_model.prompts[2]
    assert f"Thought 1: {MASK} of this is known yet." in step2_prompt
    assert flights_table in step2_prompt  # the table itself is only masked by the next masking action
    step3_prompt = scripted_model.prompts[4]
    assert flights_table.strip() not in step3_prompt
    assert f"Observation 1: {MASK}" in step3_prompt
    # The notebook keeps the flights and the Planner sees them as the repr of `list_all()`.
    planner_prompt = scripted_model.prompts[-1]
    notebook = ast.literal_eval(planner_prompt.split("Given information: ")[1].split("\nQuery: ")[0])
    assert notebook == [{"index": 0, "Short Description": "Flights", "Content": flights_table}]
    assert planner_prompt.endswith("Query: Plan my trip\nTravel Plan:")
    assert result.answer == "Day 1: ..." and states(result)[-1] == "Successful"


async def test_argument_splitting_needs_comma_space(scripted_model, sandbox):
    script(scripted_model, ("Search.", "FlightSearch[St. Petersburg,Rockford,2022-03-16]"),
           ("Again.", "FlightSearch[St. Petersburg, Rockford, 16 March]"),
           ("Again.", "FlightSearch[Atlantis, Rockford, 2022-03-16]"),
           ("Again.", FLIGHTS))
    result = await run(scripted_model, sandbox)
    assert [s["observation"] for s in result.steps[:3]] == [
        "Illegal Flight Search. Please try again.",
        "'16 March' is not in the format YYYY-MM-DD",
        result.steps[2]["observation"],
    ]
    assert result.steps[2]["observation"].startswith("Atlantis is not valid city in ['")
    # Three failures of one tool (any kind) since the last success: the 4th call stops the run
    # (docs/fidelity/travelplanner.md §4.7).
    assert states(result) == ["Illegal args. Other Error", "Illegal args. DateError", "Illegal args. City Error",
                              "flights early stop due to 3 max retries."]
    assert result.steps[3]["observation"] == "" and result.answer == ""
    assert result.scratchpad.endswith("\nAction 4: " + FLIGHTS + "\nObservation 4: ")


async def test_any_success_resets_the_counters(scripted_model, sandbox):
    script(scripted_model, ("a", "RestaurantSearch[Atlantis]"), ("b", "RestaurantSearch[Lemuria]"),
           # "Invalid State" is a success (docs/fidelity/travelplanner.md §3.6) and resets every counter
           ("c", "CitySearch[Atlantis]"),
           ("d", "RestaurantSearch[Mu]"), ("e", "RestaurantSearch[Thule]"), ("f", "RestaurantSearch[Avalon]"),
           ("g", "RestaurantSearch[Hyperborea]"))
    result = await run(scripted_model, sandbox)
    assert result.steps[2]["observation"] == "Invalid State"
    assert states(result) == ["Illegal args. City Error"] * 2 + ["Successful"] + ["Illegal args. City Error"] * 3 + [
        "restaurants early stop due to 3 max retries."]


async def test_accommodation_search_failures_never_stop_the_run(scripted_model, sandbox):
    # official quirk, docs/fidelity/travelplanner.md §4.7: AccommodationSearch maps to `accommodation`, which is no
    # counter (verified: 5 failures in a row, no stop).
    script(scripted_model, *[(f"try {i}", f"AccommodationSearch[Nowhere {i}]") for i in range(5)],
           ("ok", "AccommodationSearch[Rockford]"))
    scripted_model.enqueue("plan", "Planner[Trip]", "A plan")
    result = await run(scripted_model, sandbox)
    assert states(result) == ["Illegal args. City Error"] * 5 + ["Successful", "Successful"]
    assert result.answer == "A plan"


async def test_accommodation_search_after_three_invalid_actions_stops(scripted_model, sandbox):
    script(scripted_model, ("a", "Search the web"), ("b", "Fly[now]"), ("c", "DistanceMatrix[A, B, taxi]"),
           ("d", "AccommodationSearch[Rockford]"))
    result = await run(scripted_model, sandbox)
    assert [s["observation"] for s in result.steps[:3]] == [INVALID_ACTION] * 3
    assert states(result) == ["invalidAction"] * 3 + ["invalidAction early stop due to 3 max retries."]


async def test_third_identical_action_stops_before_executing(scripted_model, sandbox):
    script(scripted_model, ("a", "CitySearch[Ohio]"), ("b", "CitySearch[Ohio]"), ("c", "CitySearch[Texas]"),
           ("d", "CitySearch[Texas]"), ("e", "CitySearch[Texas]"))
    result = await run(scripted_model, sandbox)
    assert states(result) == ["Successful"] * 4 + ["same action 3 times repeated"]
    assert result.steps[-1]["action"] == "Action 5: CitySearch[Texas]"
    assert result.steps[-1]["observation"] == "" and result.answer == ""
    assert result.scratchpad.endswith("\nAction 5: CitySearch[Texas]")  # no "Observation 5:" line


async def test_null_actions_are_logged_and_count_for_repetition(scripted_model, sandbox):
    script(scripted_model, ("a", "\n\n"), ("b", ""), ("c", "  "))
    result = await run(scripted_model, sandbox)
    assert result.steps[0] == {"step": 1, "thought": "Thought 1: a", "action": "Action 1:" + FILTERED_ACTION,
                               "observation": NULL_ACTION_OBSERVATION, "state": ""}
    assert "\nAction 1:" + FILTERED_ACTION + "\nObservation 1: " + NULL_ACTION_FEEDBACK in result.scratchpad
    assert "['\\n', 'Thought', 'Action', 'Observation']" in FILTERED_ACTION  # backslash-n, not a newline
    assert states(result) == ["", "", "same action 3 times repeated"]


async def test_thirty_step_limit(scripted_model, sandbox):
    script(scripted_model, *[("t", "CitySearch[Ohio]" if i % 2 else "CitySearch[Texas]") for i in range(30)])
    result = await run(scripted_model, sandbox)
    assert len(result.steps) == 30 and len(scripted_model.requests) == 60
    assert result.halted == "max_steps" and result.answer == "" and states(result)[-1] == "Successful"


async def test_prompt_token_limit_halts_before_the_next_step(scripted_model, sandbox):
    empty = count_tokens(ZEROSHOT_REACT_INSTRUCTION.format(query=QUERY, scratchpad=""))
    script(scripted_model, ("Look.", "RestaurantSearch[Rockford]"))  # a long table
    result = await run(scripted_model, sandbox, max_prompt_tokens=empty + 200)
    assert len(result.steps) == 1 and result.halted == "token_limit" and result.answer == ""


async def test_planner_prompt_over_12000_tokens_is_not_sent(scripted_model, sandbox):
    script(scripted_model, ("a", "RestaurantSearch[Chicago]"), ("b", "NotebookWrite[Chicago food]"),
           ("c", "AccommodationSearch[Chicago]"), ("d", "NotebookWrite[Chicago rooms]"),
           ("e", "AttractionSearch[Chicago]"), ("f", "NotebookWrite[Chicago sights]"))
    script(scripted_model, ("g", "Planner[Trip]"))
    result = await run(scripted_model, sandbox, planner_max_prompt_tokens=2000)
    assert result.answer == "Max Token Length Exceeded."
    assert len(scripted_model.requests) == 14  # the Planner made no call
    assert result.steps[-1]["state"] == "Max Token Length of Planner Exceeded."


@pytest.mark.parametrize("action", ["Planner[]", "planner[Trip]", "Planner[Trip] now"])
async def test_malformed_planner_actions_are_invalid(scripted_model, sandbox, action):
    script(scripted_model, ("a", action), ("b", "CitySearch[Ohio]"), ("c", "CitySearch[Texas]"))
    result = await run(scripted_model, sandbox, max_steps=3)
    assert states(result) == ["invalidAction", "Successful", "Successful"]


async def test_a_failing_distance_call_still_masks_the_previous_data(scripted_model, sandbox):
    # official quirk, docs/fidelity/travelplanner.md §4.5: GoogleDistanceMatrix masks before splitting its arguments;
    # other tools mask only once their validation passed.
    drive = "GoogleDistanceMatrix[Rockford, Chicago, self-driving]"
    script(scripted_model, ("a", drive), ("b", "FlightSearch[Rockford,Chicago,2022-03-16]"),
           ("c", "GoogleDistanceMatrix[Rockford, Chicago]"))
    result = await run(scripted_model, sandbox, max_steps=3)
    assert states(result) == ["Successful", "Illegal args. Other Error", "Illegal args. Other Error"]
    distance = result.steps[0]["observation"]
    assert distance in scripted_model.prompts[4]  # still there after the failed FlightSearch
    assert result.steps[2]["observation"] == "Illegal GoogleDistanceMatrix. Please try again."
    assert distance not in result.scratchpad and f"Observation 1: {MASK}" in result.scratchpad


async def test_notebook_after_city_search_stores_the_previous_search(scripted_model, sandbox):
    script(scripted_model, ("a", "GoogleDistanceMatrix[Rockford, Chicago, self-driving]"),
           ("b", "CitySearch[Illinois]"), ("c", "NotebookWrite[Cities]"), ("d", "GoogleDistanceMatrix[A, B]"))
    scripted_model.enqueue("e", "Planner[Trip]", "plan")
    result = await run(scripted_model, sandbox)
    distance = result.steps[0]["observation"]
    assert distance.startswith("self-driving, from Rockford to Chicago, duration: ")
    assert f"Observation 1: {MASK}" in result.scratchpad  # masked by CitySearch
    notebook = ast.literal_eval(scripted_model.prompts[-1].split("Given information: ")[1].split("\nQuery: ")[0])
    assert notebook == [{"index": 0, "Short Description": "Cities", "Content": distance}]


@pytest.mark.parametrize(("model", "temperature", "limit"), [
    # docs/fidelity/travelplanner.md §4.2: temperature 1 since commit b8cf8dd, 15,000 tokens
    ("openai:gpt-3.5-turbo-1106", 1.0, 15_000),
    ("openai-compatible:gpt-3.5-turbo@http://127.0.0.1:9/v1", 1.0, 15_000),
    ("openai:gpt-4-1106-preview", 0.0, 30_000),
    ("anthropic:claude-sonnet-4-5", 0.0, 30_000),
    ("", 0.0, 30_000),  # a model that does not say its name: GPT-4's values, as before
])
async def test_the_official_settings_are_picked_by_model_name(scripted_model, sandbox, model, temperature, limit):
    scripted_model.name = model
    script(scripted_model, ("t", "CitySearch[Illinois]"))
    agent = ReactAgent(scripted_model, sandbox, ReactLimits(max_steps=1))
    await agent.run(QUERY)
    assert agent.limits.max_prompt_tokens == limit
    assert {request.temperature for request in scripted_model.requests} == {temperature}


def test_settings_the_spec_gives_win_over_the_model_presets() -> None:
    limits = ReactLimits(max_prompt_tokens=8_000, temperature=0.3).for_model("openai:gpt-3.5-turbo")
    assert (limits.max_prompt_tokens, limits.temperature) == (8_000, 0.3)
    assert ReactLimits(temperature=0.0).for_model("openai:gpt-3.5-turbo").temperature == 0.0


async def test_only_the_planners_call_is_marked_as_the_planners(scripted_model, sandbox):
    # what `batch = "planner"` sends through a batch API (providers.stages): the Planner's call, not the steps
    stages: list[str | None] = []

    class Marks:
        async def complete(self, request):  # type: ignore[no-untyped-def]
            stages.append(current_stage())
            return await scripted_model.complete(request)

    script(scripted_model, ("I need cities.", "CitySearch[Illinois]"))
    scripted_model.enqueue("plan", "Planner[Trip]", "A plan")
    result = await ReactAgent(Marks(), sandbox, ReactLimits()).run(QUERY)
    assert result.answer == "A plan"
    assert stages == [None] * 4 + [PLANNER]
    assert current_stage() is None  # the mark ends with the call
