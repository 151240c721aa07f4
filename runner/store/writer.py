"""The results store `RUN_DIR/results.sqlite`: one writer task during a run, read-only readers at any time.

Schema (migrations in `runner/store/migrations.py`; JSON columns hold orjson text):

    session     one row per `tripbench run` invocation on the run dir (the first is the run's start)
                id, spec (RunSpec JSON snapshot), spec_path, tool_version, pid (of the process running it),
                planned (JSON {model: {strategy: n}}),
                started_at, ended_at, outcome (completed | interrupted | budget | failed; NULL while running or
                after a kill), spent_usd (money of this session's settled charges; before charges existed,
                of the rollouts committed in it)
    task        benchmark, split, id, position (order in the split), input (JSON): what the rollouts saw
    rollout     id, the key (benchmark, split, task, model, strategy, sample; UNIQUE), status, error_type
                (exception class), error, answer, plan (JSON), n_steps, calls, cache_hits, retries,
                input_tokens, cached_input_tokens, output_tokens, cost_usd, saved_usd, started_at,
                finished_at (unix seconds), session
    step        rollout_id, idx, data (JSON: one trajectory entry as the strategy wrote it)
    llm_call    rollout_id, idx, model (provider string), cache_key, hit, input/cached_input/output tokens,
                cost_usd (NULL: unknown price), saved_usd, latency_s, retries, error_type, error, batch_saved_usd,
                batched
                (what the batch API saved against online prices; NULL for a call not sent in a batch),
                usage_problem (what was wrong with the usage the provider reported, which was then not believed:
                the call is charged at its worst case, and its tokens are that worst case; NULL: believed)
    evaluation  rollout_id, mode, details (JSON)
    verdict     rollout_id, mode, idx (the evaluator's order), grp, name, passed (1 / 0 / NULL), message
    charge      one row per provider call the spend cap let through (write-ahead, `runner/store/ledger.py`): id,
                session, model, cache_key, reserved_usd (its worst case), cost_usd (NULL while open), opened_at,
                settled_at
    batch       one row per batch sent to a provider's batch API (`runner/ladder/batches.py`), written before it is
                submitted: id, session, model, tag (its name at the provider where the API keeps one), provider_id
                (NULL until the provider answered the submission), state (preparing | submitted | ended |
                abandoned), requests, created_at, submitted_at, ended_at
    batch_request  batch, custom_id, cache_key (whose answer it is), charge (the spend cap's booking of it)

A rollout is committed with its steps and calls in one transaction as soon as it finishes, so a crash loses only
what was in flight. Every statement runs on the store's own thread (one SQLite connection, used by nothing else), a
whole job at a time: the event loop hands over the jobs queued meanwhile in one go and is woken once when they are
done, where a statement at a time through aiosqlite cost it a thread hop each (six per rollout). Re-running a
rollout on resume (see `runner.outcomes.runs_again`) replaces its rows, so each key is stored once.
Money is not booked with rollouts but per call, before it is sent (`charge`): the run's spend is what its sessions
settled plus the worst case of the charges still open (`spent_usd`), so it never goes down and counts the calls of
rollouts that never finished.

One process writes a run directory at a time: the store holds an exclusive lock on `RUN_DIR/results.lock` while
open (released by the kernel if the process dies), so a second `tripbench run` on the same directory is refused
instead of running and paying for the same rollouts twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import orjson

from benchmarks.base import Evaluation, RolloutResult, Task
from errors import UserError
from runner.ladder.batches import StoredBatch
from runner.outcomes import runs_again
from runner.store.migrations import migrate
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.stored_spec import StoredSpec

RESULTS_FILE = "results.sqlite"
LOCK_FILE = "results.lock"

_T = TypeVar("_T")
Job = Callable[[sqlite3.Connection], Any]
"""Statements run in one transaction on the store's thread; what it returns goes to whoever queued it."""

# The run's money (`spent_usd`): what sessions settled, and the worst case of the charges still open.
SETTLED_USD = "SELECT coalesce(sum(spent_usd), 0) FROM session"
OPEN_USD = "SELECT coalesce(sum(reserved_usd), 0) FROM charge WHERE cost_usd IS NULL"

# Columns named in every statement, so a later migration adding one shifts nothing (readers use them too).
ROLLOUT_COLUMNS = ("benchmark, split, task, model, strategy, sample, status, error_type, error, answer, plan, "
                   "n_steps, calls, cache_hits, retries, input_tokens, cached_input_tokens, output_tokens, cost_usd, "
                   "saved_usd, started_at, finished_at, session")
