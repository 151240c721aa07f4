"""Connections to the team database that outlive the server's restarts.

A PostgreSQL restart (a failover, a minor-version update, a maintenance window) ends every connection, and for a
moment refuses new ones. That is an ordinary event: a `Link` runs each statement on its connection, and a statement
that finds the connection lost (psycopg's `OperationalError` or `InterfaceError`: ended by the server, refused, the
server starting up) connects again, with backoff, and runs once more. Meanwhile its caller waits and nothing is sent
(fail closed). The process's links share one `Outage`: past its limit (`[team] outage_s`), whatever still waits
gets `TeamUnavailable` without a retry, and its rollout ends `interrupted` (the same command runs it again).

A statement run again may have run already, its answer lost with the connection: every statement of the team's is
safe to run twice (a reservation carries its own id and finds the charge it made; settling settles open charges only;
a heartbeat, a reap, a cache write are idempotent).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

import psycopg

from runner.team.database import TeamUnavailable, connect_async, public

log = logging.getLogger(__name__)

OUTAGE_S = 300.0
"""How long the team database may stay unreachable before the rollouts waiting for it end `interrupted` (a
restart takes a second or two; a failover or an upgrade, up to a minute or so)."""
BACKOFF_S = (0.05, 2.0)
"""The first wait before connecting again, doubling up to the second."""

Row = tuple[object, ...]
Connection = psycopg.AsyncConnection[Row]


def lost_connection(error: BaseException) -> bool:
    """Whether an error means the connection (or the server) is gone, not that the statement was refused."""
    return isinstance(error, TeamUnavailable | psycopg.OperationalError | psycopg.InterfaceError)


class Outage:
    """Since when this process has found the team database unreachable, shared by all its connections.

    Args:
        url: The database, for messages (shown without credentials).
        limit_s: How long an outage is waited out.
        clock: Monotonic seconds.
    """

    def __init__(self, url: str, limit_s: float = OUTAGE_S, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.where = public(url)
        self.limit_s = limit_s
        self._clock = clock
        self.since: float | None = None
        """When the database stopped answering (None: it answers)."""
        self._closing = False  # the run closes: nothing waits for the database any more (`stop_waiting`)

    def pause(self, attempt: int) -> float | None:
        """The wait before trying again after `attempt` + 1 failures in a row, or None once the outage is past its
        limit."""
        now = self._clock()
        if self.since is None:
            self.since = now
            log.warning("%s: unreachable; calls wait (none is sent) for up to %.0f s while it comes back",
                        self.where, self.limit_s)
        if self._closing or now - self.since > self.limit_s:
            return None
        return min(BACKOFF_S[1], BACKOFF_S[0] * 2.0 ** min(attempt, 16))

    def stop_waiting(self) -> None:
        """The run is closing: from now on nothing waits for the database (what it cannot take is spooled)."""
        self._closing = True

    def over(self) -> None:
        """The database answered."""
        if self.since is not None:
            log.warning("%s: reachable again after %.1f s", self.where, self._clock() - self.since)
            self.since = None

    def unavailable(self, error: BaseException, attempt: int = 0) -> TeamUnavailable:
        """`TeamUnavailable` for an error that lost the connection, with the pause before a retry (None: give up)."""
        pause = self.pause(attempt)
        reason = str(error).strip() or type(error).__name__
        if pause is None:
            return TeamUnavailable(f"{self.where}: unreachable for over {self.limit_s:.0f} s ({reason}); nothing was "
                                   "sent, and the same command runs this again")
        return TeamUnavailable(f"{self.where}: unreachable ({reason}); nothing was sent", retry_after_s=pause)


class Link:
    """One connection, made again whenever it is found lost, for statements that are safe to run twice.

    Args:
        url: The team database's connection string.
        outage: The process's outage (shared by its links).
    """

    def __init__(self, url: str, outage: Outage) -> None:
        self.url = url
        self.outage = outage
        self._connection: Connection | None = None
        self._connecting = asyncio.Lock()

    async def _connected(self) -> Connection:
        async with self._connecting:
            if self._connection is None or self._connection.closed or self._connection.broken:
                if self._connection is not None:
                    await self._connection.close()
                    self._connection = None
                self._connection = await connect_async(self.url)
            return self._connection

    async def fetchone(self, query: str, arguments: Sequence[object] = ()) -> Row | None:
        """The statement's first row, waiting through an outage.

        Raises:
            TeamUnavailable: the outage passed its limit (`retry_after_s` None).
            psycopg.Error: the server refused the statement itself.
        """
        attempt = 0
        while True:
            try:
                connection = await self._connected()
                cursor = await connection.execute(query, arguments)
                row = await cursor.fetchone() if cursor.description is not None else None
            except (psycopg.Error, TeamUnavailable) as exc:
                if not lost_connection(exc):
                    raise
                unavailable = self.outage.unavailable(exc, attempt)
                if unavailable.retry_after_s is None:
                    raise unavailable from None
                await asyncio.sleep(unavailable.retry_after_s)
                attempt += 1
                continue
            self.outage.over()
            return row

    async def aclose(self) -> None:
        if self._connection is not None:
            await self._connection.close()
