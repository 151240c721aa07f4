"""RPM and TPM limits shared by every process using the team database (GCRA on the database's clock): processes
together stay within the limits and reach them; a 429 seen by one pauses all; an unreachable database sends nothing."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from runner.ladder.ratelimit import Limits, RateLimiter
from tests.runner.engine_support import PROJECT_ROOT
from tests.runner.team.limit_worker import KEY

PROCESSES, SECONDS = 4, 4.0


def admitted(logs: list[Path]) -> list[float]:
    return sorted(float(line) for log in logs if log.exists() for line in log.read_text().split())


def most_in_window(times: list[float], window: float) -> int:
    most, start = 0, 0
    for end, instant in enumerate(times):
        while instant - times[start] > window:
            start += 1
        most = max(most, end - start + 1)
    return most


@pytest.mark.parametrize(("rpm", "tpm", "tokens", "per_second"), [
    (600, 0, 100, 10.0),            # requests bound: 10 a second
    (0, 60_000, 250, 4.0),          # tokens bound: 1,000 a second, 250 a call
])
async def test_processes_sharing_limits_stay_within_them_and_reach_them(team_db: str, tmp_path: Path, rpm: int,
                                                                          tpm: int, tokens: int,
                                                                          per_second: float) -> None:
    from runner.team import connect

    connect(team_db).close()
    logs = [tmp_path / f"worker{n}.log" for n in range(PROCESSES)]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    workers = [await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.runner.team.limit_worker", team_db, str(rpm), str(tpm), str(tokens),
        str(SECONDS), str(log), env=env) for log in logs]
    assert [await worker.wait() for worker in workers] == [0] * PROCESSES
    times = admitted(logs)
    burst = max(1.0, per_second)  # the buckets hold a second of rate (RateLimiter's burst_s)
    achieved = (len(times) - 1) / (times[-1] - times[0])
    print(f"\n{PROCESSES} processes sharing {rpm or '-'} RPM / {tpm or '-'} TPM: {len(times)} calls, "
          f"{achieved:.2f}/s against {per_second:.2f}/s allowed; most in any 2 s: {most_in_window(times, 2.0)}")
    # never over the limits, whoever sends (+2: the instants are the workers' own, taken just after the database's)
    assert most_in_window(times, 2.0) <= 2 * per_second + burst + 2
    assert achieved >= 0.85 * per_second  # and not far under them: the processes do not starve each other
    assert achieved <= per_second * 1.05 + burst / (times[-1] - times[0])
    assert all(admitted([log]) for log in logs)  # every process got calls through


async def test_a_429_seen_by_one_process_pauses_the_others(team_db: str) -> None:
    from runner.team import TeamBuckets, connect

    connect(team_db).close()
    one, other = TeamBuckets(team_db), TeamBuckets(team_db)
    limits = {KEY.display: Limits(rpm=6000)}
    try:
        first, second = RateLimiter(limits, shared=one), RateLimiter(limits, shared=other)
        async with second.admit(KEY, 10):
            pass
        first.rate_limited(KEY, 1.5)  # the server said: wait 1.5 s
        await one.aclose()  # the pause is written
        started = time.monotonic()
        async with second.admit(KEY, 10):
            waited = time.monotonic() - started
        assert 1.2 <= waited <= 3.0, waited
    finally:
        await other.aclose()


async def test_limits_on_an_unreachable_database_send_nothing(tmp_path: Path) -> None:
    from runner.team import TeamBuckets, TeamUnavailable

    buckets = TeamBuckets(f"postgresql://tb@/tripbench?host={tmp_path}")
    limiter = RateLimiter({KEY.display: Limits(rpm=60)}, shared=buckets)
    with pytest.raises(TeamUnavailable, match="cannot connect"):
        async with limiter.admit(KEY, 10):
            pytest.fail("admitted without the shared limits")
    await buckets.aclose()
