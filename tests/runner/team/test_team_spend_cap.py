"""One spend cap for every process sharing the team database, decided inside it, across SIGKILLs.

The cap hammer: worker processes (`cap_worker.py`) call through the real `SpendCap` on the team's ledger, some are
SIGKILLed mid-call; what the provider billed (every call sent, from the workers' logs) never passes the cap, and the
ledger adds up: the budget row equals its charges, every billed call is booked, nothing stays reserved once the dead
are declared dead.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from providers.errors import BudgetExhausted
from tests.runner.engine_support import PROJECT_ROOT
from tests.runner.team.cap_worker import STALE_S

CAP = 30.0
WORKERS, KILLED = 6, 3

try:  # the `postgres` fixture says when it is missing (skipped with one summary line, or failed in CI)
    import psycopg
except ImportError:
    psycopg = None


def ledger(url: str, budget: str) -> dict[str, Decimal]:
    """The budget row beside what its charges add up to."""
    with psycopg.connect(url, autocommit=True) as connection:
        spent, reserved = connection.execute("SELECT spent, reserved FROM tb_budget WHERE name = %s",
                                             (budget,)).fetchone()
        sums = connection.execute(
            "SELECT coalesce(sum(cost) FILTER (WHERE state = 'settled'), 0), "
            "coalesce(sum(reserved) FILTER (WHERE state = 'orphaned'), 0), "
            "coalesce(sum(reserved) FILTER (WHERE state = 'open'), 0), count(*) FILTER (WHERE state = 'orphaned') "
            "FROM tb_charge WHERE budget = %s", (budget,)).fetchone()
    return {"spent": spent, "reserved": reserved, "settled": sums[0], "orphaned": sums[1], "open": sums[2],
            "orphans": Decimal(sums[3])}


def billed(logs: list[Path]) -> dict[int, float]:
    """Charge id -> what the provider billed, over every worker's log (a line cut by a kill is not a call)."""
    calls = {}
    for log in logs:
        for line in log.read_text().splitlines():
            charge, _, cost = line.partition(" ")
            if cost:
                calls[int(charge)] = float(cost)
    return calls


async def test_the_shared_cap_holds_across_processes_killed_mid_call(team_db: str, tmp_path: Path) -> None:
    from runner.team import connect

    connect(team_db).close()  # the schema, before the workers race for it
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    logs = [tmp_path / f"worker{n}.log" for n in range(WORKERS)]
    workers = [await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.runner.team.cap_worker", team_db, str(CAP), str(log), str(n), env=env)
        for n, log in enumerate(logs)]
    for worker, log in list(zip(workers, logs, strict=True))[:KILLED]:  # each killed once it has calls in flight
        while worker.returncode is None and (not log.exists() or log.read_text().count("\n") < 5):
            await asyncio.sleep(0.01)
        worker.send_signal(signal.SIGKILL)
    codes = [await worker.wait() for worker in workers]
    assert codes[:KILLED] == [-signal.SIGKILL] * KILLED and codes[KILLED:] == [0] * (WORKERS - KILLED)

    await asyncio.sleep(STALE_S + 0.5)  # the killed workers are stale by now: whoever looks declares them dead
    with psycopg.connect(team_db, autocommit=True) as connection:
        connection.execute("SELECT tb_reap(make_interval(secs => %s::float8))", (STALE_S,))
    calls = billed(logs)
    book = ledger(team_db, "hammer")
    total = sum(calls.values())
    print(f"\nteam cap ${CAP:.2f}, {WORKERS} processes, {KILLED} SIGKILLed mid-call: {len(calls)} calls billed "
          f"${total:.4f}; the ledger books ${book['spent']:.4f} spent ({book['orphans']} charges at their worst case)")
    assert total <= CAP, f"the provider billed ${total:.4f} under a ${CAP} cap"
    assert total > CAP * 0.6  # the cap was used, not respected by refusing early
    assert book["spent"] >= Decimal(repr(total)) - Decimal("1e-9"), "the ledger forgot money the provider billed"
    assert book["spent"] <= Decimal(repr(CAP))
    assert book["reserved"] == book["open"] == 0  # the dead hold nothing back
    assert book["spent"] == book["settled"] + book["orphaned"]  # the row is its charges
    assert book["orphans"] >= KILLED  # each killed worker had calls in flight, counted at their worst case


