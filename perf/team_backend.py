"""The team backend (PostgreSQL) against the embedded one (SQLite, in memory): client CPU per call, the cap's rate.

1. Client CPU per call: the same calls through the real `Gateway` with an instant in-process model, once on the
   embedded path (the disk cache, the spend cap booked in a results store, in-memory RPM/TPM buckets) and once in
   team mode (the team's cache, its spend cap booked in the database and in the results store, its GCRA buckets).
   Misses (each books a charge, takes the buckets, stores an entry), then the same calls again as hits. Printed:
   this process's CPU per call on each path and what team mode adds (the database server's CPU is its own).
2. The cap's calls/s: worker processes reserving and settling through the real `SpendCap` on the team's ledger as
   fast as 8 tasks each can, with 1, 4 and 8 workers; the baseline is one process on the embedded ledger (the
   results store's), measured in the same run. Every reservation is one conditional update of the one budget row.

A throwaway PostgreSQL is started on a Unix socket (tests/postgres_server.py), or `--url-env NAME` names one.

    python perf/team_backend.py                  # 2,000 calls, 5 s per cap measurement: about a minute
    python perf/team_backend.py --smoke          # CI smoke: 100 calls, 0.5 s with 1 and 2 workers, ~20 s
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# `tests.postgres_server` starts the server the test suite uses; the repository root is not on the path of a script.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cache import CacheMode, CacheStore, CallCache  # noqa: E402
from providers.errors import BudgetExhausted  # noqa: E402
from providers.interface import ChatRequest, ChatResponse, Message, Usage  # noqa: E402
from providers.prices import Price  # noqa: E402
from runner.ladder.budget import Ledger, SpendCap  # noqa: E402
from runner.ladder.gateway import Gateway  # noqa: E402
from runner.ladder.ratelimit import LimitKey, Limits, RateLimiter  # noqa: E402
from runner.store.ledger import StoreLedger  # noqa: E402
from runner.store.writer import ResultsStore  # noqa: E402

MODEL = "fake:m"
CONCURRENCY = 8
WORKERS = (1, 4, 8)
SMOKE_WORKERS = (1, 2)
"""The smoke run's worker counts: starting eight interpreters alone takes a loaded 2-core machine most of a minute."""
ROUNDS = 2


class _Instant:
    """A model answering at once, billed like a small real call."""

    provider, model, endpoint = "fake", "m", None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(f"answer to {request.messages[-1].content}", "stop", Usage(50, 20))


async def _open_store(folder: Path) -> tuple[ResultsStore, StoreLedger]:
    store = await ResultsStore.open(folder)
    session = await store.start_session({}, "perf", "perf", {})
    return store, StoreLedger(store, session)


async def _calls_cpu(url: str | None, size: int, folder: Path) -> tuple[float, float]:
    """CPU seconds per call of this process, misses then hits, on the embedded path (`url` None) or the team's."""
    store, local = await _open_store(folder / "run")
    team = None
    ledger: Ledger = local
    cache: CallCache
    if url is None:
        cache, shared = CacheStore(folder / "cache"), None
    else:
        from runner.team import Team, TeamCache

        team = await Team.join(url)
        cache, shared, ledger = TeamCache(url), team.buckets, await team.ledger("perf", 1e9, local=local)
    key = LimitKey("fake", "m")
    gateway = Gateway(resolve=lambda _: _Instant(), cache=cache, mode=CacheMode.READWRITE,
                      spend_cap=SpendCap(1e9, ledger=ledger), prices={MODEL: Price(input=0.15, output=0.60)},
                      limiter=RateLimiter({key.display: Limits(rpm=10**9, tpm=10**12)}, shared=shared))
    requests = [ChatRequest(MODEL, (Message("user", f"question {n} of {folder.name}"),), max_tokens=64)
                for n in range(size)]
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(request: ChatRequest) -> None:
        async with gate:
            await gateway.complete(request)

    per_call = []
    try:
        for _ in ("misses", "hits"):
            cpu = time.process_time()
            await asyncio.gather(*(one(request) for request in requests))
            per_call.append((time.process_time() - cpu) / size)
    finally:
        await gateway.aclose()
        if team is not None:
            await team.aclose()
        await local.aclose()
        cache.close()
        await store.close()
    return per_call[0], per_call[1]


async def _reserve_loop(spend_cap: SpendCap, seconds: float) -> int:
    """Reservations settled by `CONCURRENCY` tasks in `seconds`."""
    end, done = time.monotonic() + seconds, 0

    async def task() -> None:
        nonlocal done
        while time.monotonic() < end:
            try:
                reservation = await spend_cap.reserve(0.001, model=MODEL, cache_key=None)
            except BudgetExhausted:
                return
            spend_cap.settle(reservation, 0.0005)
            done += 1

    await asyncio.gather(*(task() for _ in range(CONCURRENCY)))
    return done


