"""Client-side limits against a server enforcing the same RPM/TPM: a burst of calls, zero 429s, rate achieved.

The mock server enforces per-key RPM and TPM buckets (runner/mock_server/ratelimits.py) and answers at zero
latency; the gateway's limiter is given the very same numbers. All calls are launched at once, through the real
openai SDK over HTTP. Printed: the server's 429 count (the goal is 0), the rate achieved from the first to the
last request leaving the gateway, as a fraction of the allowed rate (the goal is >= 95 %), and the billed tokens
the gateway recorded beside the server's own tally (they must be equal). The same burst without a client
limiter is the baseline: it shows what the server does to an unpaced client.

    python perf/gateway_limits.py                 # 2,000 calls at RPM 600 / TPM 100k: about 200 s
    python perf/gateway_limits.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import asyncio
import time

from _smoke import parse_args

from providers.interface import ChatRequest, ChatResponse, Message
from providers.registry import resolve_model
from runner.ladder.calls import CallRecord
from runner.ladder.gateway import Gateway, Target
from runner.ladder.ratelimit import Limits, RateLimiter
from runner.ladder.retry import Retrier, RetryPolicy
from runner.mock_server import MockConfig, serve


class _Stamped:
    """The real provider, noting when each request leaves the gateway."""

    def __init__(self, model: str) -> None:
        self.inner = resolve_model(model)
        self.provider, self.model, self.endpoint = self.inner.provider, self.inner.model, self.inner.endpoint  # type: ignore[attr-defined]
        self.sent: list[float] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.sent.append(time.monotonic())
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        await self.inner.aclose()  # type: ignore[attr-defined]


async def _burst(size: int, rpm: int, tpm: int, *, limited: bool, burst_s: float) -> dict[str, float]:
    server = await serve("127.0.0.1", 0, MockConfig(rpm=rpm, tpm=tpm))
    model = f"openai-compatible:mock@{server.openai_base_url}"
    provider = _Stamped(model)
    records: list[CallRecord] = []
    limits = {Target.of(model, provider).limit_key.display: Limits(rpm=rpm, tpm=tpm)}
    limiter = RateLimiter(limits, burst_s=burst_s) if limited else RateLimiter()
    gateway = Gateway(resolve=lambda _: provider, limiter=limiter, on_call=records.append,
                      retrier=Retrier(RetryPolicy(max_attempts=50, max_retry_after_s=600)))
    requests = [ChatRequest(model, (Message("user", f"call {i}: plan a weekend in Chicago"),), max_tokens=64)
                for i in range(size)]
    started = time.monotonic()
    await asyncio.gather(*(gateway.complete(r) for r in requests))
    elapsed = time.monotonic() - started
    tally = server.tally
    recorded = sum(r.usage.input_tokens + r.usage.output_tokens for r in records)
    await gateway.aclose()
    await server.close()
    span = provider.sent[-1] - provider.sent[0]
    return {"429s": tally.rate_limited, "requests": tally.requests, "elapsed": elapsed,
            "rate": (len(provider.sent) - 1) / span if span > 0 else float("inf"),
            "recorded": recorded, "billed": tally.input_tokens + tally.output_tokens,
            "tokens_per_call": recorded / size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000, help="calls in the burst")
    parser.add_argument("--rpm", type=int, default=600, help="requests per minute (server and client)")
    parser.add_argument("--tpm", type=int, default=100_000, help="tokens per minute (server and client)")
    parser.add_argument("--burst-s", type=float, default=1.0,
                        help="client bucket depth in seconds of rate (the mock server's buckets hold 60)")
    args = parse_args(parser, size=40, rpm=1200, tpm=200_000)
    for limited in (False, True):
        r = asyncio.run(_burst(args.size, args.rpm, args.tpm, limited=limited, burst_s=args.burst_s))
        # The allowed rate: requests/s under RPM, or under TPM at this workload's billed tokens per call.
        allowed = min(args.rpm / 60, args.tpm / 60 / r["tokens_per_call"])
        name = (f"gateway limiter at the server's limits, {args.burst_s:g} s burst" if limited
                else "no client limiter (baseline)")
        print(f"{name}: {args.size:,} calls in {r['elapsed']:.1f} s, {r['requests']:,} HTTP requests, "
              f"{r['429s']:,} server 429s")
        print(f"  rate {r['rate']:.2f} requests/s leaving the gateway = {r['rate'] / allowed:.1%} of the allowed "
              f"{allowed:.2f}/s (RPM {args.rpm}, TPM {args.tpm:,} at {r['tokens_per_call']:.0f} tokens/call)")
        print(f"  tokens recorded {r['recorded']:,} vs server tally {r['billed']:,}: "
              f"{'equal' if r['recorded'] == r['billed'] else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
