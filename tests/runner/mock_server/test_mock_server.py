"""The mock server over raw HTTP: routes, protocol errors, limits and their headers, seeded faults, the tally."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections import Counter

import aiohttp
import pytest

from errors import ConfigError
from providers.interface import ChatRequest, Message
from providers.registry import BUILTINS, resolve_model
from providers.transport import TRANSPORTS
from runner.mock_server import MockConfig, MockRequest, create_app
from runner.mock_server.config import Faults, Latency, load_config
from runner.mock_server.faults import FaultPlan
from runner.mock_server.ratelimits import RateLimits
from runner.mock_server.state import MOCK_STATE

OPENAI_BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}
ANTHROPIC_BODY = {"model": "claude-haiku-4-5", "max_tokens": 20, "messages": [{"role": "user", "content": "hello"}]}


async def post(server, path, body, key="sk-k1", **headers):
    auth = {"Authorization": f"Bearer {key}"} if key else {}
    async with aiohttp.ClientSession() as session:
        async with session.post(server.base_url + path, data=json.dumps(body) if not isinstance(body, bytes)
                                else body, headers={**auth, **headers}) as response:
            return response.status, response.headers.copy(), await response.text()


async def get_json(server, path):
    async with aiohttp.ClientSession() as session:
        async with session.get(server.base_url + path) as response:
            return response.status, await response.json()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_mock_server_answers_every_built_in_providers_client(mock_llm, monkeypatch, transport) -> None:
    """The mock server speaks each provider record's protocol (`providers.registry.BUILTINS`), whichever transport
    carries it: a provider added with a protocol the mock server does not speak fails here."""
    base_url = {"openai": mock_llm.openai_base_url, "anthropic": mock_llm.base_url}  # where each SDK expects its API
    answers = {}
    for prefix, provider in BUILTINS.items():
        if provider.key_env is not None:
            monkeypatch.setenv(provider.key_env, "sk-k1")
        url = base_url[provider.sdk]
        string = f"{prefix}:mock@{url}" if prefix == "openai-compatible" else f"{prefix}:mock"
        model = resolve_model(string, base_url=None if prefix == "openai-compatible" else url, transport=transport)
        try:
            reply = await model.complete(ChatRequest(string, (Message("user", "hello"),), max_tokens=20))
        finally:
            await model.aclose()  # type: ignore[attr-defined]
        answers[prefix] = reply.text
    assert answers == dict.fromkeys(BUILTINS, "[mock mock] you said: hello")
    # each at its own protocol's route (an SDK is named as the protocol it speaks)
    assert [request.api for request in mock_llm.received] == [provider.sdk for provider in BUILTINS.values()]


async def test_health_and_tally_with_reset(mock_llm) -> None:
    assert await get_json(mock_llm, "/health") == (200, {"status": "ok"})
    await post(mock_llm, "/v1/chat/completions", OPENAI_BODY)
    await post(mock_llm, "/v1/messages", ANTHROPIC_BODY, key=None, **{"x-api-key": "sk-k2"})
    mock_llm.plan.fail_next(500)
    await post(mock_llm, "/v1/chat/completions", OPENAI_BODY)
    status, tally = await get_json(mock_llm, "/_tally")
    assert status == 200
    assert (tally["requests"], tally["served"]) == (3, 2)
    assert tally["statuses"] == {"200": 2, "500": 1} and tally["faults"] == {"status": 1}
    assert tally["input_tokens"] == 2 * 8  # 3 + "user" 1 + "hello" 1 + 3 per request
    async with aiohttp.ClientSession() as session:
        async with session.post(mock_llm.base_url + "/_tally/reset") as response:
            assert response.status == 200
    assert (await get_json(mock_llm, "/_tally"))[1]["requests"] == 0
    assert list(mock_llm.received) == []


@pytest.mark.parametrize(("path", "body", "needle"), [
    ("/v1/chat/completions", b"{not json", "not a JSON object"),
    ("/v1/chat/completions", {"messages": []}, "model"),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
    ("/v1/chat/completions", {**OPENAI_BODY, "stream": True}, "stream"),
    ("/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
    ("/v1/messages", {**ANTHROPIC_BODY, "messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
])
async def test_protocol_violations_are_400s_naming_the_field(mock_llm, path, body, needle) -> None:
    status, _, text = await post(mock_llm, path, body)
    assert status == 400 and needle in text


async def test_missing_key_is_401_in_each_protocol_shape(mock_llm) -> None:
    status, _, text = await post(mock_llm, "/v1/chat/completions", OPENAI_BODY, key=None)
    assert status == 401 and json.loads(text)["error"]["code"] == "invalid_api_key"
    status, _, text = await post(mock_llm, "/v1/messages", ANTHROPIC_BODY, key=None)
    assert status == 401 and json.loads(text) == {
        "type": "error", "error": {"type": "authentication_error", "message": "Missing API key."}}


async def test_rpm_limit_is_per_key_with_retry_after_and_ratelimit_headers(start_mock_llm) -> None:
    server = await start_mock_llm(MockConfig(rpm=2))
    first = await post(server, "/v1/chat/completions", OPENAI_BODY, key="sk-a")
    assert first[1]["x-ratelimit-limit-requests"] == "2" and first[1]["x-ratelimit-remaining-requests"] == "1"
    await post(server, "/v1/chat/completions", OPENAI_BODY, key="sk-a")
    status, headers, text = await post(server, "/v1/chat/completions", OPENAI_BODY, key="sk-a")
    assert status == 429 and "requests per minute" in text
    assert headers["retry-after"] == "30" and 29_000 < int(headers["retry-after-ms"]) <= 30_000
    assert (await post(server, "/v1/messages", ANTHROPIC_BODY, key="sk-b"))[0] == 200  # another key, own bucket
    assert server.tally.rate_limited == 1


async def test_tpm_limit_charges_billed_tokens(start_mock_llm) -> None:
    server = await start_mock_llm(MockConfig(tpm=60))
    status, headers, text = await post(server, "/v1/chat/completions", OPENAI_BODY)
    billed = json.loads(text)["usage"]["total_tokens"]
    assert status == 200 and headers["x-ratelimit-remaining-tokens"] == str(60 - billed)
    statuses = [(await post(server, "/v1/chat/completions", OPENAI_BODY))[0] for _ in range(60 // billed)]
    assert statuses[-1] == 429 and statuses.count(200) == 60 // billed - 1


def test_token_buckets_refill_continuously() -> None:
    now = [0.0]
    limits = RateLimits(rpm=60, tpm=None, clock=lambda: now[0])
    assert all(limits.admit("k", 10).admitted for _ in range(60))
    refused = limits.admit("k", 10)
    assert not refused.admitted and refused.limit == "requests" and refused.retry_after_s == pytest.approx(1.0)
    now[0] = 1.0
    assert limits.admit("k", 10).admitted
    assert not limits.admit("k", 10).admitted


def test_a_request_larger_than_the_tpm_limit_never_fits() -> None:
    refused = RateLimits(rpm=None, tpm=100).admit("k", 101)
    assert not refused.admitted and refused.retry_after_s == float("inf")


def test_random_faults_follow_their_rates_and_seed() -> None:
    faults = Faults(rate_limited=0.2, server_error=0.05, hang=0.02, malformed=0.01)
    plan_a, plan_b = FaultPlan(faults, seed=3), FaultPlan(faults, seed=3)
    seq_a, seq_b = [plan_a.draw() for _ in range(20_000)], [plan_b.draw() for _ in range(20_000)]
    assert seq_a == seq_b
    assert seq_a != [FaultPlan(faults, seed=4).draw() for _ in range(20_000)]
    counts = Counter((f.kind, f.status) if f else None for f in seq_a)
    share = {what: n / len(seq_a) for what, n in counts.items()}
    assert share[("status", 429)] == pytest.approx(0.20, abs=0.01)
    assert share[("status", 500)] == pytest.approx(0.05, abs=0.005)
    assert share[("hang", 0)] == pytest.approx(0.02, abs=0.004)
    assert share[("malformed", 0)] == pytest.approx(0.01, abs=0.003)
    assert share[None] == pytest.approx(0.72, abs=0.01)


def test_scripted_faults_come_first_then_the_rates() -> None:
    plan = FaultPlan(Faults(server_error=1.0))
    plan.fail_next(429, retry_after=1, times=2)
    plan.malformed_next()
    kinds = [(f.kind, f.status) for f in (plan.draw() for _ in range(4)) if f]
    assert kinds == [("status", 429), ("status", 429), ("malformed", 0), ("status", 500)]


@pytest.mark.parametrize(("latency", "check"), [
    (Latency(kind="fixed", seconds=0.25), lambda xs: set(xs) == {0.25}),
    (Latency(kind="uniform", low_s=0.1, high_s=0.3), lambda xs: 0.1 <= min(xs) and max(xs) <= 0.3),
    (Latency(kind="lognormal", median_s=0.2, sigma=0.5),
     lambda xs: statistics.median(xs) == pytest.approx(0.2, rel=0.05)),
])
def test_latency_distributions_are_seeded(latency, check) -> None:
    draws = [create_app(MockConfig(latency=latency, seed=9))[MOCK_STATE].latency_s() for _ in range(1)]
    state = create_app(MockConfig(latency=latency, seed=9))[MOCK_STATE]
    xs = [state.latency_s() for _ in range(4000)]
    assert check(xs) and xs[0] == draws[0]


async def test_latency_and_delay_next_slow_replies_down(start_mock_llm) -> None:
    server = await start_mock_llm(MockConfig(latency=Latency(kind="fixed", seconds=0.2)))
    started = time.perf_counter()
    assert (await post(server, "/v1/chat/completions", OPENAI_BODY))[0] == 200
    assert time.perf_counter() - started >= 0.2
    server.plan.delay_next(0.3)
    started = time.perf_counter()
    assert (await post(server, "/v1/chat/completions", OPENAI_BODY))[0] == 200
    assert time.perf_counter() - started >= 0.5  # the scripted delay, then the configured latency
    assert server.tally.served == 2 and server.tally.faults == {"delay": 1}


async def test_slots_work_on_that_many_requests_at_once_and_queue_the_rest(start_mock_llm) -> None:
    """Six requests at once on two slots of 0.2 s: three waves, answered at about 0.2, 0.4 and 0.6 s."""
    server = await start_mock_llm(MockConfig(latency=Latency(kind="fixed", seconds=0.2), slots=2))
    started = time.perf_counter()

    async def answered_after() -> float:
        assert (await post(server, "/v1/chat/completions", OPENAI_BODY))[0] == 200
        return time.perf_counter() - started

    times = sorted(await asyncio.gather(*(answered_after() for _ in range(6))))
    assert [round(t / 0.2) for t in times] == [1, 1, 2, 2, 3, 3], times
    assert server.tally.served == 6


def shouting_reply(request: MockRequest) -> str:
    return f"{request.api.upper()} {request.messages[-1].content.upper()}!"


async def test_reply_function_by_import_path(start_mock_llm, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "shouting_replies", sys.modules[__name__])
    server = await start_mock_llm(MockConfig(reply="shouting_replies:shouting_reply"))
    _, _, text = await post(server, "/v1/messages", ANTHROPIC_BODY)
    assert json.loads(text)["content"] == [{"type": "text", "text": "ANTHROPIC HELLO!"}]


def test_unknown_reply_function_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="reply: expected an importable module:function"):
        create_app(MockConfig(reply="no_such_module_here:reply"))


def test_config_files_toml_and_json(tmp_path) -> None:
    toml = tmp_path / "mock.toml"
    toml.write_text('seed = 7\nrpm = 600\n[latency]\nkind = "uniform"\nlow_s = 0.1\nhigh_s = 0.2\n'
                    '[faults]\nrate_limited = 0.2\n')
    config = load_config(toml)
    assert (config.seed, config.rpm, config.latency.high_s, config.faults.rate_limited) == (7, 600, 0.2, 0.2)
    as_json = tmp_path / "mock.json"
    as_json.write_text(json.dumps(config.model_dump()))
    assert load_config(as_json) == config


@pytest.mark.parametrize(("name", "text", "message"), [
    ("m.toml", "rpm = 0\n", "m.toml: rpm: expected an integer > 0, got 0"),
    ("m.toml", "[faults]\nhang = 0.6\ndropped = 0.6\n", "faults: expected fault rates must add up to at most 1"),
    ("m.toml", "rmp = 5\n", "m.toml: rmp: expected one of the fields api_keys, batches, context_window, "
                            "context_wording, faults, keep_requests, latency, models, reply, rpm, seed, slots, tpm, "
                            "usage "
                            "(did you mean rpm?)"),
    ("m.json", "{", "m.json: (file): expected valid JSON"),
    ("m.yaml", "rpm: 5", "expected a .toml or .json file"),
])
def test_bad_config_files_name_file_and_field(tmp_path, name, text, message) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)
