"""No secret is ever written: canary credentials in base URLs and API-key variables reach the server and nothing else.

A real run of the CLI against the mock server, with a password and a key in the URLs of two models (one through the
SDK, one over aiohttp) and keys in environment variables; then `status`, `report`, `cache stats` and `cache explain`.
Every file they wrote (SQLite stores, cache entries, reports, CSVs, outputs, folder names) and everything they
printed is searched for the canaries, bytes and all.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from providers.keys import key_digest
from runner.store.results import load_run
from tests.runner.conftest import spec_text
from tests.runner.engine_support import run_cli

PASSWORD = "CANARYPASS123"
QUERY_KEY = "CANARYQKEY456"
ENV_KEYS = {"TOY_KEY_A": "sk-canary-ENVKEY-a1b2c3d4e5", "TOY_KEY_B": "CANARYENV-B-778899"}
CANARIES = [PASSWORD, QUERY_KEY, *ENV_KEYS.values()]


def secret_models(server, password: str = PASSWORD) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    host = server.base_url.removeprefix("http://")
    url = f"http://canaryuser:{password}@{host}/v1?api_key={QUERY_KEY}&mode=fast"
    prices = {"input": 1.0, "output": 2.0}
    return [
        {"model": f"openai-compatible:toy@{url}", "api_key_env": "TOY_KEY_A", "prices": prices},  # aiohttp
        {"model": "openai:toy", "base_url": url, "api_key_env": "TOY_KEY_B", "prices": prices,
         "transport": "sdk", "name": "toy-sdk"},
    ]


def leaks(root: Path, *outputs: str, canaries: list[str] = CANARIES) -> list[str]:
    """Canaries in `outputs` or in any file under `root` but the user's own run specs."""
    found = [f"output: {canary}" for canary in canaries for text in outputs if canary in text]
    for path in root.rglob("*"):
        if path.suffix == ".toml" and path.parent == root:
            continue
        found += [f"{path}: in its name" for canary in canaries if canary in path.name]
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {canary}" for canary in canaries if canary.encode() in data]
    return found


async def test_canary_credentials_reach_the_server_and_are_written_nowhere(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_mock_llm()
    for name, value in ENV_KEYS.items():
        monkeypatch.setenv(name, value)
    spec = write_spec(server.base_url, models=secret_models(server), max_cost=5.0, options={"tasks": 8, "max_calls": 3})
    run_dir = tmp_path / "run"
    outputs = []
    for args in (["run", str(spec), "--run-dir", str(run_dir)], ["status", str(run_dir)], ["report", str(run_dir)],
                 ["cache", "stats", "--cache-dir", str(tmp_path / "cache")],
                 ["run", str(spec), "--run-dir", str(run_dir), "--dry-run"]):
        done = await asyncio.to_thread(run_cli, *args)
        assert done.returncode == 0, done.stdout + done.stderr
        outputs += [done.stdout, done.stderr]
    with load_run(run_dir) as results:
        keys = {call.call.cache_key for call in results.calls()}
        assert len(results.rollouts) == 16 and {r.key.model for r in results.rollouts} == {
            f"openai-compatible:toy@{server.base_url}/v1?mode=fast", "toy-sdk"}
    done = await asyncio.to_thread(run_cli, "cache", "explain", "--key", sorted(keys)[0], "--cache-dir",
                                   str(tmp_path / "cache"))
    assert done.returncode == 0 and "mode=fast" in done.stdout, done.stdout + done.stderr
    assert leaks(tmp_path, *outputs, done.stdout, done.stderr) == []
    files = sum(path.is_file() for path in tmp_path.rglob("*"))
    print(f"\ncanary grep: {len(CANARIES)} canaries, {files} files and {len(outputs) + 2} outputs searched: 0 hits")

    # The credentials did reach the server: Basic auth from the URL's userinfo, the URL's query key.
    received = server.received
    assert received and all(r.query == {"api_key": QUERY_KEY, "mode": "fast"} for r in received)
    assert {r.key_digest for r in received} == {key_digest(f"canaryuser:{PASSWORD}")}

    # A new password is the same server: the run's cache answers all of it.
    served = server.tally.served
    rotated = write_spec(server.base_url, name="rotated.toml", models=secret_models(server, "NEWPASS999"),
                         options={"tasks": 8, "max_calls": 3})
    done = await asyncio.to_thread(run_cli, "run", str(rotated), "--run-dir", str(tmp_path / "rotated"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.tally.served == served


def test_a_key_pasted_into_a_spec_is_not_echoed_by_its_error(tmp_path: Path, toy_on_path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI prints every error through `errors.redaction`: a field's value that is a secret variable's is shown
    as `[redacted]`, wherever the message came from."""
    key = ENV_KEYS["TOY_KEY_A"]
    monkeypatch.setenv("TOY_API_KEY", key)  # a name that says it holds a secret (..._KEY)
    spec = tmp_path / "run.toml"
    spec.write_text(spec_text("http://127.0.0.1:9", strategies=[key]), encoding="utf-8")
    done = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 2 and "strategies[0]: expected one of" in done.stderr, done.stderr
    assert "got '[redacted]'" in done.stderr, done.stderr
    assert leaks(tmp_path, done.stdout, done.stderr) == []