CALL_COLUMNS = ("rollout_id, idx, model, cache_key, hit, input_tokens, cached_input_tokens, output_tokens, cost_usd, "
                "saved_usd, latency_s, retries, error_type, error, batch_saved_usd, batched, usage_problem")


def to_json(value: Any) -> str:
    """JSON text of untrusted strategy output; odd values (lone surrogates, non-JSON types) are escaped, not fatal."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(_text(json.dumps(value, default=repr, ensure_ascii=False)))


def _text(value: Any) -> Any:
    """A string SQLite can store: lone surrogates (possible in model output) become `?`."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8")


def damaged_message(path: Path, exc: Exception) -> str:
    """What to say of a results store SQLite cannot use: which file, and what to do."""
    if isinstance(exc, sqlite3.OperationalError):  # locked, a disk I/O error, no permission: not the file's content
        return f"{path}: SQLite could not use it ({exc})"
    return (f"{path} is damaged ({exc}): move it aside and run the spec again into a new run directory; the calls "
            "already paid for come back from the cache for free")


class RunDirInUse(UserError):
    """Another process has the run directory open for writing."""


class StoreError(UserError):
    """SQLite could not write the results (disk full, a damaged file): names the file."""


def lock_run_dir(run_dir: Path) -> int:
    """Takes the run directory's write lock (creating the folder); returns its file descriptor (closing it releases
    the lock, or `ResultsStore.open` takes it over).

    Raises:
        RunDirInUse: another process holds it (its pid is named).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise RunDirInUse(f"{run_dir}: another tripbench process (pid {holder}) is writing this run directory; "
                          "wait for it to end, or use another --run-dir") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def _connect(path: Path) -> sqlite3.Connection:
    """The store's connection, on a migrated database in WAL mode (run on the store's thread)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        migrate(conn)
    conn.close()
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        # WAL + synchronous=NORMAL: a commit survives a killed process (only power loss can drop the last ones).
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        conn.close()
        raise
    return conn


