"""One process per shard of a run, across machines: a PostgreSQL advisory lock in the team database.

A shard's results store is on its machine's local disk, so its folder lock (`runner.store.writer.lock_run_dir`) only
refuses a second start on the same machine. The claim refuses it anywhere: session-level `pg_try_advisory_lock` on a
key derived from the run (its result-changing settings and its folder's name) and the shard, held by a connection
kept open for the whole session. The server drops the lock with the connection, so a shard killed by SIGKILL, an
out-of-memory kill or a lost node leaves nothing to clean up (a lost node's connection ends when TCP gives up on it).
"""

from __future__ import annotations

import hashlib
import os
import socket

import orjson
import psycopg

from errors import UserError
from runner.team.database import connect_async, public

APPLICATION = "tripbench shard"
"""The `application_name` prefix of a claim's connection: how a refusal names the process holding the shard."""


class ShardTaken(UserError):
    """Another process (on any machine) is running this shard of this run."""


def claim_key(run: object, shard: str) -> int:
    """The advisory lock's key: a signed 64-bit number from the sha256 of the run's identity and the shard."""
    digest = hashlib.sha256(orjson.dumps([run, shard], option=orjson.OPT_SORT_KEYS)).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class ShardClaim:
    """The claim of one shard, held until `release` (or the process's end)."""

    def __init__(self, connection: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        self._connection = connection

    @classmethod
    async def take(cls, url: str, run: object, shard: str) -> ShardClaim:
        """Claims `shard` of `run` (any JSON value identifying the run).

        Raises:
            ShardTaken: another process holds it, naming its host and pid.
            TeamUnavailable: the database cannot be reached.
        """
        connection = await connect_async(url)
        try:
            key = claim_key(run, shard)
            name = f"{APPLICATION} {shard} pid {os.getpid()} on {socket.gethostname()}"
            await connection.execute("SELECT set_config('application_name', %s, false)", (name[:63],))
            row = await (await connection.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
            if row is not None and row[0]:
                return cls(connection)
            holder = await (await connection.execute(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                "AND l.classid = ((%s >> 32) & 4294967295)::oid AND l.objid = (%s & 4294967295)::oid",
                (key, key))).fetchone()
        except psycopg.Error as exc:
            await connection.close()
            raise UserError(f"{public(url)}: the shard could not be claimed ({str(exc).strip()})") from None
        await connection.close()
        who = str(holder[0]).removeprefix(f"{APPLICATION} {shard} ") if holder and holder[0] else "another process"
        raise ShardTaken(f"shard {shard} of this run is running already ({who}); a shard runs in one process at a "
                         "time (the claim ends with that process, a killed one included)")

    async def release(self) -> None:
        """Ends the claim (closing its connection)."""
        await self._connection.close()
