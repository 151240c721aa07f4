"""Rollouts on the actors of a Ray cluster: `tripbench run SPEC --ray-address ADDRESS` (`pip install 'tripbench[ray]'`).

The driver (the `tripbench run` process) keeps the run: its results store, the resume plan, evaluation and outputs.
It hands the pending rollouts to actors in chunks; each actor prepares the same spec, opens its own gateway (the
cache, the spend cap and the rate limits are the team's PostgreSQL: `[team]` is required) and runs its chunk with its
share of the spec's `concurrency`, returning the finished records, which the driver stores: it is the only writer of
the results store. An actor that dies (its node lost, an out-of-memory kill) loses its chunk's answers, not its calls:
the chunk goes to a new actor, minus the rollouts already stored, so no rollout is stored twice, and the calls the
dead actor made come back from the team's cache.

Actors read API keys and the team database's URL from their own environment (set them where `ray start` runs): no
key travels through Ray. They read the spec's data at the same paths as the driver (a shared file system, or the
same layout on every node).

Joining the cluster is bounded: Ray retries an address where nothing answers for many minutes, in a call no signal
interrupts, so it runs in a thread of its own (`_Membership`), given up after `CONNECT_S` (exit 1, naming the address)
or at once on Ctrl-C / SIGTERM (exit 130); an address where nothing listens is refused before Ray is asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

from benchmarks.base import BUDGET_EXHAUSTED
from errors import UserError
from providers.prices import PriceTable
from runner.engine.execute import RemoteRun
from runner.engine.prepared import Prepared, prepare
from runner.engine.scheduler import BUDGET, COMPLETED, INTERRUPTED, Scheduler
from runner.engine.session import EngineSession, Purpose
from runner.engine.spec import RunSpec
from runner.store.records import RolloutKey, RolloutRecord

CHUNKS_PER_ACTOR = 4
"""Chunks the pending rollouts are cut into per actor, at least: a dead actor loses at most about this share of its
work, and a slow chunk holds up little at the end."""
MAX_CHUNK = 64
"""Rollouts in one chunk at most."""
CLOSE_S = 30.0
"""How long actors get to close their gateways at the end (writing the cache entries still queued)."""
POLL_S = 0.2
"""How often the driver looks whether a stop has cut the chunks running short."""
MAX_ATTEMPTS = 3
"""Actors a chunk is given to before the run fails (a chunk that kills every actor it meets is a bug, not bad luck)."""
CONNECT_S = 30.0
"""How long joining a cluster (`ray.init`) may take before the run gives up."""
LOCAL_START_S = 120.0
"""How long starting a `local` cluster may take (about 10 s on a busy 2-core machine) before the run gives up."""
HEAD_HINT = "is it the address of a running cluster's head (`ray start --head` prints it)?"


class RolloutWorker:
    """A Ray actor: the spec prepared once, a gateway of its own, chunks of rollouts run with `concurrency`, calls
    priced at the run's price table (`prices`), not at whatever the actor's machine holds."""

    def __init__(self, spec_path: str, spec: RunSpec, concurrency: int, prices: PriceTable) -> None:
        self._session = EngineSession(prepare(Path(spec_path), spec=spec, prices=prices), Purpose.REMOTE_ACTOR)
        self._concurrency = concurrency
        self._opening: asyncio.Task[EngineSession] | None = None

    async def run(self, keys: list[RolloutKey]) -> list[RolloutRecord]:
        """Runs a chunk; returns its finished rollouts (all of them: a rollout's failure is its record)."""
        if self._opening is None:  # opened in the actor's event loop on its first chunk: this actor joins the team,
            # whose database holds the cache, the spend cap and the rate limits; the actor's chunks run concurrently:
            # the first opens, the others wait for it
            self._opening = asyncio.ensure_future(self._session.open())
        session = await self._opening
        records: list[RolloutRecord] = []

        async def run_one(key: RolloutKey) -> None:
            records.append(await session.rollout(key))
        await Scheduler(self._concurrency).run(keys, run_one)
        return records

    async def close(self) -> None:
        """Writes the cache entries still queued and closes what the actor opened."""
        await self._session.aclose()


@dataclass(slots=True)
class _Chunk:
    keys: list[RolloutKey]
    attempts: int = 0


@dataclass(slots=True)
class _Pool:
    """The driver's actors and the chunks each is running."""

    make: Callable[[], Any]
    actors: list[Any] = field(default_factory=list)
    running: dict[asyncio.Future[Any], tuple[Any, _Chunk]] = field(default_factory=dict)

    def busy(self, actor: Any) -> int:
        return sum(1 for running_actor, _ in self.running.values() if running_actor is actor)

    def submit(self, actor: Any, chunk: _Chunk) -> None:
        chunk.attempts += 1
        self.running[asyncio.wrap_future(actor.run.remote(chunk.keys).future())] = (actor, chunk)

    def replace(self, dead: Any) -> int:
        """Drops a dead actor (its other chunks fail on their own) and starts a new one in its place; returns 1 the
        first time an actor is replaced, 0 after (its other chunks)."""
        if dead not in self.actors:
            return 0
        self.actors.remove(dead)
        with contextlib.suppress(Exception):
            ray.kill(dead)
        self.actors.append(self.make())
        return 1


@dataclass(slots=True)
class RayOutcome:
    """How the rollouts went on the cluster."""

    outcome: str
    """As `Scheduler.run` returns it: `completed`, `interrupted` or `budget`."""
    actors: int = 0
    """Actors started at first."""
    died: int = 0
    """Actors that died while running chunks (each replaced by a new one)."""
    rerun: int = 0
    """Rollouts of dead actors' chunks given to another actor."""


def on_ray(address: str) -> RemoteRun:
    """`execute`'s `remote`: `run_on_ray` on the cluster at `address`, with its note for the run's report."""
    async def run(prepared: Prepared, pending: Sequence[RolloutKey], save: Callable[[RolloutRecord], Awaitable[None]],
                  scheduler: Scheduler) -> tuple[str, str]:
        stored = 0

        async def counted(record: RolloutRecord) -> None:
            nonlocal stored
            await save(record)
            stored += 1
        done = await run_on_ray(address, prepared, pending, counted, scheduler)
        died = (f"; {done.died} died, their chunks' {done.rerun} unstored rollouts ran again on new actors"
                if done.died else "")
        return done.outcome, f"Ray: {done.actors} actors, {stored} rollouts stored{died}"
    return run


async def run_on_ray(address: str, prepared: Prepared, pending: Sequence[RolloutKey],
                     save: Callable[[RolloutRecord], Awaitable[None]], scheduler: Scheduler) -> RayOutcome:
    """Runs `pending` on the actors of the Ray cluster at `address` (`local`: a new one on this machine), storing each
    record through `save` (here, in the driver), once per key.

    `scheduler` is the session's own: its `stop()` (Ctrl-C, SIGTERM) stops handing out chunks; the chunks running get
    its grace period (a second stop cuts it short), then their actors are killed (their rollouts run again on
    resume).

    Raises:
        UserError: the cluster cannot be joined within `CONNECT_S`, or a chunk failed on `MAX_ATTEMPTS` actors.
    """
    membership = _Membership(address)
    try:
        if not await membership.join(scheduler):
            return RayOutcome(INTERRUPTED)
        return await _drive(prepared, pending, save, scheduler)
    finally:
        await membership.leave()


class _Membership:
    """This process in the cluster at `address` (`local`: a new one on this machine), joined and left by a daemon
    thread of its own.

    The thread lives as long as the membership: `ray.init` may hang for minutes on an address where no cluster
    answers, and the run gives up on it (the thread, left behind, does not keep the process alive); and the processes
    it starts for a `local` cluster are killed when the thread that started them ends (PR_SET_PDEATHSIG).
    """

    def __init__(self, address: str) -> None:
        self._address = address
        self._within = LOCAL_START_S if address == "local" else CONNECT_S
        self._loop = asyncio.get_running_loop()
        self._joined: asyncio.Future[None] = self._loop.create_future()
        self._left: asyncio.Future[None] = self._loop.create_future()
        self._leaving = threading.Event()

    async def join(self, scheduler: Scheduler) -> bool:
        """Joins within `CONNECT_S` (`LOCAL_START_S` for `local`); False when `scheduler` is stopped first.

        Raises:
            UserError: nothing listens at the address, Ray refused it, or it did not answer in time.
        """
        deadline = self._loop.time() + self._within
        probing = asyncio.ensure_future(_listening(self._address))
        try:
            if not await self._until(probing, scheduler, deadline):
                return False
        finally:
            probing.cancel()
        threading.Thread(target=self._member, name="ray membership", daemon=True).start()
        try:
            return await self._until(self._joined, scheduler, deadline)
        except UserError:
            raise
        except Exception as exc:  # what `ray.init` raised (a refused address, a version mismatch)
            raise UserError(f"--ray-address {self._address}: no Ray cluster could be joined ({exc})") from None

    async def leave(self) -> None:
        """Leaves the cluster (shuts a `local` one down); a join still under way leaves as soon as it is done."""
        self._leaving.set()
        if not self._joined.done():
            self._joined.cancel()  # what the join ends with is nobody's
        elif not self._joined.cancelled() and self._joined.exception() is None:
            await self._left

    def _member(self) -> None:
        try:
            if self._address == "local":  # a new cluster of this machine: no dashboard (a web server nobody asked for)
                ray.init(address="local", logging_level=logging.ERROR, log_to_driver=False, include_dashboard=False)
            else:
                ray.init(address=self._address, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as exc:  # handed to the run, which says what it was
            self._tell(self._joined, exc)
            return
        self._tell(self._joined, None)
        self._leaving.wait()
        try:
            ray.shutdown()
        finally:
            self._tell(self._left, None)

    def _tell(self, future: asyncio.Future[None], error: Exception | None) -> None:
        def settle() -> None:
            if future.done():
                return
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)
        with contextlib.suppress(RuntimeError):  # the run ended meanwhile: its loop is closed
            self._loop.call_soon_threadsafe(settle)

    async def _until(self, waited: asyncio.Future[None], scheduler: Scheduler, deadline: float) -> bool:
        """Waits for `waited` (raising what it raises); False when `scheduler` is stopped first.

        Raises:
            UserError: the loop's clock passed `deadline`.
        """
        while not waited.done():
            if scheduler.outcome == INTERRUPTED:
                return False
            if (left := deadline - self._loop.time()) <= 0:
                raise UserError(f"--ray-address {self._address}: no Ray cluster answered within {self._within:.0f} "
                                f"s; {HEAD_HINT}")
            await asyncio.wait([waited], timeout=min(POLL_S, left))
        waited.result()
        return True


async def _listening(address: str) -> None:
    """Refuses at once an address `HOST:PORT` (or `ray://HOST:PORT`) where nothing accepts a connection, rather than
    let Ray retry it for minutes; `auto` and `local` pass.

    Raises:
        UserError: the connection was refused, or the host is unknown.
    """
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return
    try:
        _, writer = await asyncio.open_connection(host.strip("[]"), int(port))
    except OSError as exc:  # asyncio's own message holds no reason: the errno's has
        why = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)
        raise UserError(f"--ray-address {address}: no Ray cluster there ({why}); {HEAD_HINT}") from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _drive(prepared: Prepared, pending: Sequence[RolloutKey], save: Callable[[RolloutRecord], Awaitable[None]],
                 scheduler: Scheduler) -> RayOutcome:
    cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
    n_actors = max(1, min(cpus, len(pending)))
    concurrency = max(1, math.ceil(prepared.spec.concurrency / n_actors))
    size = max(1, min(MAX_CHUNK, math.ceil(len(pending) / (n_actors * CHUNKS_PER_ACTOR))))
    chunks = deque(_Chunk(list(pending[i:i + size])) for i in range(0, len(pending), size))
    worker = ray.remote(num_cpus=1)(RolloutWorker)
    pool = _Pool(lambda: worker.remote(str(prepared.spec_path), prepared.spec, concurrency, prepared.prices))
    pool.actors = [pool.make() for _ in range(n_actors)]
    stored: set[RolloutKey] = set()
    result = RayOutcome(COMPLETED, actors=n_actors)
    try:
        # cut: the grace period after a stop ended, or a second stop came; the chunks still running are dropped
        while (chunks or pool.running) and not scheduler.cut:
            if scheduler.outcome == INTERRUPTED:
                chunks.clear()
            for actor in list(pool.actors):  # two chunks per actor: the next is queued while one runs
                while chunks and pool.busy(actor) < 2:
                    pool.submit(actor, chunks.popleft())
            if not pool.running:
                break
            done, _ = await asyncio.wait(list(pool.running), timeout=POLL_S, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                actor, chunk = pool.running.pop(future)
                try:
                    records: list[RolloutRecord] = future.result()
                except (ActorDiedError, ActorUnavailableError, RayActorError):
                    if chunk.attempts >= MAX_ATTEMPTS:
                        raise UserError(f"a chunk of {len(chunk.keys)} rollouts (first {chunk.keys[0]}) ended the "
                                        f"actor running it {chunk.attempts} times") from None
                    result.died += pool.replace(actor)
                    chunk.keys = [key for key in chunk.keys if key not in stored]
                    result.rerun += len(chunk.keys)
                    chunks.appendleft(chunk)
                    continue
                for record in records:
                    if record.key not in stored:
                        stored.add(record.key)
                        await save(record)
                    if record.result.status == BUDGET_EXHAUSTED and result.outcome == COMPLETED:
                        result.outcome = BUDGET  # the shared cap is reached: no new chunk starts
                        chunks.clear()
        if scheduler.outcome == INTERRUPTED:
            result.outcome = INTERRUPTED
    finally:
        if not pool.running:  # each actor writes the cache entries it still holds; a dropped chunk's are lost
            closing = [asyncio.wrap_future(actor.close.remote().future()) for actor in pool.actors]
            await asyncio.wait(closing, timeout=CLOSE_S)
        for actor in pool.actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
    return result
