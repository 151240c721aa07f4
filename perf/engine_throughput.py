"""Runner throughput: N rollouts x 30 calls at a fixed latency, then the same run replayed from the cache.

Four measurements, each printed beside the ideal `calls x latency / concurrency` (what a runner with zero
overhead would take):

0. `bare asyncio`: the strategy over the sleeping provider under one semaphore, no engine at all: the baseline
   this machine can do;
1. `in-process model`: the engine, gateway, cache and results store with that provider (no HTTP): the engine's
   and gateway's own overhead;
2. `raw openai SDK`: the strategy's calls through `AsyncOpenAI` alone to the mock server, running in its own
   process, `concurrency` rollouts at a time: what the SDK itself can do on this machine (the ceiling of run 3);
3. `mock server + SDK`: the engine through the real OpenAI SDK over HTTP to the same server (the production path);
4. `cache replay`: run 3 (run 1 with `--no-sdk`) again in a fresh run dir: every call a cache hit, nothing sent.

Peak RSS of this process (all runs) is printed at the end. Goals: runs 1 and 3 within 10 % of the ideal; 30,000
cached calls in <= 60 s; peak RSS <= 1 GB. On a small machine the SDK's own CPU per call (about 2.6 ms at 256 in
flight on 2 cores) caps run 2, hence run 3, far below the ideal rate: run 3 is then judged against run 2.

    python perf/engine_throughput.py                    # 1,000 rollouts x 30 calls, 200 ms, concurrency 256
    python perf/engine_throughput.py --smoke   # a smoke size (seconds; CI runs it)
    python perf/engine_throughput.py --transport aiohttp  # runs 2 and 3 without the SDK's client
"""

from __future__ import annotations

import argparse
import asyncio
import math
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import openai
from _smoke import parse_args
from pydantic import BaseModel, ConfigDict

from benchmarks.base import DELIVERED, Benchmark, Evaluation, RolloutResult, Task
from providers.interface import ChatRequest, ChatResponse, Message, Usage
from providers.registry import ProviderRegistry
from runner.engine.execute import execute
from runner.engine.gc_tuning import tune_for_a_run
from runner.engine.prepared import prepare

CALLS = 30


class PerfOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    tasks: int = 1000
    calls: int = CALLS


class FixedCalls:
    """Makes exactly `calls` short calls, one after another (an agent loop without tools)."""

    name = "fixed"
    description = "exactly `calls` short calls, one after another"

    def __init__(self, calls: int) -> None:
        self.calls = calls

    async def __call__(self, task: Task, model: Any, tools: Any) -> RolloutResult:
        text = ""
        for step in range(self.calls):
            prompt = f"task {task.id} step {step}: {text[-40:]}"
            text = (await model.complete(ChatRequest(model="", messages=(Message("user", prompt),),
                                                     max_tokens=16))).text
        return RolloutResult(DELIVERED, answer=text)


class PerfBenchmark(Benchmark):
    """Tasks with nothing in them; the work is all LLM calls."""

    name = "perf"
    options_model = PerfOptions
    statuses: Mapping[str, str] = {}

    def load_tasks(self, split: str | Path, options: BaseModel) -> Sequence[Task]:
        assert isinstance(options, PerfOptions)
        return [Task(str(n), {}) for n in range(options.tasks)]

    def strategies(self, options: BaseModel) -> Sequence[Any]:
        assert isinstance(options, PerfOptions)
        return [FixedCalls(options.calls)]

    def open_tools(self, options: BaseModel) -> None:
        return None

    def evaluate(self, tasks: Sequence[Task], results: Sequence[RolloutResult], mode: str,
                 options: BaseModel) -> list[Evaluation | None]:
        return [None] * len(tasks)

    def submission(self, tasks: Sequence[Task], results: Sequence[RolloutResult]) -> Iterable[Mapping[str, Any]]:
        return ({"task": t.id, "answer": r.answer} for t, r in zip(tasks, results, strict=True))


class SleepingModel:
    """A provider that answers after `latency_s`, with no I/O at all."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    async def complete(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(self.latency_s)
        return ChatResponse(f"ok {len(request.messages[-1].content)}", "stop", Usage(20, 0, 3))


def write_spec(folder: Path, model: str, tasks: int, calls: int, concurrency: int, *, transport: str = "sdk",
               name: str | None = None) -> Path:
    """A spec of the perf benchmark in `folder`, named `name` (default: the model's provider), with its own cache."""
    name = name or model.split(":")[0]
    spec = folder / f"{name}.toml"
    spec.write_text(f"""benchmark = "{__name__}:PerfBenchmark"
split = "perf"
strategies = ["fixed"]
concurrency = {concurrency}
cache_dir = "cache-{name}"
evaluate = []

[[models]]
model = "{model}"
name = "perf"
transport = "{transport}"
concurrency = {concurrency}  # fixed: what is measured is the engine at this concurrency, not "auto" finding one

[options]
tasks = {tasks}
calls = {calls}
""", encoding="utf-8")
    return spec


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_mock_server(folder: Path, latency_s: float) -> tuple[subprocess.Popen[bytes], str]:
    """The mock server in its own process, so its CPU does not count against the runner's."""
    config = folder / "mock.toml"
    config.write_text(f'[latency]\nkind = "fixed"\nseconds = {latency_s}\n', encoding="utf-8")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", "from runner.cli.main import main; main()", "mock-server",
                               "--port", str(port), "--config", str(config)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(f"{url}/health", timeout=1).close()
            return server, url
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the mock server did not start")


async def bare_asyncio(tasks: int, calls: int, latency_s: float, concurrency: int) -> float:
    """The strategy alone over the sleeping provider, `concurrency` at a time: no gateway, cache or store."""
    slots = asyncio.Semaphore(concurrency)
    model = SleepingModel(latency_s)
    strategy = FixedCalls(calls)

    async def one(n: int) -> None:
        async with slots:
            await strategy(Task(str(n), {}), model, None)

    started = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(tasks)))
    return time.perf_counter() - started


