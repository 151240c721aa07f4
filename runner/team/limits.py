"""RPM and TPM limits shared by every process using the team database: the ladder's `SharedBuckets`, as GCRA.

Per limit key (`runner.ladder.ratelimit.LimitKey`: provider, model, a short hash of the API key, endpoint) one row
of `tb_rate` holds when the request and token buckets next have room, on the database's clock (`tb_take`, in
`runner.team.database`); its key is a sha256 of that identity, so neither the API key nor a URL's credentials are
stored, only the display name (`provider/model@host`). The buckets behave as the in-process `TokenBucket`s: the
same rate and burst, a take larger than the burst admitted on a full bucket, unused tokens given back, and a 429
pausing the key for its Retry-After and emptying both buckets, for every process at once.

Fail closed: a take waits while the database is unreachable (`runner.team.link`), and past the outage limit raises
`TeamUnavailable`: the call is not sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging

import psycopg

from runner.ladder.ratelimit import LimitKey, Limits
from runner.team.database import TeamUnavailable, public
from runner.team.link import Link, Outage

log = logging.getLogger(__name__)

TAKE = "SELECT tb_take(%s, %s, %s::float8, %s::float8, %s::float8, %s::float8, %s::float8)"
MAX_NAP_S = 1.0
"""A wait the database asked for is slept in naps of at most this, so a refund or a pause elsewhere is seen soon."""


def row_key(key: LimitKey) -> str:
    """The row of a limit key: a sha256 of its identity (the API key is already only a hash inside it)."""
    identity = "\0".join((key.provider, key.model, key.key_id, key.endpoint or ""))
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


def _bucket(per_minute: float | None, burst_s: float) -> tuple[float | None, float | None]:
    """GCRA's emission interval T and tolerance tau of a bucket (`TokenBucket`'s capacity of max(1, rate * burst)
    units is tau / T)."""
    if not per_minute:
        return None, None
    interval = 60.0 / per_minute
    return interval, max(1.0, per_minute / 60.0 * burst_s) * interval


class TeamBuckets:
    """The ladder's `SharedBuckets` on the team database.

    Args:
        url: The team database's connection string.
        outage: The process's outage (how long the database is waited for).
    """

    def __init__(self, url: str, outage: Outage | None = None) -> None:
        self._url = url
        self._link = Link(url, outage or Outage(url))
        self._pending: set[asyncio.Task[None]] = set()

    async def take(self, key: LimitKey, limits: Limits, tokens: int, burst_s: float) -> None:
        """Waits until one request and `tokens` fit under `key`'s shared limits, then takes them.

        Raises:
            TeamUnavailable: the database stayed unreachable past the outage limit (the call is not sent).
        """
        request_t, request_tau = _bucket(limits.rpm, burst_s)
        token_t, token_tau = _bucket(limits.tpm, burst_s)
        arguments = (row_key(key), key.display, request_t, request_tau, token_t, token_tau, float(tokens))
        while True:
            try:
                row = await self._link.fetchone(TAKE, arguments)
            except psycopg.Error as exc:
                raise TeamUnavailable(f"{public(self._url)}: {str(exc).strip()}; nothing was sent") from None
            wait = float(row[0]) if row is not None else 0.0  # type: ignore[arg-type]
            if wait <= 0:
                return
            await asyncio.sleep(min(wait, MAX_NAP_S))

    def give_back(self, key: LimitKey, limits: Limits, tokens: int) -> None:
        """Returns unused tokens (negative: takes more) once the reply's usage is known; written in the background."""
        if limits.tpm and tokens:
            self._background("UPDATE tb_rate SET tokens_tat = tokens_tat - %s WHERE key = %s",
                             (tokens * 60.0 / limits.tpm, row_key(key)))

    def pause(self, key: LimitKey, limits: Limits, seconds: float, burst_s: float) -> None:
        """A 429: every process stops sending under `key` for `seconds`; written in the background."""
        self._background("SELECT tb_pause(%s, %s, %s::float8, %s::float8, %s::float8)",
                         (row_key(key), key.display, seconds, _bucket(limits.rpm, burst_s)[1],
                          _bucket(limits.tpm, burst_s)[1]))

    def _background(self, query: str, arguments: tuple[object, ...]) -> None:
        task = asyncio.get_running_loop().create_task(self._execute(query, arguments), name="team-limits")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _execute(self, query: str, arguments: tuple[object, ...]) -> None:
        try:
            await self._link.fetchone(query, arguments)
        except (psycopg.Error, TeamUnavailable) as exc:
            log.warning("%s: a shared rate limit was not updated (%s)", public(self._url), str(exc).strip())

    async def aclose(self) -> None:
        """Writes what is still pending and closes the connection."""
        while self._pending:
            await asyncio.gather(*self._pending)
        await self._link.aclose()
