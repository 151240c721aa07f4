"""One process of the cap hammer (`test_team_spend_cap.py`): calls through the real `SpendCap` on the team's ledger
until the shared cap refuses, logging every call it "sends" (after its charge is booked) with what the provider bills
for it, so a SIGKILL at any instant leaves a log of what was billed.

    python -m tests.runner.team.cap_worker URL CAP LOG SEED
"""

from __future__ import annotations

import asyncio
import os
import random
import sys

from providers.errors import BudgetExhausted
from runner.ladder.budget import SpendCap
from runner.team import Team

CONCURRENCY = 4
HEARTBEAT_S, STALE_S = 0.2, 1.5


async def main(url: str, cap: float, log_path: str, seed: int) -> None:
    rng = random.Random(seed)
    team = await Team.join(url, heartbeat_s=HEARTBEAT_S, stale_s=STALE_S)
    spend_cap = SpendCap(ledger=await team.ledger("hammer", cap))  # the team's cap decides, not a local one
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    async def caller(number: int) -> None:
        for call in range(10**6):
            worst = rng.uniform(0.05, 0.2)
            try:
                reservation = await spend_cap.reserve(worst, model="toy", cache_key=f"{seed}-{number}-{call}")
            except BudgetExhausted:
                return
            billed = worst * rng.uniform(0.3, 1.0)
            os.write(log, f"{reservation.charge} {billed!r}\n".encode())  # sent: the provider bills it
            await asyncio.sleep(rng.uniform(0.01, 0.06))  # in flight
            if rng.random() < 0.1:
                spend_cap.settle_unknown(reservation)  # a timeout: billed, no answer seen
            else:
                spend_cap.settle(reservation, billed)

    try:
        await asyncio.gather(*(caller(n) for n in range(CONCURRENCY)))
    finally:
        await team.aclose()
        os.close(log)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
