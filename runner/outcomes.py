"""What a failed LLM call means, in one table: error kind -> rollout status -> rerun on resume? -> may it be billed?
And the one rule for everything else a rollout can end with: stopped by our own machinery, or by the strategy.

Read by the rollout (the status it stores), the store and the run summary (which stored rollouts a resumed run runs
again, hence the exit code), the gateway and the batch transport (whether a failed call's reserved money is released).

A transient provider error (429s, 5xx, dropped connections, timeouts: an outage) is a result (a submission counts it
as a failure), but a resumed run tries it again; a permanent one (a bad request, a content filter, a refusal) is the
rollout's outcome and stays, or re-running it would re-draw refusals until one passes. Batch requests lost (expired,
cancelled) or unreadable through every retry are transient too: no answer came.

Any other exception is judged by its type (`interrupted_by_us`): an `errors.Interruption` (a team database down past
its outage limit, a lost shard claim), an operating-system error (a full disk, a dropped connection) or an SQLite
error (a locked or damaged store) is our machinery's doing, never the strategy's: the rollout is `interrupted` and the
same command runs it again. Only the rest, raised by a strategy's or an evaluator's own code, is `crashed`: a bug,
kept as the rollout's outcome with its traceback.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from benchmarks.base import (
    BUDGET_EXHAUSTED,
    CRASHED,
    DELIVERED,
    INTERRUPTED,
    PROVIDER_ERROR,
    REPLAY_MISS,
    TOKEN_LIMIT,
)
from errors import Interruption
from providers.batching import BatchRequestLost, BatchUnanswered, BatchUnreadable
from providers.errors import (
    BudgetExhausted,
    ContextTooLong,
    LLMError,
    NotSent,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ReplayMiss,
    RetryableError,
    ServerError,
)


@dataclass(frozen=True, slots=True)
class ErrorKind:
    """One row of the policy."""

    error: type[LLMError]
    status: str
    """The status of a rollout this error ended."""
    rerun: bool
    """A resumed run runs such a rollout again."""
    billed: bool
    """The failed call may have been billed, unless the provider refused it with an HTTP error status."""


# Most specific first: a rollout's error takes the first row it is an instance of (LLMError last: the rest). A stored
# rollout is matched by its error's class name, so a subclass a resume must run again needs its own row.
POLICY: tuple[ErrorKind, ...] = (
    ErrorKind(BudgetExhausted, BUDGET_EXHAUSTED, rerun=True, billed=False),
    ErrorKind(ContextTooLong, TOKEN_LIMIT, rerun=False, billed=True),
    ErrorKind(ReplayMiss, REPLAY_MISS, rerun=True, billed=False),
    ErrorKind(BatchRequestLost, PROVIDER_ERROR, rerun=True, billed=False),  # its batch ended without running it
    ErrorKind(BatchUnreadable, PROVIDER_ERROR, rerun=True, billed=True),  # its batch may have run
    ErrorKind(BatchUnanswered, PROVIDER_ERROR, rerun=True, billed=True),  # its batch ran or will: a resume reads it
    ErrorKind(NotSent, PROVIDER_ERROR, rerun=True, billed=False),  # no connection: the request never left
    ErrorKind(RateLimited, PROVIDER_ERROR, rerun=True, billed=True),
    ErrorKind(ServerError, PROVIDER_ERROR, rerun=True, billed=True),
    ErrorKind(ProviderTimeout, PROVIDER_ERROR, rerun=True, billed=True),
    ErrorKind(RetryableError, PROVIDER_ERROR, rerun=True, billed=True),
    ErrorKind(LLMError, PROVIDER_ERROR, rerun=False, billed=True),
)

# Statuses every error of which a resume runs again: stopped by the run's circumstances before they had a result,
# not by the model. No submission counts them.
RERUN_STATUSES = frozenset({INTERRUPTED} | {row.status for row in POLICY
                                            if all(other.rerun for other in POLICY if other.status == row.status)})
_TRANSIENT = frozenset(row.error.__name__ for row in POLICY if row.status == PROVIDER_ERROR and row.rerun)

MACHINERY: tuple[type[BaseException], ...] = (Interruption, OSError, sqlite3.Error)
"""Exceptions that come from our machinery, not from a strategy's logic (`interrupted_by_us`)."""
# Runs stored before the `interrupted` status kept such rollouts as `crashed`, with the exception's class name: a
# resume runs them again too (the team database's `TeamUnavailable` among them, by name: it lives above this module).
INFRASTRUCTURE_ERRORS = frozenset({"TeamUnavailable"} | {
    value.__name__ for module in (sqlite3, builtins) for value in vars(module).values()
    if isinstance(value, type) and issubclass(value, (sqlite3.Error, OSError))})


