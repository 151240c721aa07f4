"""One rule for how a rollout ends, decided by the exception's type (`runner.outcomes`): every exception class the
project defines is raised inside a real rollout, and lands where the rule says.

`EXPECTED` names each class's outcome, so a new exception class fails here until someone decides what a rollout it
ends is: `interrupted` (our machinery: it runs again), `crashed` (a strategy's or an evaluator's own code), a provider
status of the policy, or the end of the run (a user error).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
from typing import Any

import pytest

from benchmarks.base import (
    CALL_LIMIT,
    CRASHED,
    DELIVERED,
    INTERRUPTED,
    PROVIDER_ERROR,
    TOKEN_LIMIT,
    RolloutResult,
    Task,
)
from errors import UserError
from providers.errors import AuthError
from runner.engine.rollout import RolloutModel, run_rollout
from runner.engine.spec import Sampling
from runner.outcomes import POLICY, failure_counts, failure_kind, kind_of, runs_again
from runner.store.records import RolloutKey

PACKAGES = ("errors", "datahome", "providers", "cache", "sandbox_index", "benchmarks", "runner", "reports")
ABORTS = "aborts the run"
NEVER = "never reaches a rollout"
POLICY_STATUS = "the policy's status"

EXPECTED: dict[str, str] = {
    # Our machinery: no result, the same command runs the rollout again.
    "Interruption": INTERRUPTED,
    "TeamUnavailable": INTERRUPTED,
    "_Stalled": INTERRUPTED,  # a replay worker silent too long (caught by the run: its chunk runs elsewhere)
    # A strategy's or an evaluator's own exceptions (caught inside them; if one escapes, it is their bug).
    "NoReply": CRASHED,
    "_StepError": CRASHED,
    "NoDistance": CRASHED,
    "ActionError": CRASHED,
    "PlanError": CRASHED,
    "ArgumentError": CRASHED,
    "Unscorable": CRASHED,
    "CostEnquiryCrash": CRASHED,
    "Infeasible": CRASHED,
    "UntrustedUsage": CRASHED,  # read inside the providers; a usage that escaped unjudged is a bug there
    "CallLimitReached": CALL_LIMIT,
    # Inside the cache store only: turned into misses or refusals there.
    "CorruptEntry": NEVER,
    "WrongKey": NEVER,
    # The mock server's own, in its process.
    "Refused": NEVER,
    "WireError": NEVER,
    # Inside the plan-file readers only: turned into a `DataError` naming the file.
    "NotAnArray": NEVER,
}
"""Class name -> what a rollout it ends becomes (LLM errors follow the policy; user errors end the run)."""


def project_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in the project's packages, by name."""
    found: dict[str, type[BaseException]] = {}
    for package in PACKAGES:
        root = importlib.import_module(package)
        names = [package] + [info.name for info in pkgutil.walk_packages(root.__path__, f"{package}.")]
        for name in names:
            try:
                module = importlib.import_module(name)
            except ImportError as exc:  # an optional extra (Ray, llama.cpp) missing: said, not hidden
                pytest.fail(f"{name} does not import: {exc}")
            for value in vars(module).values():
                if (inspect.isclass(value) and issubclass(value, BaseException)
                        and value.__module__.split(".")[0] in PACKAGES):
                    found[value.__name__] = value
    return found


EXCEPTIONS = project_exceptions()


def instance(cls: type[BaseException]) -> BaseException:
    try:
        return cls("boom")
    except TypeError:  # a constructor with fields of its own: the type is what is judged
        error = cls.__new__(cls)
        BaseException.__init__(error, "boom")
        return error


def expected(cls: type[BaseException]) -> str:
    if issubclass(cls, UserError | AuthError):  # a rejected key: every rollout would fail the same way
        return ABORTS
    if any(issubclass(cls, row.error) for row in POLICY):
        return POLICY_STATUS
    return EXPECTED.get(cls.__name__, "not decided: add it to EXPECTED")


def test_every_exception_class_the_project_defines_has_a_decided_outcome() -> None:
    assert len(EXCEPTIONS) > 30  # the walk found the project's classes
    undecided = sorted(name for name, cls in EXCEPTIONS.items() if expected(cls).startswith("not decided"))
    assert undecided == []
    assert set(EXPECTED) <= set(EXCEPTIONS)  # no stale entry


class Raising:
    name = "raising"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def __call__(self, task: Task, model: Any, tools: Any) -> RolloutResult:
        raise self.error


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
async def test_a_rollout_ended_by_each_exception_lands_where_the_rule_says(name: str) -> None:
    cls = EXCEPTIONS[name]
    outcome = expected(cls)
    if outcome == NEVER:
        pytest.skip(f"{name} {NEVER}")
    error = instance(cls)
    key = RolloutKey("toy", "test", "t1", "m", "raising", 0)
    model = RolloutModel(None, "m", Sampling(), 0)  # type: ignore[arg-type]
    run = run_rollout(key, Task("t1", {}), Raising(error), model, None)  # type: ignore[arg-type]
    if outcome == ABORTS:
        with pytest.raises(UserError):
            await run
        return
    record = await run
    status = kind_of(error).status if outcome == POLICY_STATUS else outcome  # type: ignore[arg-type]
    assert record.result.status == status
    assert record.error_type == name
    if status == INTERRUPTED:
        assert runs_again(record.result.status, record.error_type)  # the same command runs it again
        assert "Traceback" not in (record.result.error or "")
    if status == CRASHED:
        assert not runs_again(record.result.status, record.error_type)


async def test_a_rollout_cancelled_while_its_strategy_raises_is_not_stored() -> None:
    """A second Ctrl-C cancels the rollouts; a strategy (or the ladder under it) that turns the cancellation into an
    exception of its own must not make the rollout a stored `crashed` one."""
    started = asyncio.Event()

    class Stubborn:
        name = "stubborn"

        async def __call__(self, task: Task, model: Any, tools: Any) -> RolloutResult:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                raise ValueError("<Future cancelled> is not in deque") from None  # the adaptive limit's old bug
            raise AssertionError("not cancelled")

    key = RolloutKey("toy", "test", "t1", "m", "stubborn", 0)
    model = RolloutModel(None, "m", Sampling(), 0)  # type: ignore[arg-type]
    rollout = asyncio.ensure_future(run_rollout(key, Task("t1", {}), Stubborn(), model, None))  # type: ignore[arg-type]
    await started.wait()
    rollout.cancel()
    with pytest.raises(asyncio.CancelledError):
        await rollout


def test_progress_and_summaries_count_the_agents_failures_apart_from_the_providers_and_ours() -> None:
    statuses = ["max_steps", "invalid_action_dead_loop", TOKEN_LIMIT, CALL_LIMIT, PROVIDER_ERROR, INTERRUPTED,
                INTERRUPTED, DELIVERED]
    kinds = [failure_kind(status) for status in statuses]
    assert kinds == ["agent failures"] * 4 + ["provider errors", "interrupted", "interrupted", None]
    counts = {kind: kinds.count(kind) for kind in kinds if kind is not None}
    assert failure_counts(counts) == "4 agent failures · 1 provider errors · 2 interrupted"
    assert failure_counts({}) == "0 agent failures · 0 provider errors"  # always both, the rarer kinds when met
    assert failure_counts(counts, compact=True) == "4 agent / 1 provider failures · 2 interrupted"
