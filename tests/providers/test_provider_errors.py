"""Every failure a real HTTP exchange can produce, through the real SDKs, lands in one of our error classes."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from providers.errors import (
    AuthError,
    BadRequest,
    ContextTooLong,
    LLMError,
    ProviderTimeout,
    RateLimited,
    ServerError,
)
from providers.registry import resolve_model
from providers.transport import TRANSPORTS
from runner.mock_server import MockConfig
from tests.providers.providers_support import MODELS, SECRET_KEY, chat

APIS = ["openai", "anthropic"]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, BadRequest), (401, AuthError), (402, AuthError), (403, AuthError), (404, BadRequest),
        (408, ProviderTimeout), (413, ContextTooLong), (422, BadRequest), (500, ServerError),
        (502, ServerError), (503, ServerError), (529, ServerError),
    ],
)
async def test_status_codes_map_to_error_classes(api, status, expected, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm)
    mock_llm.plan.fail_next(status)
    with pytest.raises(expected) as caught:
        await model.complete(chat())
    assert type(caught.value) is expected
    assert caught.value.status == status
    assert caught.value.provider == api
    assert len(mock_llm.received) == 1  # the SDK did not retry behind our back (max_retries=0)


@pytest.mark.parametrize("api", APIS)
async def test_injected_429_carries_retry_after(api, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm)
    mock_llm.plan.fail_next(429, retry_after=7)
    with pytest.raises(RateLimited) as caught:
        await model.complete(chat())
    assert caught.value.retry_after == 7.0  # retry-after-ms 7000 wins over the rounded retry-after
    assert len(mock_llm.received) == 1


@pytest.mark.parametrize("api", APIS)
async def test_429_without_retry_after(api, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm)
    mock_llm.plan.fail_next(429)
    with pytest.raises(RateLimited) as caught:
        await model.complete(chat())
    assert caught.value.retry_after is None


@pytest.mark.parametrize("api", APIS)
async def test_server_side_rpm_limit_gives_429_with_fractional_retry_after(api, start_mock_llm,
                                                                          provider_for) -> None:
    server = await start_mock_llm(MockConfig(rpm=2))  # refills one request every 30 s
    model = provider_for(api, server)
    await model.complete(chat())
    await model.complete(chat())
    with pytest.raises(RateLimited) as caught:
        await model.complete(chat())
    assert 29.0 < caught.value.retry_after <= 30.0
    assert server.tally.rate_limited == 1 and server.tally.served == 2


@pytest.mark.parametrize(("api", "wording"), [("openai", "openai"), ("openai", "vllm"), ("openai", "llama.cpp"),
                                              ("anthropic", "openai")])
async def test_prompt_over_the_context_window_is_context_too_long(api, wording, start_mock_llm, provider_for) -> None:
    server = await start_mock_llm(MockConfig(context_window=50, context_wording=wording))
    model = provider_for(api, server)
    with pytest.raises(ContextTooLong) as caught:
        await model.complete(chat("word " * 100))
    assert caught.value.status == 400
    assert "context" in str(caught.value) or "too long" in str(caught.value)  # the server's words, recorded
    await model.complete(chat("short"))  # the same model still works under the limit


@pytest.mark.parametrize("api", APIS)
async def test_malformed_json_is_a_server_error(api, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm)
    mock_llm.plan.malformed_next()
    with pytest.raises(ServerError, match="malformed JSON"):
        await model.complete(chat())


@pytest.mark.parametrize("api", APIS)
async def test_dropped_connection_is_a_server_error(api, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm)
    mock_llm.plan.drop_next()
    with pytest.raises(ServerError, match="connection failed") as caught:
        await model.complete(chat())
    assert caught.value.status is None
    assert (await model.complete(chat())).text  # the next call opens a fresh connection


@pytest.mark.parametrize("api", APIS)
async def test_hang_is_a_timeout(api, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm, timeout_s=0.3)
    mock_llm.plan.hang_next()
    with pytest.raises(ProviderTimeout) as caught:
        await model.complete(chat())
    assert isinstance(caught.value, TimeoutError)  # callers catching the builtin still match


@pytest.mark.parametrize("api", APIS)
async def test_a_body_dripping_byte_by_byte_times_out_at_the_deadline(api, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm, timeout_s=1.0)
    mock_llm.plan.drip_next(0.2)  # a byte every 0.2 s: no read ever waits a second
    started = time.monotonic()
    with pytest.raises(ProviderTimeout):
        await asyncio.wait_for(model.complete(chat()), 10)  # a builtin TimeoutError here fails the test
    assert time.monotonic() - started < 2.0  # the whole request's deadline, on both transports


@pytest.mark.parametrize("api", APIS)
async def test_slow_reply_past_the_timeout_is_a_timeout(api, mock_llm, provider_for) -> None:
    model = provider_for(api, mock_llm, timeout_s=0.2)
    mock_llm.plan.delay_next(1.0)
    with pytest.raises(ProviderTimeout):
        await model.complete(chat())


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("api", APIS)
async def test_connection_refused_is_a_server_error(api, transport, monkeypatch) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET_KEY)
    base = f"http://127.0.0.1:{port}" + ("/v1" if api == "openai" else "")
    model = resolve_model(MODELS[api], base_url=base, timeout_s=2, transport=transport)
    try:
        with pytest.raises(ServerError):
            await model.complete(chat())
    finally:
        await model.aclose()


@pytest.mark.parametrize("api", APIS)
async def test_no_error_or_provider_shows_the_api_key(api, start_mock_llm, provider_for) -> None:
    strict = await start_mock_llm(MockConfig(api_keys=("sk-the-only-valid-key",)))
    faulty = await start_mock_llm()
    rejected, model = provider_for(api, strict), provider_for(api, faulty, timeout_s=0.3)
    assert SECRET_KEY not in repr(model)
    caught: list[LLMError] = []
    for target, provoke in ((rejected, lambda: None), (model, faulty.plan.malformed_next),
                            (model, faulty.plan.drop_next), (model, faulty.plan.hang_next),
                            (model, lambda: faulty.plan.fail_next(429, retry_after=1))):
        provoke()
        with pytest.raises(LLMError) as raised:
            await target.complete(chat())
        caught.append(raised.value)
    assert [type(e) for e in caught] == [AuthError, ServerError, ServerError, ProviderTimeout, RateLimited]
    for exc in caught:
        for text in (str(exc), repr(exc), str(exc.__cause__), repr(exc.__cause__)):
            assert SECRET_KEY not in text
    assert "Incorrect API key" in str(caught[0])  # the server's message survives, with the key masked
    received = [*strict.received, *faulty.received]
    assert all(r.key_digest and SECRET_KEY not in r.key_digest for r in received)
