"""A run's share of the team database: this process as a worker, the shared rate limits, the shared spend cap."""

from __future__ import annotations

from pathlib import Path

from runner.ladder.budget import Ledger
from runner.team.budget import HEARTBEAT_S, STALE_S, TeamLedger, Worker
from runner.team.limits import TeamBuckets
from runner.team.link import OUTAGE_S, Outage
from runner.team.shards import ShardClaim
from runner.team.spool import Spool


class Team:
    """This process in the team: `await Team.join(url)`, then `ledger(...)` and `buckets` for the gateway.

    Args:
        url: The team database's connection string (the schema is created or migrated by the first connection).
        heartbeat_s: Seconds between heartbeats (default: a twelfth of `stale_s`).
        stale_s: Seconds without a heartbeat after which a worker is dead and its open charges orphaned.
        outage_s: How long an unreachable database is waited for (`runner.team.link`).
    """

    def __init__(self, url: str, *, heartbeat_s: float | None = None, stale_s: float = STALE_S,
                 outage_s: float = OUTAGE_S) -> None:
        self.url = url
        self.outage = Outage(url, outage_s)
        heartbeat_s = heartbeat_s if heartbeat_s is not None else stale_s * HEARTBEAT_S / STALE_S
        self.worker = Worker(url, heartbeat_s=heartbeat_s, stale_s=stale_s, outage=self.outage)
        self.buckets = TeamBuckets(url, self.outage)
        self._ledgers: list[TeamLedger] = []

    @classmethod
    async def join(cls, url: str, *, heartbeat_s: float | None = None, stale_s: float = STALE_S,
                   outage_s: float = OUTAGE_S) -> Team:
        """Registers this process (its heartbeat starts).

        Raises:
            TeamUnavailable: the database cannot be reached.
        """
        team = cls(url, heartbeat_s=heartbeat_s, stale_s=stale_s, outage_s=outage_s)
        await team.worker.start()
        return team

    async def ledger(self, budget: str, cap_usd: float | None, local: Ledger | None = None,
                     claim: ShardClaim | None = None, spool: Path | None = None) -> TeamLedger:
        """The spend cap's ledger: the team's `budget` within `cap_usd` (the cap it records: see `TeamLedger.join`),
        booked in `local` too; refused once another process takes `claim`; settlements an outage held back at the
        end kept in `spool` (the run's) for the next session.

        Raises:
            CapMismatch: the budget records another cap.
        """
        kept = Spool(spool) if spool is not None else None
        ledger = TeamLedger(self.worker, budget, cap_usd, local, claim=claim, spool=kept)
        self._ledgers.append(ledger)
        await ledger.join()
        return ledger

    async def aclose(self) -> None:
        """Writes what the ledgers and buckets still hold, then leaves (charges still open are orphaned)."""
        for ledger in self._ledgers:
            await ledger.aclose()
        await self.buckets.aclose()
        await self.worker.aclose()
