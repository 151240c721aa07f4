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
is settled at the cost the entry records. A worker declared dead that wakes up (a stopped process, an outage longer
than `stale_s`) joins again as a new worker: its old charges stay with the dead one, settled when their answers come.

One cap per budget: the first run that books under a budget records its `max_cost` there (`tb_budget.cap`); a run
with another cap is refused before it starts, naming both (`tripbench team budget NAME --cap USD` changes it), and
every reservation is decided under the recorded cap. A reservation that cannot fit even if every open charge settled
at nothing ends at once (`BudgetExhausted`), without waiting for the others.

Through a restart of the database (`runner.team.link`): a reservation waits for it (nothing is sent meanwhile) and
carries its own id, so one sent again after its answer was lost finds the charge it made; a settlement that could not
be written stays queued and is written once the database is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from decimal import Decimal

import psycopg

from errors import UsageError
from providers.errors import BudgetExhausted
from runner.ladder.budget import Ledger
from runner.team.database import TeamUnavailable, connect, public
from runner.team.link import Link, Outage, lost_connection
from runner.team.shards import ShardClaim, ShardLost
from runner.team.spool import Spool

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


class CapMismatch(UsageError):
    """This run's `max_cost` differs from the cap its team budget recorded."""


def _usd(cap: Decimal | None) -> str:
    return "no cap" if cap is None else f"${cap}"