async def test_a_reservation_waits_for_another_process_to_settle_and_is_refused_at_the_cap(team_db: str) -> None:
    from runner.team import Team, connect

    connect(team_db).close()
    one, other = await Team.join(team_db), await Team.join(team_db)
    try:
        first, second = await one.ledger("night", 1.0), await other.ledger("night", 1.0)
        held = await first.open(0.8, model="m", cache_key="a")
        waiting = asyncio.ensure_future(second.open(0.5, model="m", cache_key="b"))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # 0.8 + 0.5 does not fit while the 0.8 may come back
        first.settle(held, 0.3)
        await asyncio.wait_for(waiting, 5)  # 0.3 + 0.5 fits
        second.settle(waiting.result(), 0.5)
        with pytest.raises(BudgetExhausted, match="team spend cap"):
            await asyncio.wait_for(first.open(0.5, model="m", cache_key="c"), 5)  # 0.8 spent, nothing open
    finally:
        await one.aclose()
        await other.aclose()
    book = ledger(team_db, "night")
    assert (book["spent"], book["reserved"]) == (Decimal("0.8"), 0)


DIES_MID_CALL = """
import asyncio, sys
from runner.team import Team
async def main():
    team = await Team.join(sys.argv[1], stale_s=1.0)
    await (await team.ledger("night", 10.0)).open(2.0, model="m", cache_key=sys.argv[2])
    print("booked", flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


async def test_a_dead_workers_charge_is_settled_from_the_answer_the_cache_holds(team_db: str) -> None:
    from runner.team import Team, TeamCache
    from tests.cache.test_cache_store import ask, entry_for

    key, entry = entry_for(ask("hello"), cost=0.125)
    cache = TeamCache(team_db)
    dying = await asyncio.create_subprocess_exec(sys.executable, "-c", DIES_MID_CALL, team_db, key,
                                                 stdout=asyncio.subprocess.PIPE,
                                                 env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    alive = await Team.join(team_db, stale_s=1.0)
    try:
        assert dying.stdout is not None and await dying.stdout.readline() == b"booked\n"
        dying.send_signal(signal.SIGKILL)
        await dying.wait()
        assert ledger(team_db, "night")["reserved"] == Decimal("2.0")  # held while it may still be alive
        await asyncio.sleep(1.5)  # the live worker's heartbeats declare the silent one dead
        book = ledger(team_db, "night")
        assert (book["spent"], book["reserved"]) == (Decimal("2.0"), 0)  # billed perhaps, unseen: its worst case
        cache.set_many({key: entry})  # its answer reached the cache (before it died, or from another process)
        await alive.worker.reap()
        assert ledger(team_db, "night")["spent"] == Decimal("0.125")
    finally:
        cache.close()
        await alive.aclose()


async def test_a_worker_whose_connections_were_dropped_stays_alive_and_books_again(team_db: str) -> None:
    from runner.team import Team

    team = await Team.join(team_db, stale_s=1.5)
    try:
        night = await team.ledger("night", 10.0)
        night.settle(await night.open(0.1, model="m", cache_key="a"), 0.1)
        await asyncio.sleep(0.3)  # settled (its connection stays open)
        with psycopg.connect(team_db, autocommit=True) as admin:  # the server drops every other connection
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        observer = await Team.join(team_db, stale_s=1.5)  # its heartbeats declare a silent worker dead
        await asyncio.sleep(2.5)  # past stale_s: the first's heartbeat found a new connection in time
        night.settle(await night.open(0.1, model="m", cache_key="b"), 0.05)  # on a new connection, not refused
        await night.aclose()
        with psycopg.connect(team_db, autocommit=True) as connection:
            assert connection.execute("SELECT alive FROM tb_worker").fetchall() == [(True,), (True,)]
            assert connection.execute("SELECT spent, reserved FROM tb_budget").fetchone() == (Decimal("0.15"), 0)
        await observer.aclose()
    finally:
        await team.aclose()
