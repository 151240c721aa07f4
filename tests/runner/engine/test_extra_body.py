"""A model's `extra_body`: merged into every request it sends, part of each call's cache key and of the run's
identity, checked like any spec field. A real run of the CLI against the mock server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runner.store.results import load_run
from tests.runner.engine_support import run_cli

PRICES = {"input": 1.0, "output": 2.0}


def models(base_url: str, extra_body: dict[str, object] | str) -> list[dict[str, object]]:
    """One model string twice: with `extra_body` (`quiet`) and without it (`plain`)."""
    model = f"openai-compatible:toy@{base_url}/v1"
    return [{"model": model, "name": "quiet", "prices": PRICES, "extra_body": extra_body},
            {"model": model, "name": "plain", "prices": PRICES}]


async def test_extra_body_reaches_the_server_keys_the_cache_and_fixes_the_run(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm()
    quiet = {"enable_thinking": False, "chat_template_kwargs": {"enable_thinking": False}}
    spec = write_spec(server.base_url, models=models(server.base_url, quiet), options={"tasks": 3, "max_calls": 1})
    run_dir = tmp_path / "run"
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(run_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    bodies = [received.body for received in server.received]
    sent = [body for body in bodies if "enable_thinking" in body]
    assert len(bodies) == 6 and len(sent) == 3  # the `plain` entry's requests carry none of it
    assert all(body["enable_thinking"] is False and body["chat_template_kwargs"] == {"enable_thinking": False}
               for body in sent)
    keys: dict[str, set[str | None]] = {"quiet": set(), "plain": set()}
    with load_run(run_dir) as results:
        label = {rollout.id: rollout.key.model for rollout in results.rollouts}
        for call in results.calls():
            keys[label[call.rollout_id]].add(call.call.cache_key)
    assert len(keys["quiet"]) == 3 and not keys["quiet"] & keys["plain"]  # same prompts, other keys

    # another extra_body is another run: not resumed under it
    changed = write_spec(server.base_url, models=models(server.base_url, {"enable_thinking": True}),
                         options={"tasks": 3, "max_calls": 1})
    again = await asyncio.to_thread(run_cli, "run", str(changed), "--run-dir", str(run_dir))
    assert again.returncode != 0 and "extra_body" in again.stderr, again.stdout + again.stderr
    assert len(server.received) == 6


async def test_an_extra_body_that_is_no_table_is_refused_with_its_field(start_mock_llm, write_spec,
                                                                         tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, models=models(server.base_url, "enable_thinking=false"))
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "models[0].extra_body" in done.stderr