async def raw_sdk(url: str, tasks: int, calls: int, concurrency: int) -> float:
    """The strategy's calls through `AsyncOpenAI` alone (no engine), `concurrency` rollouts at a time."""
    client = openai.AsyncOpenAI(api_key="perf", base_url=f"{url}/v1", max_retries=0)
    slots = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with slots:
            text = ""
            for step in range(calls):
                completion = await client.chat.completions.create(
                    model="perf", messages=[{"role": "user", "content": f"raw {n} step {step}: {text[-40:]}"}],
                    max_tokens=16)
                text = completion.choices[0].message.content or ""

    started = time.perf_counter()
    try:
        await asyncio.gather(*(one(n) for n in range(tasks)))
    finally:
        await client.close()
    return time.perf_counter() - started


async def timed_run(spec: Path, run_dir: Path, providers: ProviderRegistry | None = None) -> tuple[float, int]:
    prepared = prepare(spec, providers=providers)
    started = time.perf_counter()
    report = await execute(prepared, run_dir, show_progress=False)
    elapsed = time.perf_counter() - started
    assert report.statuses == {DELIVERED: len(prepared.keys)}, report.statuses
    return elapsed, len(prepared.keys)


def line(label: str, seconds: float, calls: int, ideal: float | None) -> None:
    versus = f"  {seconds / ideal:5.2f} x ideal ({ideal:.1f} s)" if ideal else ""
    print(f"{label:<28} {seconds:8.1f} s  {calls / seconds:9,.0f} calls/s{versus}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="rollouts (default 1000)")
    parser.add_argument("--calls", type=int, default=CALLS, help="calls per rollout (default 30)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per call (default 0.2)")
    parser.add_argument("--concurrency", type=int, default=256, help="rollouts in flight (default 256)")
    parser.add_argument("--transport", choices=["sdk", "aiohttp"], default="sdk",
                        help="how run 3 sends its requests (default sdk; perf/transports.py compares them)")
    parser.add_argument("--no-sdk", action="store_true",
                        help="skip the mock-server run (minutes on a small machine); replay the in-process run")
    args = parse_args(parser, size=10, calls=3, latency=0.01, concurrency=8)
    calls = args.size * args.calls
    # calls x latency / concurrency, counted in whole waves of rollouts (equal when concurrency divides the size)
    ideal = math.ceil(args.size / args.concurrency) * args.calls * args.latency
    print(f"{args.size} rollouts x {args.calls} calls = {calls:,} calls, {args.latency * 1000:.0f} ms each, "
          f"concurrency {args.concurrency}")
    tune_for_a_run()  # as `tripbench run` does once set up (every run below alike)
    line("bare asyncio (baseline)", await bare_asyncio(args.size, args.calls, args.latency, args.concurrency), calls,
         ideal)
    with tempfile.TemporaryDirectory(prefix="tripbench-perf-") as tmp:
        folder = Path(tmp)
        spec = write_spec(folder, "sleep:perf", args.size, args.calls, args.concurrency)
        sleeping = ProviderRegistry({"sleep": lambda name: SleepingModel(args.latency)})
        seconds, _ = await timed_run(spec, folder / "sleep-run", sleeping)
        line("in-process model", seconds, calls, ideal)

        if not args.no_sdk:
            server, url = start_mock_server(folder, args.latency)
            try:
                raw = await raw_sdk(url, args.size, args.calls, args.concurrency)
                line("raw openai SDK (ceiling)", raw, calls, ideal)
                spec = write_spec(folder, f"openai-compatible:perf@{url}/v1", args.size, args.calls, args.concurrency,
                                  transport=args.transport)
                seconds, _ = await timed_run(spec, folder / "sdk-run")
                line("mock server + SDK", seconds, calls, ideal)
                print(f"{'':<28} {seconds / raw - 1:+.1%} wall over the raw SDK at the same concurrency")
            finally:
                server.terminate()
                server.wait()
        seconds, _ = await timed_run(spec, folder / "replay-run", sleeping)
        line("cache replay (all hits)", seconds, calls, None)
        print(f"{'':<28} goal: 30,000 cached calls <= 60 s -> {30_000 / (calls / seconds):.1f} s at this rate")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:,.0f} MB (goal <= 1,024 MB)")


if __name__ == "__main__":
    asyncio.run(main())
