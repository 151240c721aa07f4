"""`tripbench cache stats / explain / prune`, end to end through click."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cache.keys import cache_key, key_fields
from cache.store import CacheEntry, CacheStore
from errors import DataError
from providers.interface import ChatRequest, ChatResponse, Message, Usage
from providers.registry import resolve_model
from runner.cli.main import cli
from runner.ladder.gateway import Target
from tests.runner.engine_support import run_cli

# An OpenAI-compatible server needs no key to resolve (nothing is sent by explain).
MODEL = "openai-compatible:llama@http://127.0.0.1:9/v1"


def stored_request(temperature: float) -> ChatRequest:
    return ChatRequest(MODEL, (Message("user", "Plan a trip to Chicago."),), temperature=temperature)


def identity() -> dict[str, object]:
    target = Target.of(MODEL, resolve_model(MODEL))
    return {"provider": target.provider, "resolved_model": target.model_id, "endpoint": target.endpoint}


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    with CacheStore(directory) as store:
        request = stored_request(0.0)
        fields = key_fields(request, **identity())  # type: ignore[arg-type]
        response = ChatResponse("Day 1: ...", "stop", Usage(12, 0, 40))
        store.set(cache_key(request, **identity()), CacheEntry(fields, response, 0.125, time.time()))  # type: ignore[arg-type]
        store.get(cache_key(request, **identity()))  # type: ignore[arg-type]
        store.get("v1:absent")
    return directory


def test_stats(cache_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["cache", "stats", "--cache-dir", str(cache_dir)])
    assert result.exit_code == 0, result.output
    lines = dict(line.split(None, 1) for line in result.output.splitlines())
    assert lines["entries"] == "1" and lines["hits"] == "1 (50.0% hits)" and lines["misses"] == "1"
    assert lines["saved"] == "$0.1250"
    result = CliRunner().invoke(cli, ["cache", "stats", "--cache-dir", str(cache_dir), "--json"])
    figures = json.loads(result.output)
    assert (figures["entries"], figures["hits"], figures["misses"], figures["saved_usd"]) == (1, 1, 1, 0.125)


def test_stats_default_directory_is_under_the_data_home(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["cache", "stats"], env={"TRIPBENCH_HOME": str(tmp_path)})
    assert f"no cache at {tmp_path / 'cache'}" in str(missing.exception)
    assert not (tmp_path / "cache").exists()  # looking does not create one
    CacheStore(tmp_path / "cache").close()
    result = CliRunner().invoke(cli, ["cache", "stats"], env={"TRIPBENCH_HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert f"cache      {tmp_path / 'cache'}" in result.output and "entries    0" in result.output


def test_explain_names_the_nearest_entry_and_what_differs(cache_dir: Path, tmp_path: Path) -> None:
    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps({"model": MODEL, "temperature": 0.7,
                                        "messages": [{"role": "user", "content": "Plan a trip to Chicago."}]}))
    result = CliRunner().invoke(cli, ["cache", "explain", str(request_file), "--cache-dir", str(cache_dir)])
    assert result.exit_code == 0, result.output
    assert "stored     no" in result.output
    assert f"nearest    {cache_key(stored_request(0.0), **identity())}" in result.output  # type: ignore[arg-type]
    assert "  temperature: this request 0.7\n" in result.output and "stored entry 0.0" in result.output
    assert '"endpoint":"http://127.0.0.1:9/v1/"' in result.output


def test_explain_a_stored_request_and_a_key(cache_dir: Path, tmp_path: Path) -> None:
    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps({"model": MODEL, "temperature": 0,
                                        "messages": [{"role": "user", "content": "Plan a trip to Chicago."}]}))
    hit = CliRunner().invoke(cli, ["cache", "explain", str(request_file), "--cache-dir", str(cache_dir)])
    assert "stored     yes" in hit.output
    key = cache_key(stored_request(0.0), **identity())  # type: ignore[arg-type]
    by_key = CliRunner().invoke(cli, ["cache", "explain", "--key", key, "--cache-dir", str(cache_dir)])
    assert by_key.exit_code == 0 and '"temperature":0.0' in by_key.output


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "cannot read a JSON request"),
    ('{"model": "x:y"}', "messages: missing"),
    ('{"model": "x:y", "messages": [], "temprature": 1}', "temprature: unknown field"),
    ('{"model": "x:y", "messages": [{"role": "user"}]}', "messages[0]: expected {role, content} strings"),
    ('{"model": "x:y", "messages": [], "max_tokens": "lots"}', "max_tokens: expected an integer, got 'lots'"),
])
def test_explain_rejects_a_bad_request_file_naming_the_field(tmp_path: Path, content: str, message: str) -> None:
    request_file = tmp_path / "bad.json"
    request_file.write_text(content)
    result = CliRunner().invoke(cli, ["cache", "explain", str(request_file), "--cache-dir", str(tmp_path / "c")])
    assert isinstance(result.exception, DataError)
    assert str(result.exception).startswith(f"{request_file}: ") and message in str(result.exception)


def test_prune(cache_dir: Path) -> None:
    kept = CliRunner().invoke(cli, ["cache", "prune", "--older-than", "1d", "--cache-dir", str(cache_dir)])
    assert kept.exit_code == 0 and "deleted 0 entries; 1 left" in kept.output
    gone = CliRunner().invoke(cli, ["cache", "prune", "--max-size", "1kb", "--cache-dir", str(cache_dir)])
    assert gone.exit_code == 0 and "deleted 1 entries; 0 left" in gone.output
    bad = CliRunner().invoke(cli, ["cache", "prune", "--older-than", "soon", "--cache-dir", str(cache_dir)])
    assert "expected a duration such as 30d" in str(bad.exception)


def test_help_lines() -> None:
    result = CliRunner().invoke(cli, ["cache", "--help"])
    assert result.exit_code == 0
    for line in ("Inspect and prune the cache of LLM calls.", "stats", "explain", "prune"):
        assert line in result.output


def test_inspecting_a_folder_that_holds_no_cache_creates_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "nightly"  # a run folder mistaken for the cache
    run_dir.mkdir(parents=True)
    for command in (["cache", "stats"], ["cache", "verify"], ["cache", "prune", "--older-than", "1d"]):
        result = CliRunner().invoke(cli, [*command, "--cache-dir", str(run_dir)])
        assert result.exit_code == 1 and "no cache at" in str(result.exception), (command, result.output)
    assert list(run_dir.iterdir()) == []


def test_explain_finds_what_an_offline_model_stored(natural_plan_data: Path, tmp_path: Path) -> None:
    # The offline models are served by the benchmarks: explain loads them, or the model would be an unknown provider.
    spec = tmp_path / "np.toml"
    spec.write_text(f'benchmark = "natural-plan"\nsplit = "calendar"\nlimit = 1\nstrategies = ["direct"]\n'
                    f'cache_dir = "cache"\n[[models]]\nmodel = "offline:oracle"\n'
                    f'[options]\ndata_dir = "{natural_plan_data}"\n')
    ran = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet", home=tmp_path / "home")
    assert ran.returncode == 0, ran.stderr
    with CacheStore(tmp_path / "cache") as store:
        [(key, entry)] = list(store.entries())
    fields = entry.fields
    assert fields["provider"] == "offline"
    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps({"model": "offline:oracle", "messages": fields["messages"],
                                        "max_tokens": fields["max_tokens"], "stop": fields["stop"],
                                        "temperature": fields["temperature"]}))
    explained = run_cli("cache", "explain", str(request_file), "--cache-dir", str(tmp_path / "cache"))
    assert explained.returncode == 0, explained.stderr
    assert f"key        {key}\nstored     yes\n" in explained.stdout
