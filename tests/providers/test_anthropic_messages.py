"""The Anthropic Messages provider through the real `anthropic` SDK against the mock server."""

from __future__ import annotations

import pytest

from providers.interface import ChatRequest, Message
from providers.tokens import count_prompt_tokens, count_text_tokens
from tests.providers.providers_support import chat


async def test_happy_path_maps_text_finish_usage_and_request_id(mock_llm, provider_for) -> None:
    model = provider_for("anthropic", mock_llm)
    response = await model.complete(chat("Plan a trip to Rome"))
    assert response.text == "[mock claude-haiku-4-5] you said: Plan a trip to Rome"
    assert response.finish_reason == "end_turn"
    prompt = count_prompt_tokens([("system", "You are a travel agent."), ("user", "Plan a trip to Rome")])
    assert response.usage.input_tokens == prompt
    assert response.usage.output_tokens == count_text_tokens(response.text)
    assert response.request_id == "req_mock_1"
    assert mock_llm.tally.served == 1 and mock_llm.tally.output_tokens == response.usage.output_tokens


async def test_system_messages_go_to_the_system_parameter(mock_llm, provider_for) -> None:
    request = ChatRequest(model="t", messages=(
        Message("system", "Rule one."), Message("user", "Hi"), Message("assistant", "Hello"),
        Message("system", "Rule two."), Message("user", "Go"),
    ))
    await provider_for("anthropic", mock_llm).complete(request)
    body = mock_llm.received[-1].body
    assert body["system"] == "Rule one.\n\nRule two."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]


async def test_system_messages_alone_are_sent_as_the_user_turn(mock_llm, provider_for) -> None:
    """The Messages API refuses a request without a turn; a request of system messages only (TravelEval's official
    critique) is answered as if the user had sent them."""
    request = ChatRequest(model="t", messages=(Message("system", "Review this plan."),))
    response = await provider_for("anthropic", mock_llm).complete(request)
    body = mock_llm.received[-1].body
    assert body["messages"] == [{"role": "user", "content": "Review this plan."}] and "system" not in body
    assert response.text == "[mock claude-haiku-4-5] you said: Review this plan."


async def test_request_fields_reach_the_wire(mock_llm, provider_for) -> None:
    await provider_for("anthropic", mock_llm).complete(
        chat(temperature=0.2, top_p=0.8, max_tokens=100, stop=("END",), seed=5, extras=(("top_k", 40),)))
    body = mock_llm.received[-1].body
    assert (body["model"], body["max_tokens"], body["stop_sequences"]) == ("claude-haiku-4-5", 100, ["END"])
    assert (body["temperature"], body["top_p"], body["top_k"]) == (0.2, 0.8, 40)
    assert "seed" not in body  # the Messages API has none


async def test_max_tokens_defaults_because_the_api_requires_it(mock_llm, provider_for) -> None:
    await provider_for("anthropic", mock_llm).complete(chat())
    assert mock_llm.received[-1].body["max_tokens"] == 4096


@pytest.mark.parametrize(("stop", "max_tokens", "finish"), [
    (("Rome",), None, "stop_sequence"),
    ((), 2, "max_tokens"),
])
async def test_stop_reasons(mock_llm, provider_for, stop, max_tokens, finish) -> None:
    response = await provider_for("anthropic", mock_llm).complete(chat(stop=stop, max_tokens=max_tokens))
    assert response.finish_reason == finish
    if finish == "stop_sequence":
        assert response.text == "[mock claude-haiku-4-5] you said: Plan a trip to "


async def test_whitespace_stops_are_applied_by_the_client_not_sent(mock_llm, provider_for) -> None:
    # The TravelPlanner agents stop at "\n"; the Messages API answers HTTP 400 to a whitespace-only stop.
    model = provider_for("anthropic", mock_llm)
    response = await model.complete(chat("line one\nline two", stop=("\n", "END")))
    assert mock_llm.received[-1].body["stop_sequences"] == ["END"]
    assert response.text == "[mock claude-haiku-4-5] you said: line one"
    assert response.finish_reason == "stop_sequence"
    full = "[mock claude-haiku-4-5] you said: line one\nline two"
    assert response.usage.output_tokens == count_text_tokens(full) == mock_llm.tally.output_tokens  # as billed


async def test_the_mock_server_refuses_a_whitespace_stop_as_the_api_does(mock_llm) -> None:
    import aiohttp

    body = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "stop_sequences": ["\n"]}
    async with aiohttp.ClientSession() as session, session.post(
            f"{mock_llm.base_url}/v1/messages", json=body, headers={"x-api-key": "k"}) as answer:
        assert answer.status == 400
        assert "non-whitespace" in (await answer.json())["error"]["message"]
