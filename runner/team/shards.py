"""One process per shard of a run, across machines: a PostgreSQL advisory lock in the team database.

A shard's results store is on its machine's local disk, so its folder lock (`runner.store.writer.lock_run_dir`) only
refuses a second start on the same machine. The claim refuses it anywhere: session-level `pg_try_advisory_lock` on a
key derived from the run (its result-changing settings and its folder's name) and the shard, held by a connection
kept open for the whole session. The server drops the lock with the connection, so a shard killed by SIGKILL, an
out-of-memory kill or a lost node leaves nothing to clean up (a lost node's connection ends when TCP gives up on it).

A restart of the server drops it too, from a holder still alive. So each take of the lock counts one more epoch of the
claim (`tb_claim`); the holder watches its connection, and when it finds it gone takes the lock again and checks that
the epoch is still its own. Every reservation names the epoch and is refused once another process took the claim
(`tb_reserve`): a holder that lost its shard stops before sending another call (`ShardLost`, which ends its run).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import socket

import orjson
import psycopg

from errors import UserError
from runner.team.database import TeamUnavailable, connect, connect_async, public
from runner.team.link import Connection, Outage, lost_connection

log = logging.getLogger(__name__)

APPLICATION = "tripbench shard"
"""The `application_name` prefix of a claim's connection: how a refusal names the process holding the shard."""


WATCH_S = 1.0
"""How often a holder checks that its claim's connection is alive."""


class ShardTaken(UserError):
    """Another process (on any machine) is running this shard of this run."""


class ShardLost(UserError):
    """Another process took this process's shard while its connection was gone (a database restart): this process
    stops, sending nothing more; the other runs the shard."""


def claim_key(run: object, shard: str) -> int:
    """The advisory lock's key: a signed 64-bit number from the sha256 of the run's identity and the shard."""
    digest = hashlib.sha256(orjson.dumps([run, shard], option=orjson.OPT_SORT_KEYS)).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class ShardClaim:
    """The claim of one shard, held until `release` (or the process's end), taken again after a lost connection.

    Args:
        url: The team database's connection string.
        key: The claim's advisory lock key (`claim_key`).
        name: The claim's connection's `application_name` (who holds it, for a refused process's message).
        shard: The shard, as messages name it.
        outage: How long the database is waited for.
    """

    def __init__(self, url: str, key: int, name: str, shard: str, outage: Outage) -> None:
        self.url, self.key, self._name, self._shard, self._outage = url, key, name, shard, outage
        self.epoch = 0
        """How many times the claim was taken before, this take included: reservations name it (fencing)."""
        self.lost: str | None = None
        """Why this process no longer holds the shard; None while it does."""
        self._connection: Connection | None = None
        self._watching: asyncio.Task[None] | None = None

    @classmethod
    async def take(cls, url: str, run: object, shard: str, outage: Outage | None = None) -> ShardClaim:
        """Claims `shard` of `run` (any JSON value identifying the run) and starts watching the claim.

        Raises:
            ShardTaken: another process holds it, naming its host and pid.
            TeamUnavailable: the database cannot be reached.
        """
        await asyncio.to_thread(lambda: connect(url).close())  # the schema (`tb_claim`), created or migrated
        name = f"{APPLICATION} {shard} pid {os.getpid()} on {socket.gethostname()}"
        claim = cls(url, claim_key(run, shard), name[:63], shard, outage or Outage(url))
        connection = await connect_async(url)
        try:
            if not await claim._lock(connection):
                holder = await (await connection.execute(
                    "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                    "AND l.classid = ((%s >> 32) & 4294967295)::oid AND l.objid = (%s & 4294967295)::oid",
                    (claim.key, claim.key))).fetchone()
                who = (str(holder[0]).removeprefix(f"{APPLICATION} {shard} ") if holder and holder[0]
                       else "another process")
                raise ShardTaken(f"shard {shard} of this run is running already ({who}); a shard runs in one "
                                 "process at a time (the claim ends with that process, a killed one included)")
            row = await (await connection.execute(
                "INSERT INTO tb_claim (key, epoch, holder) VALUES (%s, 1, %s) ON CONFLICT (key) DO UPDATE "
                "SET epoch = tb_claim.epoch + 1, holder = excluded.holder, taken = now() RETURNING epoch",
                (claim.key, claim._name))).fetchone()
            assert row is not None
            claim.epoch = int(row[0])  # type: ignore[call-overload]
        except psycopg.Error as exc:
            await connection.close()
            raise UserError(f"{public(url)}: the shard could not be claimed ({str(exc).strip()})") from None
        except BaseException:
            await connection.close()
            raise
        claim._connection = connection
        claim._watching = asyncio.get_running_loop().create_task(claim._watch(), name="shard-claim")
        return claim

    async def _lock(self, connection: Connection) -> bool:
        await connection.execute("SELECT set_config('application_name', %s, false)", (self._name,))
        row = await (await connection.execute("SELECT pg_try_advisory_lock(%s)", (self.key,))).fetchone()
        return row is not None and bool(row[0])

    async def _watch(self) -> None:
        """Checks the claim's connection; takes the lock again on a new one when it was lost."""
        while self.lost is None:
            await asyncio.sleep(WATCH_S)
            assert self._connection is not None
            try:
                await self._connection.execute("SELECT 1")
                continue
            except psycopg.Error as exc:
                if not lost_connection(exc):
                    log.warning("shard %s: its claim could not be checked (%s)", self._shard, str(exc).strip())
                    continue
            await self._connection.close()
            await self._take_again()

    async def _take_again(self) -> None:
        attempt = 0
        while True:
            try:
                connection = await connect_async(self.url)
                try:
                    held = await self._lock(connection)
                    row = await (await connection.execute("SELECT epoch FROM tb_claim WHERE key = %s",
                                                          (self.key,))).fetchone()
                except BaseException:
                    await connection.close()
                    raise
            except (psycopg.Error, TeamUnavailable) as exc:
                if (pause := self._outage.unavailable(exc, attempt).retry_after_s) is None:
                    self.lost = (f"shard {self._shard}: its claim was lost with the team database's connection "
                                 f"and could not be taken again within {self._outage.limit_s:.0f} s")
                    return
                await asyncio.sleep(pause)
                attempt += 1
                continue
            self._outage.over()
            self._connection = connection
            if held and row is not None and int(row[0]) == self.epoch:  # type: ignore[call-overload]
                log.warning("shard %s: its claim was taken again after the team database's connection was lost",
                            self._shard)
            else:
                self.taken_over()
            return

    def taken_over(self) -> str:
        """Why the claim is lost: another process took it."""
        self.lost = (f"shard {self._shard}: another process took this shard while this one's connection to the team "
                     "database was gone (a restart); this process stopped before sending another call, the other "
                     "runs the shard")
        return self.lost

    async def release(self) -> None:
        """Ends the claim (closing its connection)."""
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
        if self._connection is not None:
            await self._connection.close()
