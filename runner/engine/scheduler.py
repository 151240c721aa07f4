"""Runs thousands of rollouts at once: bounded per model and globally, stoppable, with a spend-cap gate.

One feeder task per model walks that model's keys in order. For each key it takes a slot of the model's semaphore
and of the global one, then asks the admission gate (the spend cap) and the stop flag whether a new rollout may
start; only then is the rollout spawned, in an `asyncio.TaskGroup`, so a failure that must end the run (a rejected
API key) cancels everything cleanly. Feeders waiting for a slot hold no rollout, so thousands of keys cost
nothing until admitted.

`stop()` (SIGINT / SIGTERM) stops admission at once and gives in-flight rollouts `grace_s` seconds to finish;
then they are cancelled. Cancelled rollouts are simply not recorded: a resumed run starts them again and their
earlier calls come back from the cache for free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

from runner.store.records import RolloutKey

COMPLETED, INTERRUPTED, BUDGET = "completed", "interrupted", "budget"


class Scheduler:
    """Admission and concurrency for one session's rollouts.

    Args:
        concurrency: Rollouts in flight, all models together.
        per_model: Rollouts in flight per model label (missing or None: only the global bound).
        admit: Called before each rollout starts; False means the spend cap is reached: admission stops for good.
        grace_s: How long in-flight rollouts may run on after `stop()`.
    """

    def __init__(self, concurrency: int, per_model: Mapping[str, int | None] | None = None, *,
                 admit: Callable[[], bool] = lambda: True, grace_s: float = 30.0) -> None:
        self._global = asyncio.Semaphore(concurrency)
        self._per_model = {label: asyncio.Semaphore(n) for label, n in (per_model or {}).items() if n}
        self._admit = admit
        self._grace_s = grace_s
        self._closed = False  # no more admissions (stop or spend cap)
        self._interrupted = False
        self._in_flight: set[asyncio.Task[None]] = set()
        self._watchdog: asyncio.Task[None] | None = None
        self._cut = False
        self.outcome = COMPLETED
        """`completed`, `interrupted` (stopped) or `budget` (the admission gate said no)."""
        self.not_started = 0
        """Keys never admitted because of a stop or the spend cap."""

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def stop(self) -> None:
        """Stop admitting; cancel whatever is still running after the grace period. A second call cancels now."""
        if self._interrupted:
            self._cancel_in_flight()
            return
        self.outcome = INTERRUPTED
        self._interrupted = self._closed = True
        self._watchdog = asyncio.get_running_loop().create_task(self._cancel_after_grace())

    async def _cancel_after_grace(self) -> None:
        await asyncio.sleep(self._grace_s)
        self._cancel_in_flight()

    @property
    def cut(self) -> bool:
        """Whether the rollouts in flight are being cancelled: the grace period after `stop()` ended, or `stop()`
        came twice (what rollouts run elsewhere, `execute`'s `RemoteRun`, are cut short by too)."""
        return self._cut

    def _cancel_in_flight(self) -> None:
        self._cut = True
        for task in list(self._in_flight):
            task.cancel()

    async def run(self, keys: Sequence[RolloutKey], run_one: Callable[[RolloutKey], Awaitable[None]]) -> str:
        """Runs `run_one` for every key (unless stopped) and returns the outcome.

        `run_one` must record its own result. An exception from it ends the run: the other rollouts are cancelled
        and the first exception is raised (several rollouts often fail at once for the same reason, e.g. a revoked
        key; the whole group is its `__cause__`).
        """
        by_model: dict[str, list[RolloutKey]] = {}
        for key in keys:
            by_model.setdefault(key.model, []).append(key)
        try:
            async with asyncio.TaskGroup() as group:
                for label, model_keys in by_model.items():
                    group.create_task(self._feed(group, model_keys, self._per_model.get(label), run_one),
                                      name=f"feeder {label}")
        except BaseExceptionGroup as failures:
            raise failures.exceptions[0] from failures
        finally:
            if self._watchdog is not None:
                self._watchdog.cancel()
        return self.outcome

    async def _feed(self, group: asyncio.TaskGroup, keys: list[RolloutKey], model_slots: asyncio.Semaphore | None,
                    run_one: Callable[[RolloutKey], Awaitable[None]]) -> None:
        for position, key in enumerate(keys):
            if model_slots is not None:
                await model_slots.acquire()
            await self._global.acquire()
            if self._closed or not self._admitted():
                self._release(model_slots)
                self.not_started += len(keys) - position
                return
            task = group.create_task(self._one(key, run_one, model_slots), name=str(key))
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)
            # Free slots are taken without waiting: yield, or admitting thousands at once would hog the loop.
            await asyncio.sleep(0)

    def _admitted(self) -> bool:
        if self._admit():
            return True
        self.outcome = BUDGET
        self._closed = True  # the cap is global: every feeder stops, in-flight rollouts run to their end
        return False

    async def _one(self, key: RolloutKey, run_one: Callable[[RolloutKey], Awaitable[None]],
                   model_slots: asyncio.Semaphore | None) -> None:
        try:
            await run_one(key)
        finally:
            self._release(model_slots)

    def _release(self, model_slots: asyncio.Semaphore | None) -> None:
        self._global.release()
        if model_slots is not None:
            model_slots.release()