def interrupted_by_us(error: BaseException) -> bool:
    """Whether an exception that ended a rollout came from our own machinery (`MACHINERY`): the rollout is then
    `interrupted` and runs again, never `crashed`."""
    return isinstance(error, MACHINERY)


def kind_of(error: LLMError) -> ErrorKind:
    """The policy's row for an error."""
    return next(row for row in POLICY if isinstance(error, row.error))


def runs_again(status: str, error_type: str | None) -> bool:
    """Whether a resumed run runs a stored rollout again: `RERUN_STATUSES` (`interrupted` among them), transient
    provider errors, and older runs' crashes in `INFRASTRUCTURE_ERRORS`.

    Args:
        status: The stored status.
        error_type: The exception class that ended the rollout, as stored.
    """
    return (status in RERUN_STATUSES or (status == PROVIDER_ERROR and error_type in _TRANSIENT)
            or (status == CRASHED and error_type in INFRASTRUCTURE_ERRORS))


def may_be_billed(error: ProviderError) -> bool:
    """Whether a failed request may have been billed: not if refused with an error status, nor left unanswered by its
    batch (expired, cancelled). Any other failure (a timeout, a dropped connection, an answer that did not parse, a
    batch the provider will not report) may have been."""
    return not (error.status is not None and error.status >= 400) and kind_of(error).billed


AGENT_FAILURES = "agent failures"
PROVIDER_ERRORS = "provider errors"
FAILURE_KINDS: dict[str, str] = {
    PROVIDER_ERROR: PROVIDER_ERRORS,
    INTERRUPTED: "interrupted",
    CRASHED: "crashed",
    BUDGET_EXHAUSTED: "cut by the spend cap",
    REPLAY_MISS: "replay misses",
}
"""Who stopped a rollout, by status (every other status but `delivered` is the agent's own: a dead loop, a plan that
did not parse, max steps, the context window, `max_calls`)."""
FAILURE_NOTES: dict[str, str] = {
    PROVIDER_ERRORS: "the LLM provider failed; the same command runs an outage's again",
    "interrupted": "tripbench's own machinery; the same command runs them again",
    "crashed": "a strategy's or an evaluator's own code raised",
    "cut by the spend cap": "resume with a higher --max-cost",
    "replay misses": "calls not in the cache",
}
"""What each kind but the agent's means, where a summary explains it."""


def failure_kind(status: str) -> str | None:
    """Who ended a rollout that did not deliver, in the words progress and summaries count it with: `AGENT_FAILURES`,
    `PROVIDER_ERRORS` or another kind of `FAILURE_KINDS`; None for a delivered one."""
    return None if status == DELIVERED else FAILURE_KINDS.get(status, AGENT_FAILURES)


def failure_counts(counts: Mapping[str, int], *, compact: bool = False) -> str:
    """`N agent failures · N provider errors` (`compact`: `N agent / N provider failures`), then each other kind of
    `FAILURE_KINDS` that happened."""
    agent, provider = counts.get(AGENT_FAILURES, 0), counts.get(PROVIDER_ERRORS, 0)
    always = ([f"{agent:,} agent / {provider:,} provider failures"] if compact
              else [f"{agent:,} {AGENT_FAILURES}", f"{provider:,} {PROVIDER_ERRORS}"])
    rare = [f"{counts[kind]:,} {kind}" for kind in FAILURE_KINDS.values()
            if kind != PROVIDER_ERRORS and counts.get(kind)]
    return " · ".join(always + rare)