class ResultsStore:
    """The only writer of a run's results: every write is a job run in order by one task, one transaction each, on
    the store's thread (`open` makes both)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, lock_fd: int | None, thread: ThreadPoolExecutor) -> None:
        self.path = path
        self._conn = conn
        self._lock_fd = lock_fd
        self._thread = thread
        self._jobs: asyncio.Queue[tuple[Job, asyncio.Future[Any]] | None] = asyncio.Queue()
        self._writer = asyncio.create_task(self._write_loop(), name="results-writer")

    @classmethod
    async def open(cls, run_dir: Path, lock_fd: int | None = None) -> ResultsStore:
        """Opens (creating and migrating as needed) `run_dir/results.sqlite` and starts the writer task.

        `lock_fd` is the run directory's lock the caller already took (`lock_run_dir`); the store takes it over.

        Raises:
            RunDirInUse: another process is writing the run directory.
        """
        lock_fd = lock_run_dir(run_dir) if lock_fd is None else lock_fd
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="results-store")
        path = run_dir / RESULTS_FILE
        try:
            conn = await asyncio.get_running_loop().run_in_executor(thread, _connect, path)
        except BaseException as exc:
            thread.shutdown(wait=False)
            os.close(lock_fd)
            if isinstance(exc, sqlite3.DatabaseError):
                raise StoreError(damaged_message(path, exc)) from None
            raise
        return cls(conn, path, lock_fd, thread)

    async def _in_thread(self, function: Callable[[], _T]) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, function)

    async def close(self) -> None:
        """Lets queued writes finish, then closes the connection and releases the run directory."""
        try:
            if not self._writer.done():
                await self._jobs.put(None)
            await self._writer
            await self._in_thread(self._conn.close)
        finally:
            self._thread.shutdown(wait=False)  # nothing is left to run on it
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None

    async def _write_loop(self) -> None:
        """Runs queued jobs in order, one transaction each, handing those queued meanwhile to the store's thread in
        one go; every job's caller gets its result or its error.

        A failure anywhere (even in BEGIN, e.g. a locked or full database) goes to the job's caller and the loop
        goes on; should the loop itself end, jobs still queued or running fail rather than wait forever.
        """
        running: list[tuple[Job, asyncio.Future[Any]]] = []
        try:
            closing = False
            while not closing and (item := await self._jobs.get()) is not None:
                running = [item]
                while not self._jobs.empty():
                    if (item := self._jobs.get_nowait()) is None:
                        closing = True
                        break
                    running.append(item)
                jobs = [job for job, _ in running]
                outcomes = await self._in_thread(lambda: [self._run(job) for job in jobs])
                for (_, done), (value, error) in zip(running, outcomes, strict=True):
                    if done.done():
                        continue
                    if error is None:
                        done.set_result(value)
                    else:
                        done.set_exception(error)
                running = []
        finally:
            left = list(running)
            while not self._jobs.empty():
                if (item := self._jobs.get_nowait()) is not None:
                    left.append(item)
            for _, done in left:
                if not done.done():
                    done.set_exception(StoreError(f"{self.path}: the results writer has stopped"))

    def _run(self, job: Job) -> tuple[Any, Exception | None]:
        """One job in its transaction, on the store's thread: (what it returned, None) or (None, why it failed, the
        transaction undone)."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            value = job(self._conn)
            self._conn.execute("COMMIT")
        except Exception as exc:  # the job failed: undo it and hand the error to whoever asked for it
            if self._conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            return None, StoreError(damaged_message(self.path, exc)) if isinstance(exc, sqlite3.Error) else exc
        return value, None

    async def _submit(self, job: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._writer.done():
            raise StoreError(f"{self.path}: the results writer has stopped")
        done: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        await self._jobs.put((job, done))
        return await done

    # -- reads the engine needs before it starts writing ------------------------------------------------------
    async def _fetch(self, sql: str) -> list[Any]:
        """All rows of a read; a damaged file is a `StoreError` naming it."""
        try:
            return await self._in_thread(lambda: self._conn.execute(sql).fetchall())
        except sqlite3.DatabaseError as exc:
            raise StoreError(damaged_message(self.path, exc)) from None

    async def resume_plan(self) -> tuple[set[RolloutKey], dict[RolloutKey, str]]:
        """What a resumed run finds stored: the keys it skips, and those it runs again (see `runs_again`) with their
        stored status."""
        finished: set[RolloutKey] = set()
        again: dict[RolloutKey, str] = {}
        for row in await self._fetch(
                "SELECT benchmark, split, task, model, strategy, sample, status, error_type FROM rollout"):
            key, status, error_type = RolloutKey(*row[:6]), row[6], row[7]
            if runs_again(status, error_type):
                again[key] = status
            else:
                finished.add(key)
        return finished, again

    async def last_spec(self) -> dict[str, Any] | None:
        """The spec of the run's latest session, or None for a new run directory."""
        rows = await self._fetch("SELECT spec FROM session ORDER BY id DESC LIMIT 1")
        return orjson.loads(rows[0][0]) if rows else None

    async def spent_usd(self) -> float:
        """Money the run has spent: what its sessions settled, plus the worst case of every charge still open."""
        return float((await self._fetch(f"SELECT ({SETTLED_USD}) + ({OPEN_USD})"))[0][0])

    async def live_batches(self) -> list[StoredBatch]:
        """Batches of earlier sessions not known to have ended, oldest first, with their requests."""
        batches = await self._fetch("SELECT id, model, tag, provider_id, created_at FROM batch "
                                    "WHERE state IN ('preparing', 'submitted') ORDER BY id")
        requests: dict[int, list[tuple[str, str, int | None, float | None]]] = {}
        for batch, custom_id, key, charge, reserved in await self._fetch(
                "SELECT r.batch, r.custom_id, r.cache_key, r.charge, c.reserved_usd FROM batch_request r "
                "LEFT JOIN charge c ON c.id = r.charge AND c.cost_usd IS NULL WHERE r.batch IN "
                "(SELECT id FROM batch WHERE state IN ('preparing', 'submitted')) ORDER BY r.batch, r.custom_id"):
            requests.setdefault(batch, []).append((custom_id, key, charge, reserved))
        return [StoredBatch(row[0], row[1], row[2], row[3], row[4], tuple(requests.get(row[0], ())))
                for row in batches]

    async def open_charges(self) -> list[tuple[int, str | None]]:
        """(id, cache key) of the charges left open by earlier sessions (their processes died mid-call)."""
        return [(row[0], row[1]) for row in
                await self._fetch("SELECT id, cache_key FROM charge WHERE cost_usd IS NULL ORDER BY id")]

    async def never_sent_charges(self) -> list[int]:
        """Open charges of batched calls that joined no recorded batch: their session died after booking them and
        before recording their batch, and a batched call is only ever sent in a recorded batch
        (`runner.ladder.batches`), so the provider never saw them. Batched: the model was, in that session's spec."""
        rows = await self._fetch("SELECT c.id, c.model, s.spec FROM charge c JOIN session s ON s.id = c.session "
                                 "WHERE c.cost_usd IS NULL AND NOT EXISTS "
                                 "(SELECT 1 FROM batch_request r WHERE r.charge = c.id) ORDER BY c.id")
        batched: dict[str, frozenset[str]] = {}
        for _, _, spec in rows:
            batched.setdefault(spec, StoredSpec.of(orjson.loads(spec)).batched)
        return [charge for charge, model, spec in rows if model in batched[spec]]

    # -- writes ------------------------------------------------------------------------------------------------
    async def start_session(self, spec: dict[str, Any], spec_path: str, version: str,
                            planned: dict[str, dict[str, int]]) -> int:
        """Records a new session; returns its id."""
        def job(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "INSERT INTO session (spec, spec_path, tool_version, pid, planned, started_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (to_json(spec), spec_path, version, os.getpid(), to_json(planned), time.time()))
            assert cursor.lastrowid is not None  # set by every INSERT
            return cursor.lastrowid
        return await self._submit(job)

    async def prepare_batch(self, session: int, model: str, tag: str,
                            requests: Sequence[tuple[str, str, int | None]]) -> int:
        """Records a batch about to be submitted, with its requests ((custom_id, cache key, charge) each); returns
        its id once committed: only then may it be sent."""
        def job(conn: sqlite3.Connection) -> int:
            cursor = conn.execute("INSERT INTO batch (session, model, tag, state, requests, created_at) "
                                  "VALUES (?, ?, ?, 'preparing', ?, ?)",
                                  (session, model, tag, len(requests), time.time()))
            assert cursor.lastrowid is not None
            conn.executemany("INSERT INTO batch_request (batch, custom_id, cache_key, charge) "
                             "VALUES (?, ?, ?, ?)", [(cursor.lastrowid, *request) for request in requests])
            return cursor.lastrowid
        return await self._submit(job)

    async def batch_submitted(self, batch: int, provider_id: str) -> None:
        """Records the provider's id of a submitted batch."""
        def job(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE batch SET provider_id = ?, state = 'submitted', submitted_at = ? WHERE id = ?",
                         (provider_id, time.time(), batch))
        await self._submit(job)

    async def batch_ended(self, batch: int, state: str) -> None:
        """Marks a batch `ended` (its results were read) or `abandoned` (it never reached the provider)."""
        def job(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE batch SET state = ?, ended_at = ? WHERE id = ?", (state, time.time(), batch))
        await self._submit(job)

    async def end_session(self, session: int, outcome: str) -> None:
        """Marks a session ended (`completed`, `interrupted`, `budget` or `failed`)."""
        def job(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE session SET ended_at = ?, outcome = ? WHERE id = ?",
                         (time.time(), outcome, session))
        await self._submit(job)

    async def save_tasks(self, benchmark: str, split: str, tasks: Sequence[Task]) -> None:
        """Records the tasks of a run (their inputs, for reports and re-scoring without the dataset)."""
        rows = [(benchmark, split, task.id, position, to_json(task.input)) for position, task in enumerate(tasks)]

        def job(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR REPLACE INTO task (benchmark, split, id, position, input) "
                             "VALUES (?, ?, ?, ?, ?)", rows)
        await self._submit(job)

    async def save_rollout(self, record: RolloutRecord, session: int) -> None:
        """Commits a finished rollout with its steps, calls and evaluations (`RolloutRecord.evaluations`) in one
        transaction, replacing an earlier attempt.

        Raises:
            TypeError: the result holds something that cannot be stored (raised before anything is queued).
        """
        key, result = record.key, record.result
        tokens = record.tokens()
        row = (*_key_tuple(key), result.status, record.error_type, _text(result.error), _text(result.answer),
               to_json(result.plan), len(result.steps), len(record.calls), record.cache_hits, record.retries,
               tokens.input_tokens, tokens.cached_input_tokens, tokens.output_tokens, record.cost_usd,
               record.saved_usd, record.started_at, record.finished_at, session)
        steps = [to_json(step) for step in result.steps]
        calls = [(i, c.model, c.cache_key, int(c.hit), c.usage.input_tokens, c.usage.cached_input_tokens,
                  c.usage.output_tokens, c.cost_usd, c.saved_usd, c.latency_s, c.retries, c.error_type, _text(c.error),
                  c.batch_saved_usd, int(c.batched), c.usage_problem)
                 for i, c in enumerate(record.calls)]
        evaluations = list(record.evaluations.items())

        def job(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM rollout WHERE benchmark = ? AND split = ? AND task = ? AND model = ? "
                         "AND strategy = ? AND sample = ?", _key_tuple(key))
            cursor = conn.execute(f"INSERT INTO rollout ({ROLLOUT_COLUMNS}) VALUES (?{', ?' * (len(row) - 1)})",
                                  row)
            rollout_id = cursor.lastrowid
            assert rollout_id is not None  # set by every INSERT
            conn.executemany("INSERT INTO step (rollout_id, idx, data) VALUES (?, ?, ?)",
                             [(rollout_id, i, data) for i, data in enumerate(steps)])
            conn.executemany(f"INSERT INTO llm_call ({CALL_COLUMNS}) VALUES (?{', ?' * CALL_COLUMNS.count(',')})",
                             [(rollout_id, *call) for call in calls])
            _insert_evaluations(conn, [(rollout_id, mode, ev) for mode, ev in evaluations])
        await self._submit(job)

    async def book(self, session: int, opened: Sequence[tuple[str, str | None, float]],
                   settled: Sequence[tuple[int, float]]) -> list[int]:
        """Opens charges ((model, cache key, reserved USD) each) and settles others ((id, cost)) in one transaction.

        Settling is idempotent: a charge already settled is left alone. Its cost goes to the session that opened it.

        Returns:
            The ids of the opened charges, in order.
        """
        now = time.time()

        def job(conn: sqlite3.Connection) -> list[int]:
            for charge, cost in settled:
                cost = max(0.0, cost)  # never below nothing (`SpendCap` books a negative cost at its worst case)
                cursor = conn.execute("UPDATE charge SET cost_usd = ?, settled_at = ? "
                                      "WHERE id = ? AND cost_usd IS NULL", (cost, now, charge))
                if cursor.rowcount:
                    conn.execute("UPDATE session SET spent_usd = spent_usd + ? "
                                 "WHERE id = (SELECT session FROM charge WHERE id = ?)", (cost, charge))
            ids: list[int] = []
            for model, cache_key, reserved in opened:
                cursor = conn.execute("INSERT INTO charge (session, model, cache_key, reserved_usd, opened_at) "
                                      "VALUES (?, ?, ?, ?, ?)", (session, model, cache_key, reserved, now))
                assert cursor.lastrowid is not None
                ids.append(cursor.lastrowid)
            return ids
        return await self._submit(job)

    async def save_evaluations(self, mode: str, evaluations: Sequence[tuple[int, Evaluation]]) -> None:
        """Stores (rollout id, evaluation) pairs for one evaluator mode, replacing earlier ones of that mode."""
        await self._submit(lambda conn: _insert_evaluations(conn, [(rid, mode, ev) for rid, ev in evaluations]))


def _insert_evaluations(conn: sqlite3.Connection, evaluations: Sequence[tuple[int, str, Evaluation]]) -> None:
    """Stores (rollout id, mode, evaluation) triples, replacing earlier ones of the same rollout and mode."""
    details = [(rollout_id, mode, to_json(dict(ev.details))) for rollout_id, mode, ev in evaluations]
    verdicts = [(rollout_id, mode, i, v.group, v.constraint, None if v.passed is None else int(v.passed),
                 _text(v.message)) for rollout_id, mode, ev in evaluations for i, v in enumerate(ev.verdicts)]
    conn.executemany("DELETE FROM verdict WHERE rollout_id = ? AND mode = ?", [row[:2] for row in details])
    conn.executemany("INSERT OR REPLACE INTO evaluation (rollout_id, mode, details) VALUES (?, ?, ?)", details)
    conn.executemany("INSERT INTO verdict (rollout_id, mode, idx, grp, name, passed, message) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)", verdicts)


def as_stored(result: RolloutResult) -> RolloutResult:
    """`result` as the store gives it back (`RunResults.result`): its plan and steps through JSON, its texts as
    SQLite holds them. What scoring a rollout before it is stored must see, to score what scoring it after would."""
    return RolloutResult(result.status, _text(result.answer), _json_copy(result.plan),
                         [_json_copy(step) for step in result.steps], _text(result.error))


def _json_copy(value: Any) -> Any:
    return None if value is None else orjson.loads(to_json(value))


def _key_tuple(key: RolloutKey) -> tuple[str, str, str, str, str, int]:
    return (key.benchmark, key.split, key.task, key.model, key.strategy, key.sample)