async def _embedded_cap(seconds: float, folder: Path) -> float:
    store, ledger = await _open_store(folder)
    try:
        done = await _reserve_loop(SpendCap(1e9, ledger=ledger), seconds)
    finally:
        await ledger.aclose()
        await store.close()
    return done / seconds


async def _worker(url: str, seconds: float, go: Path) -> None:
    """One worker process of the cap measurement: waits for `go`, then prints its reservations in `seconds`."""
    from runner.team import Team

    team = await Team.join(url)
    spend_cap = SpendCap(ledger=await team.ledger("perf-cap", 1e9))
    print("ready", flush=True)
    while not go.exists():
        await asyncio.sleep(0.01)
    try:
        print(await _reserve_loop(spend_cap, seconds), flush=True)
    finally:
        await team.aclose()


def _team_cap(url: str, workers: int, seconds: float, folder: Path) -> float:
    """Calls/s of `workers` processes on the team's cap, all started before the clock does."""
    go = folder / f"go-{workers}"
    processes = [subprocess.Popen([sys.executable, __file__, "--worker", url, str(seconds), str(go)],
                                  stdout=subprocess.PIPE, text=True) for _ in range(workers)]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    go.touch()
    counts = []
    for process in processes:
        output, _ = process.communicate(timeout=seconds + 120)
        counts.append(int(output.split()[-1]))
    return sum(counts) / seconds


async def _cpu_figures(url: str, size: int, folder: Path) -> None:
    """Two interleaved rounds of each path (fresh caches each), the best of each kept: the first round warms up."""
    runs: dict[str, list[tuple[float, float]]] = {"embedded": [], "team": []}
    for round_ in range(ROUNDS):
        for path in runs:
            runs[path].append(await _calls_cpu(url if path == "team" else None, size, folder / f"{path}{round_}"))
    embedded, team = (tuple(min(run[i] for run in runs[path]) for i in (0, 1)) for path in ("embedded", "team"))
    added = ((team[0] - embedded[0]) * 1e3, (team[1] - embedded[1]) * 1e3)
    print(f"client CPU per call over {size:,} calls, {CONCURRENCY} in flight, best of {ROUNDS} (misses / hits):")
    print(f"  embedded (SQLite, in memory): {embedded[0] * 1e3:.2f} / {embedded[1] * 1e3:.2f} ms (baseline)")
    print(f"  team (PostgreSQL):            {team[0] * 1e3:.2f} / {team[1] * 1e3:.2f} ms: {added[0]:+.2f} / "
          f"{added[1]:+.2f} ms a call, x{team[0] / embedded[0]:.1f} / x{team[1] / embedded[1]:.1f}")


def main(size: int, seconds: float, workers_counts: tuple[int, ...], url_env: str | None) -> None:
    server = None
    if url_env is not None:
        url = os.environ[url_env]
    else:
        from tests.postgres_server import PostgresServer, server_binaries

        binaries = server_binaries()
        if binaries is None:
            sys.exit("PostgreSQL's server programs (initdb, pg_ctl) not found: apt-get install postgresql")
        server = PostgresServer(binaries)
        url = server.url
    try:
        with tempfile.TemporaryDirectory() as temporary:
            folder = Path(temporary)
            asyncio.run(_cpu_figures(url, size, folder))
            baseline = asyncio.run(_embedded_cap(seconds, folder / "cap"))
            print(f"the spend cap's reservations per second, {CONCURRENCY} tasks a process, {seconds:g} s each:")
            print(f"  embedded ledger, 1 process:   {baseline:,.0f}/s (baseline)")
            for workers in workers_counts:
                rate = _team_cap(url, workers, seconds, folder)
                print(f"  team ledger, {workers} process{'es' if workers > 1 else '  '}: {rate:,.0f}/s "
                      f"(x{rate / baseline:.2f} the baseline)")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        asyncio.run(_worker(sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])))
        sys.exit(0)
    parser = argparse.ArgumentParser(prog="team_backend.py", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000, help="calls per CPU measurement")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per cap measurement")
    parser.add_argument("--smoke", action="store_true", help="CI smoke: --size 100 --seconds 0.5, 1 and 2 workers")
    parser.add_argument("--url-env", help="the variable holding a PostgreSQL URL (default: start a throwaway one)")
    args = parser.parse_args()
    main(100 if args.smoke else args.size, 0.5 if args.smoke else args.seconds,
         SMOKE_WORKERS if args.smoke else WORKERS, args.url_env)
