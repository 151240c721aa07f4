"""One process of the shared-limits test (`test_team_limits.py`): as many calls as four tasks can make for a few
seconds through a `RateLimiter` whose RPM/TPM buckets are the team's, logging the instant each was admitted.

    python -m tests.runner.team.limit_worker URL RPM TPM TOKENS SECONDS LOG
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from runner.ladder.ratelimit import LimitKey, Limits, RateLimiter
from runner.team import TeamBuckets

KEY = LimitKey("openai-compatible", "toy", "0123abcd", "http://127.0.0.1:9/v1")


async def main(url: str, rpm: float, tpm: float, tokens: int, seconds: float, log_path: str) -> None:
    buckets = TeamBuckets(url)
    limiter = RateLimiter({KEY.display: Limits(rpm=rpm or None, tpm=tpm or None)}, shared=buckets)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    end = time.time() + seconds

    async def caller() -> None:
        while time.time() < end:
            async with limiter.admit(KEY, tokens):
                os.write(log, f"{time.time()!r}\n".encode())

    try:
        await asyncio.gather(*(caller() for _ in range(4)))
    finally:
        await buckets.aclose()
        os.close(log)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
                     sys.argv[6]))
