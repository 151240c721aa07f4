"""A replay's rollouts in worker processes: `cache = "replay"` runs its rollouts on every core of the machine.

A replay answers every call from the cache, so its rollouts are pure computation (the agent, its tools, the cache's
reads) and one Python process runs them on one core. A replay cannot spend money nor meet a rate limit, so nothing
needs sharing between processes but the cache folder, which diskcache lets several processes read. Each worker opens
the cache, the benchmark's tools and a gateway of its own, runs the chunks of rollouts it is handed, scores each
finished rollout (`Benchmark.evaluate`, on its result as the store will give it back) and sends the record back with
its evaluations. This process stays the only writer of the results store; its scoring pass, which would read every
rollout back, finds them scored.

The workers are forked from the prepared run before its event loop starts (`ReplayWorkers.fork`): a fork copies
what `prepare` loaded and imported, where a fresh interpreter would spend a second on it again; and with no thread
yet, no lock held by one is copied half-taken. Nothing is open yet but the run directory's lock, which each worker
closes at once. A session with too few pending rollouts to gain from them ends them unused.

A worker ignores Ctrl-C and SIGTERM: the run's own stop (`Scheduler.stop`) hands out no new chunk and gives the
chunks running the grace period (a second signal cuts it short), then ends the workers; a rollout not stored runs
again on resume. A worker whose parent dies finds its pipe closed at its next message and ends.

Besides its records, a worker sends a heartbeat from a thread of its own, so that a worker busy for long (an
evaluator asking a web API between two records) is not taken for a stalled one. A worker that sends nothing, not even
a heartbeat, for `stall_s()` seconds (stopped by a SIGSTOP, frozen) is killed, and the rollouts of its chunk not yet
stored go to the other workers, as a warning says: the run completes with the results it would have had. A worker
that ends on its own (killed, out of memory) fails the session instead; either way nothing of its chunk is stored, so
the same command runs it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.base import Task
from cache.modes import CacheMode
from errors import Interruption, UserError
from runner.engine.execute import RemoteRun, Spread
from runner.engine.prepared import Prepared
from runner.engine.scheduler import COMPLETED, INTERRUPTED, Scheduler
from runner.engine.session import EngineSession, Purpose
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.writer import as_stored

log = logging.getLogger(__name__)

MIN_ROLLOUTS = 200
"""Pending rollouts per worker below which a replay stays in this process (a worker's gain is smaller than what
handing records across costs)."""
MIN_CHUNK = 8
"""Rollouts in the smallest chunk a worker is handed. Chunks shrink as the rollouts left do (a share of them per
worker, halved), so the workers finish close together."""
SEND_EVERY = 16
"""Finished rollouts a worker scores together before it sends them (the benchmark's evaluator opens its data once
per call)."""
CLOSE_S = 10.0
"""How long a worker gets to close its cache (its hit counts) after its last chunk, before it is killed."""
POLL_S = 0.2
"""How often the end of a stopped run's grace period, and a worker's silence, are looked at."""
STALL_S = 30.0
"""Seconds a worker with a chunk may send nothing, its heartbeat included, before it is killed and its chunk goes to
another worker; `STALL_ENV` sets another value."""
STALL_ENV = "TRIPBENCH_REPLAY_STALL_S"
BEATS_PER_STALL = 10
"""Heartbeats a worker sends in `stall_s()` seconds: a few late ones (a loaded machine) are no stall."""
_DONE = "done"
_RECORD = "record"
_FAILED = "failed"
_ALIVE = "alive"


@contextlib.contextmanager
def replay_workers(prepared: Prepared, lock_fd: int | None = None) -> Iterator[Spread | None]:
    """Worker processes for `prepared` when it is a replay that can use them, as `execute`'s `spread`; None when not
    (the rollouts run in this process). Call it before any event loop or thread starts; the workers end on leaving.

    `lock_fd`: the run directory's lock when this process holds it already (the workers close their copy).
    """
    workers = ReplayWorkers.fork(prepared, lock_fd)
    if workers is None:
        yield None
        return
    try:
        yield workers.spread
    finally:
        workers.end()


def worker_count(prepared: Prepared, rollouts: int) -> int:
    """How many worker processes a replay of `rollouts` rollouts uses: the spec's `processes`, else one per core;
    `MIN_ROLLOUTS` rollouts each at least; 0 for fewer than two, or for a run that is not a replay of a cache folder
    (a team database's cache, a batch API: both wait on the network and share their state through this process)."""
    spec = prepared.spec
    if spec.cache is not CacheMode.REPLAY or spec.team is not None or prepared.batched:
        return 0
    workers = min(spec.processes or len(os.sched_getaffinity(0)), rollouts // MIN_ROLLOUTS)
    return workers if workers >= 2 else 0


class ReplayWorkers:
    """Forked worker processes, idle until `spread` hands them a session's rollouts."""

    def __init__(self, workers: list[_Worker], concurrency: int, stall_s: float) -> None:
        self._workers = workers
        self._concurrency = concurrency
        self._stall_s = stall_s

    @classmethod
    def fork(cls, prepared: Prepared, lock_fd: int | None) -> ReplayWorkers | None:
        """Forks `worker_count` workers; None when that is 0, or when a thread runs already (a fork copies a
        thread's locks as they are, and none of its threads)."""
        count = worker_count(prepared, len(prepared.keys))
        if count == 0 or threading.active_count() > 1:
            return None
        concurrency = max(1, math.ceil(prepared.spec.concurrency / count))
        limit = stall_s()
        context = multiprocessing.get_context("fork")
        workers: list[_Worker] = []
        for _ in range(count):
            workers.append(_Worker.fork(context, prepared, concurrency, limit, lock_fd, [w.conn for w in workers]))
        return cls(workers, concurrency, limit)

    def spread(self, prepared: Prepared, pending: int) -> RemoteRun | None:
        """`execute`'s `spread`: the workers, when the session's `pending` rollouts are enough for them (else they
        end now)."""
        if pending < MIN_ROLLOUTS * len(self._workers):
            self.end()
            return None

        async def run(prepared: Prepared, keys: Sequence[RolloutKey],
                      save: Callable[[RolloutRecord], Awaitable[None]], scheduler: Scheduler) -> tuple[str, str]:
            outcome, chunks = await self._run(keys, save, scheduler)
            note = f"replayed in {len(self._workers)} worker processes"
            if chunks.stalled:
                note += (f"; killed after {self._stall_s:g} s without a word: {chunks.stalled} (the "
                         f"{chunks.given_back} rollouts of their chunks not stored ran in the others)")
            return outcome, note
        return run

    async def _run(self, pending: Sequence[RolloutKey], save: Callable[[RolloutRecord], Awaitable[None]],
                   scheduler: Scheduler) -> tuple[str, _Chunks]:
        """Runs `pending` on the workers, storing each record through `save` (here) as it arrives; returns the
        outcome (`completed`, or `interrupted` when `scheduler` was stopped) and the chunks (their stalls counted).

        Raises:
            UserError: a worker ended without a word (killed, out of memory), every worker stalled, or the error a
                rollout raised to end the run (a rejected key, a configuration error).
        """
        chunks = _Chunks(deque(pending), len(self._workers), 2 * self._concurrency)
        drivers = [asyncio.ensure_future(_drive(worker, chunks, save, scheduler)) for worker in self._workers]
        try:
            waiting = set(drivers)
            while waiting and not scheduler.cut:  # cut: the grace period after a stop ended, or a second stop came
                done, waiting = await asyncio.wait(waiting, timeout=POLL_S, return_when=asyncio.FIRST_EXCEPTION)
                for driver in done:
                    driver.result()
        finally:  # each worker closes its cache (its hit counts), unless the run is cut short
            await asyncio.to_thread(self.end, 0.0 if scheduler.cut else CLOSE_S)
            for driver in drivers:
                driver.cancel()
            await asyncio.gather(*drivers, return_exceptions=True)
        if scheduler.outcome == INTERRUPTED:
            return INTERRUPTED, chunks
        if chunks.keys:  # each worker stalled in turn: a chunk that hangs any worker, or a machine out of resources
            raise UserError(f"every replay worker process sent nothing for {self._stall_s:g} s and was killed; "
                            f"{len(chunks.keys)} rollouts were not run: the rollouts stored so far are kept, and the "
                            "same command runs the others")
        return COMPLETED, chunks

    def end(self, wait_s: float = CLOSE_S) -> None:
        """Tells every worker to stop and waits `wait_s` seconds at most for each to end, then kills it."""
        for worker in self._workers:
            worker.end(wait_s)


def stall_s() -> float:
    """`STALL_S`, or the seconds `STALL_ENV` holds."""
    given = os.environ.get(STALL_ENV, "").strip()
    if not given:
        return STALL_S
    try:
        seconds = float(given)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise UserError(f"${STALL_ENV} = {given!r}: expected the seconds a replay worker may send nothing before "
                        "it is killed, a number above 0")
    return seconds


@dataclass(slots=True)
class _Chunks:
    """The rollouts not yet handed out, taken a chunk at a time; a stalled worker's unstored rollouts come back."""

    keys: deque[RolloutKey]
    workers: int
    largest: int
    out: int = 0
    """Chunks handed out and not yet finished (whose rollouts may come back)."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a chunk finishes or comes back."""
    stalled: int = 0
    """Workers killed for their silence."""
    given_back: int = 0
    """Rollouts of their chunks that had not come back."""

    async def take(self, scheduler: Scheduler) -> list[RolloutKey] | None:
        """The next chunk; None once the run is stopped, or every rollout is done. With none left to take while
        other chunks run, waits for them: a stalled worker's comes back."""
        while not self.keys and self.out and scheduler.outcome != INTERRUPTED:
            self.changed.clear()
            await self.changed.wait()
        if not self.keys or scheduler.outcome == INTERRUPTED:
            return None
        self.out += 1
        size = max(MIN_CHUNK, min(self.largest, math.ceil(len(self.keys) / (2 * self.workers))))
        return [self.keys.popleft() for _ in range(min(size, len(self.keys)))]

    def finished(self, unstored: Sequence[RolloutKey] = ()) -> None:
        """A chunk taken is done; `unstored`: its rollouts a stalled worker did not send, to be taken again first."""
        self.keys.extendleft(reversed(unstored))
        self.out -= 1
        self.changed.set()


async def _drive(worker: _Worker, chunks: _Chunks, save: Callable[[RolloutRecord], Awaitable[None]],
                 scheduler: Scheduler) -> None:
    """Hands `worker` one chunk after another, storing its records, until no chunk is left or the run is stopped;
    kills it if it stalls, giving its chunk's unstored rollouts back.

    A record is stored while the next ones are read, and a finished chunk's worker gets the next chunk at once: a
    worker never waits for the results store.
    """
    async def store(record: RolloutRecord) -> None:
        await save(record)
    try:
        async with asyncio.TaskGroup() as saving:
            while (chunk := await chunks.take(scheduler)) is not None:
                worker.send(chunk)
                unstored = dict.fromkeys(chunk)
                try:
                    while (record := await worker.receive()) is not None:
                        unstored.pop(record.key, None)
                        saving.create_task(store(record))
                except _Stalled:
                    await asyncio.to_thread(worker.kill)
                    chunks.stalled += 1
                    chunks.given_back += len(unstored)
                    chunks.finished(list(unstored))
                    log.warning("a replay worker process (pid %d) sent nothing for %g s: killed; the %d rollouts "
                                "of its chunk not stored run in the other workers", worker.process.pid, worker.stall_s,
                                len(unstored))
                    return
                chunks.finished()
            worker.send(None)  # no more work: the worker closes what it opened and ends
    except BaseExceptionGroup as failures:
        raise failures.exceptions[0] from failures


class _Stalled(Interruption):
    """A worker sent nothing for `stall_s()` seconds (our machinery: its rollouts run again elsewhere)."""


@dataclass(slots=True)
class _Worker:
    """One worker process and this end of its pipe."""

    process: Any  # the fork context's process class (untyped in multiprocessing)
    conn: Connection
    stall_s: float
    """How long it may send nothing, its heartbeat included, before it counts as stalled (`stall_s()`)."""
    reading: asyncio.Future[Any] | None = None
    """The pipe's next message, being read (in a thread): kept while the worker is silent, not read twice."""

    @classmethod
    def fork(cls, context: Any, prepared: Prepared, concurrency: int, stall_s: float, lock_fd: int | None,
             others: list[Connection]) -> _Worker:
        """A new worker; `others`: this end of the workers' pipes forked before (the new one closes its copies)."""
        ours, theirs = context.Pipe()
        process = context.Process(target=serve, args=(theirs, [ours, *others], prepared, concurrency,
                                                       stall_s / BEATS_PER_STALL, lock_fd),
                                  name="tripbench replay worker", daemon=True)
        process.start()
        theirs.close()
        return cls(process, ours, stall_s)

    def send(self, keys: list[RolloutKey] | None) -> None:
        with contextlib.suppress(OSError):  # a worker gone: its next receive says so
            self.conn.send(keys)

    async def receive(self) -> RolloutRecord | None:
        """The worker's next finished record; None once its chunk is done.

        Raises:
            _Stalled: nothing came, not even a heartbeat, for `stall_s` seconds.
            UserError: the worker ended without a word, or the error a rollout raised to end the run.
        """
        while (message := await self._message())[0] == _ALIVE:
            pass
        kind, value = message
        if kind == _FAILED:
            raise value
        return value if kind == _RECORD else None

    async def _message(self) -> tuple[str, Any]:
        """The worker's next message. Its silence is counted in this process's own time, a poll at a time: a pause of
        the whole run (Ctrl-Z, a suspended machine) stops its workers too and is no stall.

        Raises:
            _Stalled: nothing came for `stall_s` seconds.
            UserError: the worker ended without a word.
        """
        if self.reading is None:
            self.reading = asyncio.ensure_future(asyncio.to_thread(self.conn.recv))
            # read once the worker is killed, or never (the run cut short): its error is nobody's
            self.reading.add_done_callback(lambda read: read.cancelled() or read.exception())
        silent, polled = 0.0, time.monotonic()
        while not self.reading.done():
            await asyncio.wait([self.reading], timeout=POLL_S)
            now = time.monotonic()
            silent += min(now - polled, 2 * POLL_S)
            polled = now
            if silent >= self.stall_s and not self.reading.done():
                raise _Stalled(f"no word from the worker for {self.stall_s:.0f} s")
        reading, self.reading = self.reading, None
        try:
            message: tuple[str, Any] = reading.result()
        except (EOFError, OSError):
            self.process.join(1.0)
            raise UserError(f"a replay worker process ended unexpectedly (exit code {self.process.exitcode}); the "
                            "rollouts stored so far are kept, and the same command runs the others") from None
        return message

    def kill(self) -> None:
        """Ends a stalled worker at once (a SIGKILL ends a stopped process too)."""
        self.process.kill()
        self.process.join()

    def end(self, wait_s: float) -> None:
        """Tells the worker to stop, waits `wait_s` seconds at most for it to end, then kills it."""
        if self.conn.closed:
            return
        self.send(None)
        self.process.join(wait_s)
        if self.process.is_alive():
            self.kill()
        self.conn.close()


def serve(conn: Connection, parents: list[Connection], prepared: Prepared, concurrency: int, beat_s: float,
          lock_fd: int | None) -> None:
    """A worker's life, from the fork: run each chunk received until told to stop, a heartbeat every `beat_s`
    seconds."""
    for signum in (signal.SIGINT, signal.SIGTERM):  # sent to the whole process group (Ctrl-C, a job scheduler),
        signal.signal(signum, signal.SIG_IGN)  # they stop the run: the parent decides what its workers do
    for end in parents:  # the parent's ends of the pipes: each closes when the parent's copy does (at its death too)
        end.close()
    if lock_fd is not None:
        os.close(lock_fd)  # the run directory stays locked only as long as its run's process lives
    outbox = _Outbox(conn)
    threading.Thread(target=outbox.beat, args=(beat_s,), name="heartbeat", daemon=True).start()
    with contextlib.suppress(EOFError, BrokenPipeError):  # the parent is gone: nobody to report to
        asyncio.run(_serve(conn, outbox, prepared, concurrency))


class _Outbox:
    """A worker's end of its pipe as its two threads send on it, one message at a time: the event loop's records, the
    heartbeat thread's beats."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._sending = threading.Lock()

    def send(self, message: tuple[str, Any]) -> None:
        with self._sending:
            self._conn.send(message)

    def beat(self, every_s: float) -> None:
        """Sends a heartbeat every `every_s` seconds, until the pipe is closed (the parent is gone)."""
        while True:
            time.sleep(every_s)
            try:
                self.send((_ALIVE, None))
            except OSError:
                return


async def _serve(conn: Connection, outbox: _Outbox, prepared: Prepared, concurrency: int) -> None:
    tasks = {task.id: task for task in prepared.tasks}
    async with EngineSession(prepared, Purpose.REPLAY_WORKER) as session:
        finished: list[RolloutRecord] = []

        async def run_one(key: RolloutKey) -> None:
            finished.append(await session.rollout(key))
            if len(finished) >= SEND_EVERY:
                _send_scored(outbox, prepared, tasks, finished)
        while (keys := conn.recv()) is not None:
            try:
                await Scheduler(concurrency).run(keys, run_one)
                _send_scored(outbox, prepared, tasks, finished)
            except Exception as exc:  # a rollout error that ends the run (`run_rollout`): the parent raises it
                try:
                    outbox.send((_FAILED, exc))
                except (pickle.PicklingError, TypeError, AttributeError):  # an error that does not pickle
                    outbox.send((_FAILED, UserError(f"{type(exc).__name__}: {exc}")))
                return
            outbox.send((_DONE, None))


def _send_scored(outbox: _Outbox, prepared: Prepared, tasks: Mapping[str, Task], records: list[RolloutRecord]
                 ) -> None:
    """Scores `records` in every evaluator mode of the run, as its scoring pass would once they are stored, sends
    them, and empties the list. A mode the benchmark refuses is left to that pass (which notes why)."""
    if not records:
        return
    stored = [as_stored(record.result) for record in records]
    for mode in prepared.spec.evaluate:
        try:
            evaluations = prepared.benchmark.evaluate([tasks[record.key.task] for record in records], stored, mode,
                                                      prepared.options)
        except UserError:
            continue
        for record, evaluation in zip(records, evaluations, strict=True):
            if evaluation is not None:
                record.evaluations[mode] = evaluation
    for record in records:
        outbox.send((_RECORD, record))
    records.clear()