class Worker:
    """This process in `tb_worker`: registered, kept alive by a heartbeat task, declared gone on `aclose`.

    Args:
        url: The team database's connection string.
        heartbeat_s: Seconds between heartbeats (each also declares stale workers dead).
        stale_s: Seconds without a heartbeat after which a worker is dead.
        outage: The process's outage (how long the database is waited for).
    """

    def __init__(self, url: str, *, heartbeat_s: float = HEARTBEAT_S, stale_s: float = STALE_S,
                 outage: Outage | None = None) -> None:
        self.url = url
        self.id = 0
        self.heartbeat_s, self.stale_s = heartbeat_s, stale_s
        self.link = Link(url, outage or Outage(url))
        self._joining = asyncio.Lock()
        self._beating: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Registers this process and starts its heartbeat.

        Raises:
            TeamUnavailable: the database cannot be reached.
        """
        await asyncio.to_thread(lambda: connect(self.url).close())  # the schema, created or migrated
        await self.rejoin(0)
        await self.reap()
        self._beating = asyncio.get_running_loop().create_task(self._beat(), name="team-heartbeat")

    async def rejoin(self, dead: int) -> None:
        """Registers this process as a new worker, unless that happened already since worker `dead` was found dead
        (0: not registered yet)."""
        async with self._joining:
            if self.id != dead:
                return
            row = await self.link.fetchone("INSERT INTO tb_worker (host, pid) VALUES (%s, %s) RETURNING id",
                                           (socket.gethostname(), os.getpid()))
            assert row is not None
            self.id = int(row[0])  # type: ignore[call-overload]
            if dead:
                log.warning("%s: this process was declared dead (no heartbeat for %.0f s: stopped, or the database "
                            "was down); it joined again as worker %d", public(self.url), self.stale_s, self.id)

    async def reap(self) -> int:
        """Declares workers silent for `stale_s` dead and settles orphaned charges whose answer is cached; returns
        how many workers were declared dead."""
        row = await self.link.fetchone("SELECT tb_reap(make_interval(secs => %s::float8))", (self.stale_s,))
        return int(row[0]) if row is not None else 0  # type: ignore[call-overload]

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            worker = self.id
            try:
                alive = await self.link.fetchone(
                    "UPDATE tb_worker SET heartbeat = now() WHERE id = %s AND alive RETURNING id", (worker,))
                if alive is None:
                    await self.rejoin(worker)
                await self.reap()
            except (psycopg.Error, TeamUnavailable) as exc:  # an outage past its limit: the next beat tries again
                log.warning("%s: heartbeat failed (%s); trying again", public(self.url), str(exc).strip())

    async def aclose(self) -> None:
        """Stops the heartbeat and leaves the team: charges still open are orphaned (counted at their worst case)."""
        if self._beating is not None:
            self._beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._beating
        if self.id:
            with contextlib.suppress(psycopg.Error, TeamUnavailable):
                await self.link.fetchone(
                    "SELECT tb_orphan(ARRAY(SELECT id FROM tb_charge WHERE worker = %s AND state = 'open'))",
                    (self.id,))
                await self.link.fetchone("UPDATE tb_worker SET alive = false WHERE id = %s", (self.id,))
        await self.link.aclose()


class TeamLedger:
    """The ladder's `Ledger` on the team database: the shared cap decides, and this run's own ledger (the results
    store's, for `tripbench status`) books the same charges after it.

    Args:
        worker: This process (started).
        budget: The budget's name (`[team] budget`).
        cap_usd: This run's `max_cost`: the team's spending under `budget` stays within it (None: no cap); it must
            be the cap the budget recorded (`join`).
        local: The run's own ledger, booked after the team's decision (None: the team's only).
        claim: The shard this process holds, if it runs one: a reservation is refused once another process took it.
        spool: Where settlements still unwritten when the ledger closes (the database away) are kept for the next
            session (None: they count at their worst case until this worker is declared dead).
        sleep: Awaitable sleep (waiting for other processes' charges, or for the database).
    """

    def __init__(self, worker: Worker, budget: str, cap_usd: float | None, local: Ledger | None = None,
                 *, claim: ShardClaim | None = None, spool: Spool | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._worker = worker
        self._budget = budget
        self._cap = None if cap_usd is None else _money(cap_usd)
        self._local = local
        self._claim = claim
        self._spool = spool
        self._sleep = sleep
        self._link = Link(worker.url, worker.link.outage)
        self._team_of: dict[int, int] = {}  # the local ledger's charge -> the team's
        self._settling: list[tuple[int, Decimal]] = []
        self._orphaning: list[int] = []
        self._writer: asyncio.Task[None] | None = None

    async def join(self) -> None:
        """Records this run's cap as the budget's if it has none yet; refuses a run whose cap differs. Writes the
        settlements an earlier session kept in the spool.

        Raises:
            CapMismatch: the budget records another cap (both named, with the command that changes it).
        """
        if self._spool is not None and (kept := self._spool.settlements()):
            for charge, cost in kept:
                self._queue(settle=(charge, cost) if cost is not None else None,
                            orphan=charge if cost is None else None)
            await self._writer  # type: ignore[misc]
            if not (self._settling or self._orphaning):
                self._spool.settled([charge for charge, _ in kept])
                log.warning("%s: %d settlements kept through an outage were written", public(self._worker.url),
                            len(kept))
        row = await self._link.fetchone(
            "INSERT INTO tb_budget (name, cap, cap_set) VALUES (%s, %s::numeric, true) ON CONFLICT (name) DO UPDATE "
            "SET cap = CASE WHEN tb_budget.cap_set THEN tb_budget.cap ELSE excluded.cap END, cap_set = true "
            "RETURNING cap", (self._budget, self._cap))
        recorded = None if row is None or row[0] is None else Decimal(str(row[0]))
        if recorded != self._cap:
            raise CapMismatch(
                f"team budget {self._budget!r} has {_usd(recorded)} (recorded by the first run that used it); this "
                f"run's max_cost is {_usd(self._cap)}: run with the budget's cap, name another budget in [team] "
                f"budget, or change the budget's cap for every process: tripbench team budget {self._budget} "
                "--cap USD")

    async def open(self, amount_usd: float, *, model: str, cache_key: str | None) -> int:
        """Books the reservation in the team's budget (waiting while other charges may free enough, or while the
        database comes back), then in the local ledger.

        Raises:
            BudgetExhausted: the team's spending under this budget reached its cap.
            ShardLost: another process took this process's shard.
            TeamUnavailable: the database stayed unreachable past the outage limit (nothing is sent).
        """
        amount, pause, request = _money(amount_usd), POLL_S[0], uuid.uuid4()
        while True:
            if self._claim is not None and self._claim.lost is not None:
                raise ShardLost(self._claim.lost)
            worker = self._worker.id
            claim = (self._claim.key, self._claim.epoch) if self._claim is not None else (None, None)
            try:
                row = await self._link.fetchone(
                    "SELECT tb_reserve(%s, %s::bigint, %s::numeric, %s, %s, %s::uuid, %s::bigint, %s::bigint)",
                    (self._budget, worker, amount, model, cache_key, request, *claim))
            except psycopg.Error as exc:
                if exc.sqlstate == "TB001":  # declared dead (stopped, or the database was down past stale_s)
                    await self._worker.rejoin(worker)
                    continue
                if exc.sqlstate == "TB003" and self._claim is not None:
                    raise ShardLost(self._claim.taken_over()) from None
                raise TeamUnavailable(f"{public(self._worker.url)}: {str(exc).strip()}; nothing was sent") from None
            charge = int(row[0]) if row is not None else -1  # type: ignore[call-overload]
            if charge > 0:
                break
            if charge < 0:
                raise BudgetExhausted(f"team spend cap {_usd(self._cap)} (budget {self._budget!r}) reached: the "
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
        """Writes the queued settlements, all those queued meanwhile in one statement, until none is left; through
        an outage they wait (the link retries), and past its limit they stay queued for the next write."""
        while self._settling or self._orphaning:
            settling, orphaning = list(self._settling), list(self._orphaning)
            if settling:
                if not await self._flush("SELECT tb_settle(%s::bigint[], %s::numeric[])",
                                         ([charge for charge, _ in settling], [cost for _, cost in settling])):
                    return
                del self._settling[:len(settling)]
            if orphaning:
                if not await self._flush("SELECT tb_orphan(%s::bigint[])", (orphaning,)):
                    return
                del self._orphaning[:len(orphaning)]

    async def _flush(self, statement: str, arguments: tuple[object, ...]) -> bool:
        """Runs one statement of settlements; False when the database stayed away past the outage limit (they stay
        queued: counted at their worst case until written)."""
        try:
            await self._link.fetchone(statement, arguments)
        except (psycopg.Error, TeamUnavailable) as exc:
            if lost_connection(exc):
                log.warning("%s: %d settlements not written yet (%s); they are written once the database is back",
                            public(self._worker.url), len(self._settling) + len(self._orphaning), str(exc).strip())
                return False
            log.warning("%s: settlements refused (%s); those charges stay booked at their worst case",
                        public(self._worker.url), str(exc).strip())
        return True

    async def aclose(self) -> None:
        """Writes what is still queued (once more if an outage held it back) and closes the connection."""
        while self._writer is not None and not self._writer.done():
            await self._writer
        if self._settling or self._orphaning:
            self._queue()
            await self._writer  # type: ignore[misc]
        if (self._settling or self._orphaning) and self._spool is not None:
            self._spool.keep_settlements([*self._settling, *((charge, None) for charge in self._orphaning)])
            log.warning("%s: %d settlements kept in %s until the next session", public(self._worker.url),
                        len(self._settling) + len(self._orphaning), self._spool.path)
        await self._link.aclose()


def budget_spent(url: str, budget: str) -> float:
    """What a team budget holds now, spent and reserved (calls in flight at their worst case), 0 before its first
    booking: what a dry run's "at most" starts from. A plain SELECT (a read-only user may look).

    Raises:
        TeamUnavailable: the database cannot be reached.
    """
    with connect(url, purpose="read") as connection:
        row = connection.execute("SELECT (spent + reserved)::float8 FROM tb_budget WHERE name = %s",
                                 (budget,)).fetchone()
    return 0.0 if row is None else float(row[0])  # type: ignore[arg-type]
