"""The OpenAI Chat Completions provider through the real `openai` SDK against the mock server."""

from __future__ import annotations

from providers.registry import resolve_model
from providers.tokens import count_prompt_tokens, count_text_tokens
from tests.providers.providers_support import chat


async def test_happy_path_maps_text_finish_usage_and_request_id(mock_llm, provider_for) -> None:
    model = provider_for("openai", mock_llm)
    response = await model.complete(chat("Plan a trip to Rome"))
    assert response.text == "[mock gpt-4o-mini] you said: Plan a trip to Rome"
    assert response.finish_reason == "stop"
    prompt = count_prompt_tokens([("system", "You are a travel agent."), ("user", "Plan a trip to Rome")])
    assert response.usage.input_tokens == prompt
    assert response.usage.output_tokens == count_text_tokens(response.text)
    assert response.usage.cached_input_tokens == 0
    assert response.request_id == "req_mock_1"
    assert response.latency_s > 0
    assert (mock_llm.tally.input_tokens, mock_llm.tally.output_tokens) == (prompt, response.usage.output_tokens)


async def test_request_fields_reach_the_wire(mock_llm, provider_for) -> None:
    model = provider_for("openai", mock_llm)
    await model.complete(chat(temperature=0.7, top_p=0.9, max_tokens=64, stop=("\n\n", "END"), seed=11,
                              extras=(("frequency_penalty", 0.5),)))
    body = mock_llm.received[-1].body
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"] == [{"role": "system", "content": "You are a travel agent."},
                                {"role": "user", "content": "Plan a trip to Rome"}]
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.7, 0.9, 11)
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body
    assert body["stop"] == ["\n\n", "END"]
    assert body["frequency_penalty"] == 0.5


async def test_unset_fields_are_not_sent(mock_llm, provider_for) -> None:
    await provider_for("openai", mock_llm).complete(chat())
    assert set(mock_llm.received[-1].body) == {"model", "messages"}


async def test_max_tokens_cuts_the_reply_with_finish_length(mock_llm, provider_for) -> None:
    response = await provider_for("openai", mock_llm).complete(chat("x " * 50, max_tokens=3))
    assert response.finish_reason == "length"
    assert response.usage.output_tokens == 3


async def test_openai_compatible_server_gets_max_tokens_and_a_placeholder_key(mock_llm) -> None:
    model = resolve_model(f"openai-compatible:llama-3.1-8b@{mock_llm.openai_base_url}")
    try:
        response = await model.complete(chat(max_tokens=32))
    finally:
        await model.aclose()  # type: ignore[attr-defined]
    body = mock_llm.received[-1].body
    assert body["model"] == "llama-3.1-8b"
    assert body["max_tokens"] == 32 and "max_completion_tokens" not in body
    assert response.text.startswith("[mock llama-3.1-8b]")
    assert model.provider == "openai-compatible"  # type: ignore[attr-defined]
    assert model.endpoint.rstrip("/") == mock_llm.openai_base_url  # type: ignore[attr-defined]
