"""The two transports side by side: client CPU per call, throughput, and a 1,080-rollout run at 200 ms.

The mock server runs in its own process, so this process's CPU time is the client's alone. Two measurements, each
for `sdk` (the official openai SDK's client) and `aiohttp` in the same run, interleaved and best of `--rounds`:

1. raw calls: `--calls` Chat Completions through the provider (`providers/openai_chat.py`, no gateway) at zero
   latency, `--concurrency` in flight: client CPU per call and calls/s. Goals: <= 0.5 ms of client CPU per call
   with aiohttp, and >= 4x the SDK's throughput;
2. a run: `--rollouts` one-call rollouts through the whole engine (`tripbench run`'s path: gateway, cache, spend cap,
   results store) against the server at `--latency`, `--concurrency` rollouts in flight. Goal: 1,080 rollouts at
   200 ms in <= 3 s wall (the ideal, waves x latency, is printed beside it).

    python perf/transports.py                      # 4,000 calls, 1,080 rollouts, concurrency 256, 3 rounds
    python perf/transports.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from pathlib import Path

from _smoke import parse_args
from engine_throughput import start_mock_server, timed_run, write_spec

from providers.interface import ChatRequest, Message
from providers.registry import resolve_model
from providers.transport import TRANSPORTS
from runner.engine.gc_tuning import tune_for_a_run


async def raw_calls(url: str, transport: str, calls: int, concurrency: int) -> tuple[float, float]:
    """Wall and client CPU seconds for `calls` requests through the provider, `concurrency` in flight."""
    model = resolve_model(f"openai-compatible:perf@{url}/v1", transport=transport, pool_size=concurrency)
    slots = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with slots:
            await model.complete(ChatRequest("perf", (Message("user", f"call {n}: plan a day in Rome"),),
                                             max_tokens=16))

    try:
        await asyncio.gather(*(one(n) for n in range(min(calls, concurrency))))  # warm the pool up
        wall, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(n) for n in range(calls)))
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        await model.aclose()  # type: ignore[attr-defined]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000, help="raw calls per transport and round (default 4000)")
    parser.add_argument("--rollouts", type=int, default=1080, help="rollouts of the engine run (default 1080)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per call in the run (default 0.2)")
    parser.add_argument("--concurrency", type=int, default=256, help="in flight (default 256)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best is kept (default 3)")
    args = parse_args(parser, calls=200, rollouts=50, latency=0.05, concurrency=32, rounds=1)
    tune_for_a_run()
    with tempfile.TemporaryDirectory(prefix="tripbench-perf-") as tmp:
        folder = Path(tmp)
        raw: dict[str, tuple[float, float]] = {}
        server, url = start_mock_server(folder, 0.0)
        try:
            for _ in range(args.rounds):
                for transport in TRANSPORTS:
                    wall, cpu = await raw_calls(url, transport, args.calls, args.concurrency)
                    best = raw.get(transport)
                    raw[transport] = (wall, cpu) if best is None or wall < best[0] else best
        finally:
            server.terminate()
            server.wait()
        print(f"raw calls: {args.calls:,} per transport, zero latency, concurrency {args.concurrency}, "
              f"best of {args.rounds}")
        for transport, (wall, cpu) in raw.items():
            print(f"  {transport:<8} {args.calls / wall:8,.0f} calls/s   "
                  f"client CPU {cpu / args.calls * 1000:6.3f} ms/call")
        ratio = raw["sdk"][0] / raw["aiohttp"][0]
        print(f"  aiohttp / sdk throughput: {ratio:.1f}x (goal >= 4x); aiohttp client CPU goal <= 0.5 ms/call")

        ideal = math.ceil(args.rollouts / args.concurrency) * args.latency
        print(f"run: {args.rollouts:,} one-call rollouts through the engine, {args.latency * 1000:.0f} ms per call, "
              f"concurrency {args.concurrency} (ideal {ideal:.1f} s)")
        server, url = start_mock_server(folder, args.latency)
        runs: dict[str, float] = {}
        try:
            for round_ in range(args.rounds):
                for transport in TRANSPORTS:
                    spec = write_spec(folder, f"openai-compatible:perf@{url}/v1", args.rollouts, 1, args.concurrency,
                                      transport=transport, name=f"{transport}-{round_}")
                    seconds, _ = await timed_run(spec, folder / f"run-{transport}-{round_}")
                    runs[transport] = min(seconds, runs.get(transport, math.inf))
        finally:
            server.terminate()
            server.wait()
        for transport, seconds in runs.items():
            print(f"  {transport:<8} {seconds:6.2f} s wall   {seconds / ideal:5.2f} x ideal")
        print(f"  goal: {args.rollouts:,} rollouts at {args.latency * 1000:.0f} ms in <= 3 s with aiohttp")


if __name__ == "__main__":
    asyncio.run(main())
