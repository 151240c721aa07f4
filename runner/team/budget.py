"""One spend cap for every process sharing the team database: the ladder's `Ledger`, deciding inside the database.

A reservation is one call of `tb_reserve` (`runner.team.database`): a conditional update of the budget's row (spent
+ reserved + the call's worst case within this run's `max_cost`) and the charge's insert, in one transaction, so
the cap holds however many processes reserve at once. It returns once the charge is committed (write-ahead, as the
run store's ledger). Refused while other charges are open anywhere, it waits for them to settle, as the in-process
cap waits for its own; refused with nothing open, the cap is reached: `BudgetExhausted`. Settlements are queued and
written in batches (one `tb_settle` per batch).

Liveness: each process is a row of `tb_worker` whose heartbeat, on the database's clock, a `Worker` renews. A worker
silent for `stale_s` is declared dead by whichever process looks next (`tb_reap`, run with every heartbeat): its open
charges become orphaned, counted as spent at their worst case, and an orphaned charge whose answer reaches the cache
is settled at the cost the entry records. A worker declared dead that wakes up may open no further charge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from decimal import Decimal

import psycopg

from providers.errors import BudgetExhausted
from runner.ladder.budget import Ledger
from runner.team.database import TeamUnavailable, connect, connect_async, public

log = logging.getLogger(__name__)

HEARTBEAT_S = 5.0
"""How often a worker says it is alive."""
STALE_S = 60.0
"""A worker silent this long is dead (a dozen missed heartbeats: a stalled event loop on a loaded machine is not)."""
POLL_S = (0.02, 0.5)
"""A refused reservation looks again after the first, doubling up to the second, while other charges are open."""


def _money(usd: float) -> Decimal:
    """Dollars as the database's exact numeric (from the float's shortest repr, so 0.1 stays 0.1)."""
    return Decimal(repr(usd))


class Worker:
    """This process in `tb_worker`: registered, kept alive by a heartbeat task, declared gone on `aclose`.

    Args:
        url: The team database's connection string.
        heartbeat_s: Seconds between heartbeats (each also declares stale workers dead).
        stale_s: Seconds without a heartbeat after which a worker is dead.
    """

    def __init__(self, url: str, *, heartbeat_s: float = HEARTBEAT_S, stale_s: float = STALE_S) -> None:
        self.url = url
        self.id = 0
        self.heartbeat_s, self.stale_s = heartbeat_s, stale_s
        self.lost: str | None = None
        """Why this worker can no longer book (declared dead, or the database gone); None while it can."""
        self._connection: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self._beating: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Registers this process and starts its heartbeat.

        Raises:
            TeamUnavailable: the database cannot be reached.
        """
        await asyncio.to_thread(lambda: connect(self.url).close())  # the schema, created or migrated
        self._connection = await connect_async(self.url)
        try:
            row = await (await self._connection.execute(
                "INSERT INTO tb_worker (host, pid) VALUES (%s, %s) RETURNING id", (socket.gethostname(), os.getpid())
            )).fetchone()
            assert row is not None
            self.id = int(row[0])  # type: ignore[call-overload]
            await self.reap()
        except psycopg.Error as exc:
            await self._connection.close()
            raise TeamUnavailable(f"{public(self.url)}: {str(exc).strip()}; nothing was sent") from None
        self._beating = asyncio.get_running_loop().create_task(self._beat(), name="team-heartbeat")

    async def reap(self) -> int:
        """Declares workers silent for `stale_s` dead and settles orphaned charges whose answer is cached; returns
        how many workers were declared dead."""
        assert self._connection is not None
        row = await (await self._connection.execute(
            "SELECT tb_reap(make_interval(secs => %s::float8))", (self.stale_s,))).fetchone()
        return int(row[0]) if row is not None else 0  # type: ignore[call-overload]

    async def _beat(self) -> None:
        assert self._connection is not None
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                if self._connection.closed:  # dropped by the server: a new one, or the worker is soon declared dead
                    self._connection = await connect_async(self.url)
                alive = await (await self._connection.execute(
                    "UPDATE tb_worker SET heartbeat = now() WHERE id = %s AND alive RETURNING id", (self.id,)
                )).fetchone()
                await self.reap()
            except (psycopg.Error, TeamUnavailable) as exc:
                log.warning("%s: heartbeat failed (%s); trying again", public(self.url), str(exc).strip())
                continue
            if alive is None:
                self.lost = "this worker was declared dead (no heartbeat for a while)"
                log.warning("%s: %s; it books no further charge", public(self.url), self.lost)
                return

    async def aclose(self) -> None:
        """Stops the heartbeat and leaves the team: charges still open are orphaned (counted at their worst case)."""
        if self._beating is not None:
            self._beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._beating
        if self._connection is None:
            return
        with contextlib.suppress(psycopg.Error):
            await self._connection.execute(
                "SELECT tb_orphan(ARRAY(SELECT id FROM tb_charge WHERE worker = %s AND state = 'open'))", (self.id,))
            await self._connection.execute("UPDATE tb_worker SET alive = false WHERE id = %s", (self.id,))
        await self._connection.close()


