"""A team's shared backend on PostgreSQL (`[team]` in a run spec): the LLM cache, one spend cap and the RPM/TPM limits
for every process and machine using one database, each behind the interface the call ladder already has
(`cache.CallCache`, `runner.ladder.budget.Ledger`, `runner.ladder.ratelimit.SharedBuckets`)."""

from runner.team.budget import TeamLedger, Worker
from runner.team.cache import TeamCache
from runner.team.database import SCHEMA_VERSION, TeamUnavailable, connect, migrate, public, team_url
from runner.team.limits import TeamBuckets
from runner.team.session import Team

__all__ = ["SCHEMA_VERSION", "Team", "TeamBuckets", "TeamCache", "TeamLedger", "TeamUnavailable", "Worker", "connect",
           "migrate", "public", "team_url"]
