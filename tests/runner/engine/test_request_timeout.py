"""`request_timeout_s` in a run spec: validated, handed to the provider, out of every cache key."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.base import DELIVERED
from errors import ConfigError
from providers.errors import ProviderTimeout
from providers.interface import ChatRequest, Message
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.engine.session import EngineSession, Purpose
from runner.engine.spec import load_spec
from runner.mock_server import MockConfig
from runner.store.results import load_run
from tests.runner.engine_support import start_run

TIMEOUT_S = 0.3

BASE = """benchmark = "tests.runner.toy_benchmark:ToyBenchmark"
split = "train"
strategies = ["scripted"]

[[models]]
model = "openai-compatible:a@http://127.0.0.1:9/v1"
request_timeout_s = 30
"""


@pytest.mark.parametrize(("value", "got"), [("0", "0"), ("-5", "-5"), ('"fast"', '"fast"'), ("inf", "Infinity"),
                                            ("true", "true")])
def test_a_bad_timeout_names_the_file_field_and_expectation(tmp_path: Path, value: str, got: str) -> None:
    path = tmp_path / "run.toml"
    path.write_text(BASE.replace("= 30", f"= {value}"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_spec(path)
    assert str(caught.value) == f"{path}: models[0].request_timeout_s: expected a number > 0, got {got}"


def test_entries_sharing_a_model_string_share_one_timeout(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    second = '\n[[models]]\nname = "warm"\nmodel = "openai-compatible:a@http://127.0.0.1:9/v1"\ntemperature = 0.7\n'
    path.write_text(BASE + second + "request_timeout_s = 60\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"run\.toml: models\[1\]: expected request_timeout_s = 30\.0 like "
                                          r"models\[0\], which has the same model string .*, got request_timeout_s = "
                                          r"60\.0$"):
        prepare(path)
    path.write_text(BASE + second, encoding="utf-8")  # unset means the default, which differs from 30 too
    with pytest.raises(ConfigError, match=r"expected request_timeout_s = 30\.0 like models\[0\]"):
        prepare(path)
    path.write_text(BASE + second + "request_timeout_s = 30\n", encoding="utf-8")
    assert [m.request_timeout_s for m in prepare(path).spec.models] == [30, 30]


@pytest.mark.parametrize("protocol", ["openai-compatible", "anthropic"])
async def test_a_hung_request_ends_as_a_timeout_after_the_specs_seconds(start_mock_llm, write_spec, protocol: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_mock_llm()
    server.plan.hang_next()  # no answer for an hour
    monkeypatch.setenv("TOY_KEY", "any")
    model = ({"model": f"openai-compatible:toy@{server.base_url}/v1"} if protocol == "openai-compatible" else
             {"model": "anthropic:toy", "base_url": server.base_url, "api_key_env": "TOY_KEY"})
    prepared = prepare(write_spec(server.base_url, models=[model | {"request_timeout_s": TIMEOUT_S}]))
    async with EngineSession(prepared, Purpose.PREFLIGHT) as session:  # the models resolved as the run's
        provider = session.gateway.target(model["model"]).model
        started = time.perf_counter()
        with pytest.raises(ProviderTimeout, match="request timed out"):
            await provider.complete(ChatRequest(model["model"], (Message("user", "hello"),), max_tokens=8))
    assert TIMEOUT_S <= time.perf_counter() - started < TIMEOUT_S + 2.0  # the default would have waited 120 s
    assert server.tally.faults["hang"] == 1


async def test_a_run_retries_a_hung_call_after_its_timeout_and_the_timeout_keys_no_cache_entry(
        start_mock_llm, write_spec, tmp_path: Path) -> None:
    server = await start_mock_llm()
    server.plan.hang_next()
    options = {"tasks": 4, "max_calls": 3}
    model = {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy"}
    spec = write_spec(server.base_url, concurrency=1, options=options,
                      models=[model | {"request_timeout_s": TIMEOUT_S}])

    started = time.perf_counter()
    report = await execute(prepare(spec), tmp_path / "first", show_progress=False)

    assert time.perf_counter() - started < 10.0  # one timeout and one backoff, not the default 120 s
    assert report.statuses == {DELIVERED: 4}
    with load_run(tmp_path / "first") as results:
        assert sum(r.retries for r in results.rollouts) == 1 and server.tally.faults["hang"] == 1
    served = server.tally.served

    # Another timeout, the same calls: every one is a cache hit, and the first run resumes without --force.
    patient = write_spec(server.base_url, name="patient.toml", concurrency=1, options=options,
                         models=[model | {"request_timeout_s": 90}])
    report = await execute(prepare(patient), tmp_path / "second", show_progress=False)
    assert report.statuses == {DELIVERED: 4} and server.tally.served == served
    with load_run(tmp_path / "second") as results:
        assert all(r.cache_hits == r.calls for r in results.rollouts)
    report = await execute(prepare(patient), tmp_path / "first", show_progress=False)
    assert (report.pending, report.ran) == (0, 0)


async def test_a_stalled_local_server_is_not_waited_out_call_after_call(start_mock_llm, write_spec, tmp_path: Path,
                                                                         toy_on_path) -> None:
    """`concurrency = "auto"` against a server that answers nothing: after three timeouts in a row its calls fail at
    once, unsent, instead of each waiting out its timeout six times (12 minutes a call at the defaults); the rollouts
    end as provider errors that the same command runs again."""
    server = await start_mock_llm(MockConfig(faults={"hang": 1.0, "hang_s": 60.0}))
    model = {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "concurrency": "auto",
             "request_timeout_s": 0.3, "prices": {"input": 0.0, "output": 0.0}}
    spec = write_spec(server.base_url, models=[model], options={"tasks": 8, "max_calls": 1},
                      retry={"max_attempts": 6, "base_delay_s": 0.05, "max_delay_s": 0.2})
    process = await start_run(spec, tmp_path / "run")
    output, _ = await process.communicate()
    assert process.returncode == 4, output.decode()
    with load_run(tmp_path / "run") as results:
        errors = Counter(r.error_type for r in results.rollouts)
    print(f"\nstalled server: {server.tally.requests} requests sent for 8 rollouts of 6 attempts each; {dict(errors)}")
    assert server.tally.requests == 3  # 48 without the stop
    assert sum(errors.values()) == 8 and set(errors) <= {"ProviderTimeout", "NotSent"}
