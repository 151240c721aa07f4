"""Per-model settings reach the one client and the one set of limits they configure, or the spec is refused."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from errors import ConfigError
from providers.interface import ChatRequest, Message
from runner.engine.prepared import prepare
from runner.engine.session import EngineSession, Purpose
from runner.engine.spec import CLIENT_FIELDS, load_spec

BASE = """benchmark = "tests.runner.toy_benchmark:ToyBenchmark"
split = "train"
strategies = ["scripted"]

[[models]]
model = "openai:gpt-4o-mini"
base_url = "http://127.0.0.1:9/v1"
rpm = 10
prices = { input = 1.0, output = 2.0 }

[[models]]
model = "openai-compatible:b@http://127.0.0.1:9/v1"
"""

WARM = """
[[models]]
name = "warm"
model = "openai:gpt-4o-mini"
temperature = 0.7
concurrency = 2
"""


def test_every_client_and_limit_setting_is_shared_and_only_those() -> None:
    assert set(CLIENT_FIELDS) == {"base_url", "api_key_env", "rpm", "tpm", "prices", "request_timeout_s", "transport",
                                  "batch"}


def test_entries_sharing_a_model_string_may_differ_in_name_concurrency_and_sampling(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    same = 'base_url = "http://127.0.0.1:9/v1"\nrpm = 10\nprices = { output = 2.0, input = 1 }\n'
    path.write_text(BASE + WARM + same, encoding="utf-8")
    assert [m.label for m in load_spec(path).models] == [
        "openai:gpt-4o-mini", "openai-compatible:b@http://127.0.0.1:9/v1", "warm"]


@pytest.mark.parametrize(("settings", "expected", "got"), [
    ('base_url = "http://127.0.0.1:9/v1"\nrpm = 10\nprices = { input = 1.0, output = 2.0 }\nrequest_timeout_s = 30\n',
     "request_timeout_s = 120.0", "request_timeout_s = 30.0"),
    ('base_url = "http://127.0.0.1:8/v1"\nrpm = 20\nprices = { input = 1.0, output = 2.0 }\n',
     'base_url = "http://127.0.0.1:9/v1", rpm = 10', 'base_url = "http://127.0.0.1:8/v1", rpm = 20'),
    ('rpm = 10\napi_key_env = "OTHER_KEY"\ntpm = 5000\n',  # unset is a value too: the first entry's would win
     'base_url = "http://127.0.0.1:9/v1", api_key_env unset, tpm unset, prices = { input = 1.0, output = 2.0 }',
     "base_url unset, api_key_env = \"OTHER_KEY\", tpm = 5000, prices unset"),
])
def test_entries_sharing_a_model_string_must_agree_on_client_and_limits(tmp_path: Path, settings: str, expected: str,
                                                                        got: str) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE + WARM + settings, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_spec(path)
    assert str(caught.value) == (
        f"{path}: models[2]: expected {expected} like models[0], which has the same model string (one client, one set "
        f"of rate limits and prices serve both), got {got}")
    assert caught.value.exit_code == 2


async def test_two_endpoints_serving_one_model_name_keep_the_limits_of_their_own_entries(start_mock_llm,
                                                                                         write_spec) -> None:
    slow, fast = await start_mock_llm(), await start_mock_llm()
    models = [{"model": f"openai-compatible:toy@{server.base_url}/v1", "name": name, "rpm": rpm}
              for server, name, rpm in ((slow, "slow", 60), (fast, "fast", 6000))]
    async with EngineSession(prepare(write_spec(slow.base_url, models=models)), Purpose.PREFLIGHT) as session:
        for model, least_s, most_s in ((models[1], 0.0, 1.0), (models[0], 1.9, 30.0)):  # 1 request/s, burst of 1
            started = time.monotonic()
            await asyncio.gather(*(session.gateway.complete(ChatRequest(
                model["model"], (Message("user", f"call {i}"),), max_tokens=8)) for i in range(3)))
            assert least_s <= time.monotonic() - started < most_s, model["name"]
    assert slow.tally.statuses == fast.tally.statuses == {"200": 3}


def test_two_model_strings_reaching_one_endpoint_must_agree_on_limits(write_spec) -> None:
    url = "http://127.0.0.1:9"
    models = [{"model": f"openai-compatible:toy@{url}/v1", "name": "a", "rpm": 60},
              {"model": f"openai-compatible:toy@{url}/v1/", "name": "b", "rpm": 120}]
    path = write_spec(url, models=models)
    with pytest.raises(ConfigError) as caught:
        asyncio.run(EngineSession(prepare(path), Purpose.PREFLIGHT).open())
    assert str(caught.value) == (f"{path}: models[1]: expected rpm = 60 like models[0], which reaches the same model "
                                 "at the same endpoint, got rpm = 120")
