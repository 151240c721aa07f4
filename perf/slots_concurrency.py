"""`concurrency = "auto"` against servers that decode several requests at once: its throughput beside fixed settings.

The mock server is given `slots` (llama.cpp `--parallel N`, vLLM's batch: that many requests worked on at once, the
rest queue) and a fixed latency per request; the same `--calls` one-call rollouts go through the run's gateway (rate
limiter, retry policy, provider over aiohttp; no cache) once per setting, each on a fresh server. Fixed settings past
the slots queue requests inside the server, and with a `--timeout` shorter than that queue they time out and are
retried. Printed per server and setting: wall time, calls answered per second and as a share of the best fixed
setting's (the goal for auto: >= 95 %), attempts that timed out, and (auto) the limit it ended at and its cuts.

    python perf/slots_concurrency.py                  # 120 calls of 0.3 s on 4 and 16 slots, auto vs 4, 16, 64
    python perf/slots_concurrency.py --smoke          # a smoke size: 24 calls of 0.05 s
    python perf/slots_concurrency.py --slots 8 --settings auto,8,32
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass

from _smoke import parse_args
from _timeouts import CountingTimeouts

from providers.errors import LLMError
from providers.interface import ChatRequest, Message
from providers.registry import resolve_model
from runner.ladder.gateway import Gateway, Target
from runner.ladder.ratelimit import Limits, RateLimiter
from runner.ladder.retry import Retrier, RetryPolicy
from runner.mock_server import MockConfig, serve
from runner.mock_server.config import Latency


@dataclass(slots=True)
class Outcome:
    wall_s: float
    answered: int
    timeouts: int
    limit: str


async def one_setting(slots: int, setting: str, calls: int, latency_s: float, timeout_s: float) -> Outcome:
    server = await serve("127.0.0.1", 0, MockConfig(slots=slots, latency=Latency(kind="fixed", seconds=latency_s)))
    string = f"openai-compatible:mock@{server.openai_base_url}"
    counted = CountingTimeouts(resolve_model(string, timeout_s=timeout_s, pool_size=256))
    key = Target.of(string, counted).limit_key
    limits = Limits(adaptive=True, max_concurrency=256) if setting == "auto" else Limits(max_concurrency=int(setting))
    limiter = RateLimiter({key.display: limits})
    gateway = Gateway(resolve=lambda _: counted, limiter=limiter,
                      retrier=Retrier(RetryPolicy(max_attempts=5, base_delay_s=0.2, max_delay_s=1.0)))

    async def call(number: int) -> bool:
        try:
            await gateway.complete(ChatRequest(string, (Message("user", f"rollout {number}: plan a trip"),),
                                               max_tokens=16))
        except LLMError:
            return False
        return True

    started = time.perf_counter()
    answered = sum(await asyncio.gather(*(call(n) for n in range(calls))))
    wall = time.perf_counter() - started
    adaptive = limiter.adaptive_limit(key)
    limit = f"{adaptive.limit:.1f} ({adaptive.cuts} cuts)" if adaptive is not None else "-"
    await gateway.aclose()
    await counted.inner.aclose()  # type: ignore[attr-defined]
    await server.close()
    return Outcome(wall, answered, counted.timeouts, limit)


async def main(slot_counts: list[int], settings: list[str], calls: int, latency_s: float, timeout_s: float) -> None:
    print(f"{calls} one-call rollouts of {latency_s:g} s per setting, request timeout {timeout_s:g} s, "
          f"5 attempts per call")
    await one_setting(1, "1", 1, 0.0, timeout_s)  # the process's one-time costs (imports, the tokenizer) paid here
    for slots in slot_counts:
        ideal = calls / slots * latency_s
        print(f"\nmock server with {slots} slots (ideal {ideal:.1f} s)")
        print(f"{'concurrency':>11} | {'wall s':>6} | {'calls/s':>7} | {'x best fixed':>12} | {'timeouts':>8} | "
              f"auto limit at the end")
        outcomes = {setting: await one_setting(slots, setting, calls, latency_s, timeout_s) for setting in settings}
        best = max((o.answered / o.wall_s for s, o in outcomes.items() if s != "auto"), default=float("nan"))
        for setting, outcome in outcomes.items():
            rate = outcome.answered / outcome.wall_s
            print(f"{setting:>11} | {outcome.wall_s:6.2f} | {rate:7.2f} | {rate / best:12.1%} | "
                  f"{outcome.timeouts:8d} | {outcome.limit}", flush=True)
        if "auto" in outcomes:
            print(f"auto on {slots} slots: {outcomes['auto'].answered / outcomes['auto'].wall_s / best:.1%} of the "
                  f"best fixed setting's throughput (goal >= 95 %), {outcomes['auto'].timeouts} timeouts")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="slots_concurrency.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--slots", default="4,16", help="the servers' slot counts (default: %(default)s)")
    parser.add_argument("--settings", default="auto,4,16,64", help="concurrency settings (default: %(default)s)")
    parser.add_argument("--calls", type=int, default=120, help="one-call rollouts per setting")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds a request takes in its slot")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per request before it times out")
    args = parse_args(parser, calls=24, latency=0.05, timeout=1.0)
    asyncio.run(main([int(n) for n in args.slots.split(",")], args.settings.split(","), args.calls, args.latency,
                     args.timeout))
