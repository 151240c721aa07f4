"""Replies beyond plain text, from a reply function named in the config, mapped alike by both providers."""

from __future__ import annotations

import sys

import pytest

from providers.errors import BadRequest
from providers.tokens import count_prompt_tokens
from runner.mock_server import MockConfig, MockReply, MockRequest
from tests.providers.providers_support import chat

PROMPT = count_prompt_tokens([("system", "You are a travel agent."), ("user", "Plan a trip to Rome")])


def cached_reply(request: MockRequest) -> MockReply:
    return MockReply("from cache", cached_input_tokens=9)


def filtered_reply(request: MockRequest) -> MockReply:
    # each protocol's word for "the safety system stopped this reply"
    return MockReply("", finish_reason="content_filter" if request.api == "openai" else "refusal")


@pytest.fixture
def replies(monkeypatch: pytest.MonkeyPatch) -> str:
    """This module, importable by the name the config gives."""
    monkeypatch.setitem(sys.modules, "mapping_replies", sys.modules[__name__])
    return "mapping_replies"


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_cached_prompt_tokens_are_part_of_input_tokens(api, replies, start_mock_llm, provider_for) -> None:
    server = await start_mock_llm(MockConfig(reply=f"{replies}:cached_reply"))
    response = await provider_for(api, server).complete(chat())
    assert response.text == "from cache"
    # OpenAI counts cached tokens inside prompt_tokens; Anthropic reports them beside input_tokens
    assert (response.usage.input_tokens, response.usage.cached_input_tokens) == (PROMPT, 9)
    assert server.tally.cached_input_tokens == 9


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_content_filter_is_a_bad_request(api, replies, start_mock_llm, provider_for) -> None:
    server = await start_mock_llm(MockConfig(reply=f"{replies}:filtered_reply"))
    with pytest.raises(BadRequest, match="content filter|refused"):
        await provider_for(api, server).complete(chat())
