"""A local server that says its slots (llama.cpp's `total_slots` in `GET /props`, as the mock server's `slots` says
them): a run's adaptive calls start there instead of learning them from one call up."""

from __future__ import annotations

from pathlib import Path

from runner.mock_server import MockConfig
from runner.mock_server.config import Latency
from tests.runner.engine_support import start_run

LATENCY_S = 1.0


async def arrivals(start_mock_llm, write_spec, tmp_path: Path, slots: int | None) -> list[float]:
    """When the requests of eight one-call rollouts (`tripbench run`, adaptive calls: a local server's default)
    reached a server whose calls take `LATENCY_S` each, `slots` at a time."""
    server = await start_mock_llm(MockConfig(slots=slots, latency=Latency(kind="fixed", seconds=LATENCY_S)))
    spec = write_spec(server.base_url, options={"tasks": 8, "max_calls": 1})
    process = await start_run(spec, tmp_path / "run")
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    return sorted(request.at for request in server.received)


async def test_a_run_sends_as_many_calls_at_once_as_the_server_has_slots(start_mock_llm, write_spec, tmp_path: Path,
                                                                          toy_on_path) -> None:
    arrived = await arrivals(start_mock_llm, write_spec, tmp_path, slots=4)
    assert len(arrived) == 8 and arrived[3] - arrived[0] < LATENCY_S / 2, arrived


async def test_a_server_that_says_nothing_is_learned_from_one_call_up(start_mock_llm, write_spec, tmp_path: Path,
                                                                       toy_on_path) -> None:
    """No `/props` (vLLM's, Ollama's): the first call goes alone, the next ones once it answered."""
    arrived = await arrivals(start_mock_llm, write_spec, tmp_path, slots=None)
    assert len(arrived) == 8 and arrived[1] - arrived[0] >= LATENCY_S, arrived
