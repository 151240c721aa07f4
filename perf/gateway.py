"""Gateway overhead: calls/s through gateway + openai SDK + HTTP beside raw SDK calls, and cache-hit latency.

Everything runs against the mock server at zero latency on 127.0.0.1, in this process, so the figures are the
client's own costs. Five measurements in one run, same prompts, same concurrency:

- raw SDK: `AsyncOpenAI.chat.completions.create`, retries off (the baseline);
- the openai provider alone (`providers/openai_chat.py`, no gateway), to tell its cost from the gateway's;
- gateway, cache off: the same calls through `Gateway` (key, spend-cap reservation with a price, token estimate,
  limiter with RPM/TPM set far above the rate, retry wrapper, telemetry callback);
- gateway, cache misses: as above, plus writing each response to a fresh disk cache;
- gateway, cache hits: the last round's requests again, answered from the disk cache, timed one call at a time.

The garbage collector is set as `tripbench run` sets it (runner/engine/gc_tuning.py) for all five alike;
`--python-gc-defaults` measures them at Python's defaults instead.

    python perf/gateway.py                        # 2,000 calls
    python perf/gateway.py --python-gc-defaults   # the same at Python's garbage-collector defaults
    python perf/gateway.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import openai
from _smoke import parse_args

from cache.modes import CacheMode
from cache.store import CacheStore
from providers.interface import ChatRequest, Message
from providers.prices import Price
from providers.registry import resolve_model
from runner.engine.gc_tuning import tune_for_a_run
from runner.ladder.budget import SpendCap
from runner.ladder.calls import CallRecord
from runner.ladder.gateway import Gateway
from runner.ladder.ratelimit import LimitKey, Limits, RateLimiter
from runner.mock_server import serve


def _requests(model: str, size: int, tag: str) -> list[ChatRequest]:
    return [ChatRequest(model, (Message("system", "You are a travel planner."),
                                Message("user", f"{tag}: plan day {i} of a trip from Sarasota to Chicago.")),
                        temperature=0.0, max_tokens=64) for i in range(size)]


async def _timed(calls: list[Callable[[], Awaitable[object]]], concurrency: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process: client and server) to run every call, `concurrency` in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def one(call: Callable[[], Awaitable[object]]) -> None:
        async with gate:
            await call()

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(c) for c in calls))
    return time.perf_counter() - started, time.process_time() - cpu


def _gateway(model: str, cache: CacheStore | None, mode: CacheMode, sink: Callable[[CallRecord], None]) -> Gateway:
    display = LimitKey("openai-compatible", "mock", endpoint=model.partition("@")[2]).display
    limits = {display: Limits(rpm=10_000_000, tpm=10_000_000_000)}
    return Gateway(resolve=resolve_model, cache=cache, mode=mode, spend_cap=SpendCap(1_000.0),
                   limiter=RateLimiter(limits), prices={model: Price(input=0.15, output=0.60)}, on_call=sink)


async def main(size: int, concurrency: int, rounds: int, tuned_gc: bool) -> None:
    server = await serve("127.0.0.1", 0)
    model = f"openai-compatible:mock@{server.openai_base_url}"
    sdk = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="EMPTY", max_retries=0)
    # The engine files each record under its rollout and writes them when the rollout ends; holding every record of
    # the benchmark for its whole length would grow the heap (and the garbage collector's work) as no run does.
    recorded: Counter[bool] = Counter()

    def sink(record: CallRecord) -> None:
        recorded[record.hit] += 1

    def raw(request: ChatRequest) -> Callable[[], Awaitable[object]]:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        return lambda: sdk.chat.completions.create(model="mock", messages=messages,  # type: ignore[arg-type]
                                                   temperature=0.0, max_tokens=64)

    # The three paths run interleaved, round after round, and each keeps its best round: on a shared machine
    # the load drifts over a run, and interleaving exposes every path to the same drift.
    raw_s: list[tuple[float, float]] = []
    provider_s: list[tuple[float, float]] = []
    plain_s: list[tuple[float, float]] = []
    miss_s: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, CacheStore(Path(tmp) / "cache") as store:
        provider = resolve_model(model)
        plain = _gateway(model, None, CacheMode.OFF, sink)
        cached = _gateway(model, store, CacheMode.READWRITE, sink)
        await _timed([raw(r) for r in _requests(model, 50, "warm-up")], concurrency)
        if tuned_gc:  # what `tripbench run` does once set up, for every path alike
            tune_for_a_run()
        for round_ in range(rounds):
            requests = _requests(model, size, f"round {round_}")  # new prompts: every cached call is a miss
            raw_s.append(await _timed([raw(r) for r in requests], concurrency))
            provider_s.append(await _timed([lambda r=r: provider.complete(r) for r in requests], concurrency))
            plain_s.append(await _timed([lambda r=r: plain.complete(r) for r in requests], concurrency))
            miss_s.append(await _timed([lambda r=r: cached.complete(r) for r in requests], concurrency))
        served = server.tally.served
        hit_latencies = []
        for request in requests:
            started = time.perf_counter()
            await cached.complete(request)
            hit_latencies.append(time.perf_counter() - started)
        assert server.tally.served == served, "a cache hit reached the server"
        assert recorded == {False: 2 * rounds * size, True: size}, f"calls recorded: {dict(recorded)}"
        await provider.aclose()  # type: ignore[attr-defined]
        await plain.aclose()
        await cached.aclose()
    await sdk.close()
    await server.close()
    best = {name: (min(w for w, _ in runs), min(c for _, c in runs))
            for name, runs in (("raw openai SDK (baseline)", raw_s), ("openai provider, no gateway", provider_s),
                               ("gateway, cache off", plain_s),
                               ("gateway, cache misses + writes", miss_s))}
    best["gateway, cache hits (sequential)"] = (sum(hit_latencies), sum(hit_latencies))
    raw_wall, raw_cpu = best["raw openai SDK (baseline)"]
    print(f"{size:,} calls per path, best of {rounds} interleaved rounds, concurrency {concurrency}, "
          "mock server at zero latency on 127.0.0.1 (its CPU counts in every path alike), garbage collector "
          + ("as `tripbench run` sets it (runner/engine/gc_tuning.py)" if tuned_gc else "at Python's defaults"))
    print(f"{'path':34} {'calls/s':>9} {'vs raw':>7} {'CPU ms/call':>12} {'vs raw':>7}")
    for name, (wall, cpu) in best.items():
        print(f"{name:34} {size / wall:9,.0f} {raw_wall / wall:6.2f}x {cpu / size * 1e3:12.3f} {cpu / raw_cpu:6.2f}x")
    provider_wall, provider_cpu = best["openai provider, no gateway"]
    plain_wall, plain_cpu = best["gateway, cache off"]
    miss_wall, miss_cpu = best["gateway, cache misses + writes"]
    print(f"over raw SDK calls, CPU per call: provider {provider_cpu / raw_cpu - 1:+.1%}, gateway cache off "
          f"{plain_cpu / raw_cpu - 1:+.1%}, cache misses + writes {miss_cpu / raw_cpu - 1:+.1%} "
          f"(wall: {provider_wall / raw_wall - 1:+.1%}, {plain_wall / raw_wall - 1:+.1%}, "
          f"{miss_wall / raw_wall - 1:+.1%})")
    print(f"the gateway's own share over the provider it wraps (cache off), CPU per call: "
          f"{(plain_cpu - provider_cpu) / size * 1e3:+.3f} ms ({plain_cpu / provider_cpu - 1:+.1%})")
    quantiles = statistics.quantiles(hit_latencies, n=100)
    print(f"cache-hit latency: p50 {quantiles[49] * 1e3:.3f} ms, p95 {quantiles[94] * 1e3:.3f} ms "
          f"(raw SDK: {raw_cpu / size * 1e3:.3f} ms CPU per call)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000, help="calls per measurement")
    parser.add_argument("--concurrency", type=int, default=32, help="calls in flight")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; each path keeps its best")
    parser.add_argument("--python-gc-defaults", action="store_true",
                        help="leave the garbage collector at Python's defaults instead of tripbench run's settings")
    args = parse_args(parser, size=200, rounds=1)
    asyncio.run(main(args.size, args.concurrency, args.rounds, not args.python_gc_defaults))