class TeamLedger:
    """The ladder's `Ledger` on the team database: the shared cap decides, and this run's own ledger (the results
    store's, for `tripbench status`) books the same charges after it.

    Args:
        worker: This process (started).
        budget: The budget's name (`[team] budget`).
        cap_usd: This run's `max_cost`: the team's spending under `budget` stays within it (None: no cap).
        local: The run's own ledger, booked after the team's decision (None: the team's only).
        sleep: Awaitable sleep (waiting for other processes' charges).
    """

    def __init__(self, worker: Worker, budget: str, cap_usd: float | None, local: Ledger | None = None,
                 *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._worker = worker
        self._budget = budget
        self._cap = None if cap_usd is None else _money(cap_usd)
        self._local = local
        self._sleep = sleep
        self._connection: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self._connecting = asyncio.Lock()
        self._team_of: dict[int, int] = {}  # the local ledger's charge -> the team's
        self._settling: list[tuple[int, Decimal]] = []
        self._orphaning: list[int] = []
        self._writer: asyncio.Task[None] | None = None

    async def _connected(self) -> psycopg.AsyncConnection[tuple[object, ...]]:
        async with self._connecting:
            if self._connection is None or self._connection.closed:
                self._connection = await connect_async(self._worker.url)
            return self._connection

    async def open(self, amount_usd: float, *, model: str, cache_key: str | None) -> int:
        """Books the reservation in the team's budget (waiting while other charges may free enough), then in the
        local ledger.

        Raises:
            BudgetExhausted: the team's spending under this budget reached this run's cap.
            TeamUnavailable: the database cannot be reached (nothing is sent).
        """
        if self._worker.lost is not None:
            raise TeamUnavailable(f"{public(self._worker.url)}: {self._worker.lost}; nothing was sent")
        amount, pause = _money(amount_usd), POLL_S[0]
        while True:
            try:
                connection = await self._connected()
                row = await (await connection.execute(
                    "SELECT tb_reserve(%s, %s::bigint, %s::numeric, %s::numeric, %s, %s)",
                    (self._budget, self._worker.id, amount, self._cap, model, cache_key))).fetchone()
            except psycopg.Error as exc:
                raise TeamUnavailable(f"{public(self._worker.url)}: {str(exc).strip()}; nothing was sent") from None
            charge = int(row[0]) if row is not None else -1  # type: ignore[call-overload]
            if charge > 0:
                break
            if charge < 0:
                raise BudgetExhausted(f"team spend cap ${self._cap:.4f} (budget {self._budget!r}) reached: the "
                                      f"next call may cost up to ${amount_usd:.4f}")
            await self._sleep(pause)  # other charges are open: they may free enough
            pause = min(POLL_S[1], pause * 2)
        if self._local is None:
            return charge
        try:
            local = await self._local.open(amount_usd, model=model, cache_key=cache_key)
        except BaseException:
            self._queue(settle=(charge, Decimal(0)))  # booked nowhere else, so never sent
            raise
        self._team_of[local] = charge
        return local

    def settle(self, charge: int, cost_usd: float) -> None:
        if self._local is not None:
            self._local.settle(charge, cost_usd)
            team = self._team_of.pop(charge, None)
            if team is None:
                return  # an earlier session's charge (a batch it left), booked in the run's ledger only
            charge = team
        self._queue(settle=(charge, _money(cost_usd)))

    def unknown(self, charge: int) -> None:
        if self._local is not None:
            self._local.unknown(charge)
            team = self._team_of.pop(charge, None)
            if team is None:
                return
            charge = team
        self._queue(orphan=charge)

    def _queue(self, *, settle: tuple[int, Decimal] | None = None, orphan: int | None = None) -> None:
        if settle is not None:
            self._settling.append(settle)
        if orphan is not None:
            self._orphaning.append(orphan)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write(), name="team-ledger-writer")

    async def _write(self) -> None:
        """Writes the queued settlements, all those queued meanwhile in one statement, until none is left."""
        while self._settling or self._orphaning:
            settling, self._settling = self._settling, []
            orphaning, self._orphaning = self._orphaning, []
            try:
                connection = await self._connected()
                if settling:
                    await connection.execute("SELECT tb_settle(%s::bigint[], %s::numeric[])",
                                             ([charge for charge, _ in settling], [cost for _, cost in settling]))
                if orphaning:
                    await connection.execute("SELECT tb_orphan(%s::bigint[])", (orphaning,))
            except (psycopg.Error, TeamUnavailable) as exc:  # they stay open: counted at their worst case
                log.warning("%s: %d settlements not written (%s); those charges stay booked at their worst case "
                            "until this worker is declared dead", public(self._worker.url),
                            len(settling) + len(orphaning), str(exc).strip())

    async def aclose(self) -> None:
        """Writes what is still queued and closes the connection."""
        while self._writer is not None and not self._writer.done():
            await self._writer
        if self._connection is not None:
            await self._connection.close()
