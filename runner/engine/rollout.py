"""One rollout: the strategy driven with a model bound to the rollout, its errors mapped to generic statuses.

The strategy gets a `RolloutModel`: a `ChatModel` that stamps every request with the run's model string, the
spec's sampling parameters (its `extra_body` merged into the request's `extras`) and the rollout's sample index,
counts calls against `max_calls`, and sends everything through the run's gateway. The gateway reports each call
(`CallRecord`) to `record_call`, which files it under the rollout running in the current task through a context
variable, so concurrent rollouts never mix their calls (a strategy's own subtasks inherit the variable, hence the
same rollout).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import time
import traceback
from collections.abc import Callable
from typing import Any

from benchmarks import base
from benchmarks.base import RolloutResult, Strategy, Task
from errors import UserError
from errors.redaction import redact_secrets
from providers.errors import AuthError, LLMError
from providers.interface import ChatModel, ChatRequest, ChatResponse
from runner.engine.spec import Sampling
from runner.ladder.calls import CallRecord
from runner.outcomes import interrupted_by_us, kind_of
from runner.store.records import RolloutKey, RolloutRecord


@dataclasses.dataclass(slots=True)
class _Sink:
    calls: list[CallRecord]
    observe: Callable[[CallRecord], None] | None


_sink: contextvars.ContextVar[_Sink] = contextvars.ContextVar("rollout_calls")

TRACEBACK_LINES = 30
"""How much of a crashed strategy's traceback a rollout keeps."""


class CallLimitReached(Exception):
    """The rollout asked for more LLM calls than the run's `max_calls`."""


class RunAborted(UserError):
    """An error that ends the whole run, not one rollout (a rejected API key); the rollout is not recorded."""


def record_call(call: CallRecord) -> None:
    """The gateway's `on_call` hook: files a call under the rollout running in the current task."""
    sink = _sink.get(None)
    if sink is not None:
        sink.calls.append(call)
        if sink.observe is not None:
            sink.observe(call)


class RolloutModel:
    """The `ChatModel` a strategy sees: one model, one sample, the run's sampling parameters, a call budget."""

    def __init__(self, gateway: ChatModel, model: str, sampling: Sampling, sample: int,
                 max_calls: int | None = None) -> None:
        self._gateway = gateway
        self._stamp: dict[str, Any] = {"model": model, "sample": sample}
        # Set spec values override the strategy's own; unset ones leave the benchmark's (official) values alone.
        self._stamp.update({name: value for name, value in sampling.model_dump(exclude={"extra_body"}).items()
                            if value is not None})
        self._extra_body = sampling.extra_body or {}
        """Merged into every request's `extras` (part of its cache key; the providers merge them into the body)."""
        self._max_calls = max_calls
        self.calls = 0
        self.name = model
        """The run's model string: strategies that set defaults by model, as official code does, read it."""

    def using(self, model: str) -> ChatModel:
        """Another model (one the benchmark declared in `extra_models`) through the same gateway, for this rollout:
        its calls are recorded, cached and priced as the rollout's; the spec's sampling does not apply to it."""
        return _Stamped(self._gateway, {"model": model, "sample": self._stamp["sample"]})

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if self._max_calls is not None and self.calls >= self._max_calls:
            raise CallLimitReached(f"more than max_calls = {self._max_calls} LLM calls")
        self.calls += 1
        if self._extra_body:
            request = dataclasses.replace(request, extras=tuple(sorted({**dict(request.extras),
                                                                          **self._extra_body}.items())))
        return await self._gateway.complete(dataclasses.replace(request, **self._stamp))


@dataclasses.dataclass(frozen=True, slots=True)
class _Stamped:
    """A `ChatModel` stamping fixed fields onto every request before the gateway."""

    gateway: ChatModel
    stamp: dict[str, Any]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self.gateway.complete(dataclasses.replace(request, **self.stamp))


async def run_rollout(key: RolloutKey, task: Task, strategy: Strategy, model: RolloutModel, tools: Any,
                      observe: Callable[[CallRecord], None] | None = None) -> RolloutRecord:
    """Runs one rollout to a terminal status; never raises except to abort the run or when cancelled.

    A rollout whose task is being cancelled (a second Ctrl-C, the grace period over) is never stored, whatever the
    strategy made of the cancellation (an exception of its own, a result): it raises `CancelledError`, and the same
    command runs it again. One ended by our machinery (`runner.outcomes.interrupted_by_us`) is `interrupted`.

    Args:
        key: The rollout's key.
        task: Its task.
        strategy: The benchmark's strategy named in the key.
        model: The rollout's model (see `RolloutModel`).
        tools: The benchmark's shared tools.
        observe: Sees each call as it ends (live progress).

    Raises:
        RunAborted: the provider rejected the API key (every other rollout would fail the same way).
        UserError: a configuration error surfaced by the gateway (a missing key, a model without a price).
    """
    calls: list[CallRecord] = []
    _sink.set(_Sink(calls, observe))  # this task's context only: the scheduler runs each rollout in its own task
    started = time.time()
    error_type: str | None = None
    try:
        result = await strategy(task, model, tools)
        if not isinstance(result, RolloutResult):
            raise TypeError(f"strategy {strategy.name!r} returned {type(result).__name__}, not a RolloutResult")
    except AuthError as exc:
        if isinstance(exc, UserError):  # a missing key: its message already says which variable to set
            raise
        raise RunAborted(f"{key.model}: the provider rejected the credentials: {exc}") from exc
    except UserError:
        raise  # the run's configuration is wrong (e.g. a model without a price under a cap): every rollout would fail
    except LLMError as exc:
        error_type = type(exc).__name__
        result = RolloutResult(kind_of(exc).status, error=str(exc))
    except CallLimitReached as exc:
        error_type = type(exc).__name__
        result = RolloutResult(base.CALL_LIMIT, error=str(exc))
    except Exception as exc:
        error_type = type(exc).__name__
        if interrupted_by_us(exc):  # not the strategy's doing: no result, the same command runs it again
            result = RolloutResult(base.INTERRUPTED, error=redact_secrets(f"{error_type}: {exc}"))
        else:  # a strategy bug: recorded with its traceback (stored: no secret in it), the run goes on
            trace = traceback.format_exc().splitlines()[-TRACEBACK_LINES:]
            result = RolloutResult(base.CRASHED, error=redact_secrets("\n".join(trace)))
    if (current := asyncio.current_task()) is not None and current.cancelling():
        raise asyncio.CancelledError(f"rollout {key} cancelled")
    return RolloutRecord(key, result, calls, error_type, started, time.time())
