"""Reading a run back: `load_run(run_dir) -> RunResults`, the read side of `runner/store/writer.py` (schema there).

Used by `tripbench status`, the reports and re-scoring. Read-only and synchronous (plain sqlite3, `mode=ro`), so it
is safe while a run is still writing: WAL readers see the last committed rollout and never block the writer. A
directory of shard folders (`runner.store.shards`) reads as one run.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import orjson

from benchmarks.base import Evaluation, RolloutResult, Task, Verdict
from errors import MissingInput, UserError
from providers.interface import Usage
from runner.ladder.calls import CallRecord as CallRecord  # re-exported: a stored call, as reports read it
from runner.store.migrations import migrate
from runner.store.records import RolloutKey
from runner.store.shards import ShardStores, find_shards, merge_stores
from runner.store.stored_spec import StoredSpec
from runner.store.writer import CALL_COLUMNS, OPEN_USD, RESULTS_FILE, ROLLOUT_COLUMNS, damaged_message


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One `tripbench run` invocation on the run directory."""

    id: int
    spec: StoredSpec
    spec_path: str | None
    tool_version: str
    pid: int
    planned: dict[str, dict[str, int]]
    """Rollouts planned per model and strategy (all of them, finished ones included)."""
    started_at: float
    ended_at: float | None
    outcome: str | None
    """`completed`, `interrupted`, `budget`, `failed`; None while running or after the process was killed."""
    spent_usd: float
    spec_json: dict[str, Any] = field(default_factory=dict)
    """The spec as stored (what a pack carries and digests); `spec` is its typed record."""


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """One batch sent to a provider's batch API."""

    id: int
    session: int
    model: str
    provider_id: str | None
    state: str
    """`preparing` (written, not known to be submitted), `submitted`, `ended` or `abandoned`."""
    requests: int

    @property
    def live(self) -> bool:
        return self.state in ("preparing", "submitted")


@dataclass(frozen=True, slots=True)
class StoredRollout:
    """One finished rollout as stored (steps are read on demand with `RunResults.steps`)."""

    id: int
    key: RolloutKey
    status: str
    error_type: str | None
    error: str | None
    answer: str | None
    plan_json: bytes | None
    """The plan as stored (JSON), parsed at each read of `plan`: a run of a hundred thousand plans is held in the
    memory of its JSON text, not of its parsed objects (several times more). `NOT_READ` when the run was loaded
    without its plans (`load_run(..., plans=False)`): `RunResults.plan` reads it then."""
    n_steps: int
    calls: int
    cache_hits: int
    retries: int
    usage: Usage
    cost_usd: float
    saved_usd: float
    started_at: float
    finished_at: float
    session: int

    @property
    def plan(self) -> Any:
        """The delivered plan (JSON values), None when there is none."""
        if self.plan_json == NOT_READ:
            raise RuntimeError(f"rollout {self.id} was loaded without its plan: RunResults.plan(rollout) reads it")
        return orjson.loads(self.plan_json) if self.plan_json is not None else None


NOT_READ = b""
"""`StoredRollout.plan_json` of a rollout with a plan, loaded without it (no stored plan is empty: JSON is not)."""


@dataclass(frozen=True, slots=True)
class StoredCall:
    """One LLM call of a stored rollout."""

    rollout_id: int
    idx: int
    """Position among the rollout's calls."""
    call: CallRecord


class RunResults:
    """A run directory's results, read-only. Use as a context manager, or call `close()`."""

    def __init__(self, conn: sqlite3.Connection, run_dir: Path, shards: ShardStores | None = None,
                 origins: dict[int, tuple[str, int]] | None = None, *, plans: bool = True) -> None:
        self.run_dir = run_dir
        self.shards = shards
        """The shard folders read, for a sharded run (None: one run directory)."""
        self._conn = conn
        self._close = weakref.finalize(self, conn.close)  # also when dropped unclosed (a report's lazy plan reads)
        self.sessions = [
            SessionInfo(row[0], StoredSpec.of(stored := orjson.loads(row[1])), row[2], row[3], row[4],
                        orjson.loads(row[5]), row[6], row[7], row[8], row[9],
                        spec_json=stored if isinstance(stored, dict) else {})
            for row in self._query("SELECT id, spec, spec_path, tool_version, pid, planned, started_at, ended_at, "
                                   f"outcome, spent_usd FROM session ORDER BY {'started_at, ' if shards else ''}id")
        ]
        self.origins = origins or {}
        """A sharded run's sessions: id -> the shard folder's name and the session's id in that shard's store."""
        by_id = {session.id: session for session in self.sessions}
        latest: dict[str, int] = {}
        for session_id, (shard, _) in sorted(self.origins.items()):  # ids grow shard by shard: the last is latest
            latest[shard] = session_id
        self.latest = ({name: by_id[session] for name, session in latest.items()} if origins is not None
                       else {run_dir.name: self.sessions[-1]} if self.sessions else {})
        """The latest session of each store read, by folder name: the run directory's, or each shard's."""
        columns = ROLLOUT_COLUMNS if plans else ROLLOUT_COLUMNS.replace(
            " plan,", " CASE WHEN plan IS NULL THEN NULL ELSE X'' END,")  # `NOT_READ`
        self.rollouts = [_rollout(row) for row in self._query(f"SELECT id, {columns} FROM rollout ORDER BY id")]
        # A run last written before batches existed (read-only: not migrated) has no batch tables or column.
        self._has_batches = bool(self._query("SELECT 1 FROM sqlite_master WHERE name = 'batch'"))
        self._call_columns = {row[1] for row in self._query("PRAGMA table_info(llm_call)")}
        self._recent: OrderedDict[tuple[int, str], Evaluation | None] = OrderedDict()
        """The evaluations `evaluation` read last, the latest at the end."""

    def _query(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """All rows of a query; a damaged file is a `UserError` naming it, not a traceback."""
        try:
            return self._conn.execute(sql, parameters).fetchall()
        except sqlite3.DatabaseError as exc:
            raise UserError(damaged_message(self.run_dir / RESULTS_FILE, exc)) from None

    def __enter__(self) -> RunResults:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._close()

    @property
    def spec(self) -> StoredSpec:
        """The spec of the latest session (what the run is doing now)."""
        return self.sessions[-1].spec if self.sessions else StoredSpec()

    @property
    def planned(self) -> dict[str, dict[str, int]]:
        """Rollouts planned per model and strategy by the latest session of each store (all of them, finished ones
        included): a sharded run's are its shards' shares added up."""
        planned: dict[str, dict[str, int]] = {}
        for session in self.latest.values():
            for model, strategies in session.planned.items():
                for strategy, count in strategies.items():
                    planned.setdefault(model, {}).setdefault(strategy, 0)
                    planned[model][strategy] += count
        return planned

    @property
    def spent_usd(self) -> float:
        """Money booked: every settled call of every session (those of re-run or unfinished rollouts included)."""
        return sum(max(0.0, session.spent_usd) for session in self.sessions)  # never below nothing (m004)

    @property
    def reserved_usd(self) -> float:
        """The worst case of calls sent and not yet settled: in flight now, or left open by a killed session (the
        provider may have billed them; a resumed run settles those whose answer reached the cache)."""
        if self._query("SELECT count(*) FROM sqlite_master WHERE name = 'charge'")[0][0] == 0:
            return 0.0  # a run directory no session of this version has opened yet
        return float(self._query(OPEN_USD)[0][0])

    def tasks(self) -> list[Task]:
        """The tasks the run saw, in split order."""
        rows = self._query("SELECT id, input FROM task ORDER BY benchmark, split, position")
        return [Task(task_id, orjson.loads(data)) for task_id, data in rows]

    def steps(self, rollout_id: int) -> list[dict[str, Any]]:
        """The trajectory of one rollout."""
        rows = self._query("SELECT data FROM step WHERE rollout_id = ? ORDER BY idx", (rollout_id,))
        return [orjson.loads(data) for (data,) in rows]

    def all_steps(self) -> dict[int, list[dict[str, Any]]]:
        """Every rollout's trajectory by rollout id, read in one pass (a third faster than `steps` per rollout)."""
        found: dict[int, list[dict[str, Any]]] = {}
        try:
            for rollout_id, data in self._conn.execute("SELECT rollout_id, data FROM step ORDER BY rollout_id, idx"):
                found.setdefault(rollout_id, []).append(orjson.loads(data))
        except sqlite3.DatabaseError as exc:
            raise UserError(damaged_message(self.run_dir / RESULTS_FILE, exc)) from None
        return found

    def plan(self, rollout: StoredRollout) -> Any:
        """The rollout's plan (`StoredRollout.plan`), read from the store if the run was loaded without plans."""
        if rollout.plan_json != NOT_READ:
            return rollout.plan
        return orjson.loads(self._query("SELECT plan FROM rollout WHERE id = ?", (rollout.id,))[0][0])

    def result(self, rollout: StoredRollout) -> RolloutResult:
        """The strategy's result as it was returned (what evaluators and submission formatters take)."""
        return RolloutResult(rollout.status, rollout.answer, self.plan(rollout), self.steps(rollout.id), rollout.error)

    def batches(self) -> list[BatchInfo]:
        """Every batch the run sent to a batch API, oldest first."""
        if not self._has_batches:
            return []
        return [BatchInfo(*row) for row in self._query(
            "SELECT id, session, model, provider_id, state, requests FROM batch ORDER BY id")]

    def calls(self, rollout_id: int | None = None) -> list[StoredCall]:
        """LLM calls of one rollout, or of the whole run."""
        columns = ", ".join(name if name in self._call_columns else _CALL_DEFAULTS[name]
                            for name in CALL_COLUMNS.split(", "))
        query = f"SELECT {columns} FROM llm_call" + (" WHERE rollout_id = ?" if rollout_id is not None else "")
        rows = self._query(query + " ORDER BY rollout_id, idx", () if rollout_id is None else (rollout_id,))
        return [StoredCall(r[0], r[1], CallRecord(
            r[2], r[3], bool(r[4]), Usage(r[5], r[6], r[7]), cost_usd=r[8], saved_usd=r[9], latency_s=r[10],
            retries=r[11], error_type=r[12], error=r[13], batch_saved_usd=r[14], batched=bool(r[15]),
            usage_problem=r[16])) for r in rows]

    def untrusted_calls(self) -> int:
        """Calls whose reply had no trustworthy usage (charged at their worst case, `CallRecord.usage_problem`)."""
        if "usage_problem" not in self._call_columns:
            return 0
        return int(self._query("SELECT count(*) FROM llm_call WHERE usage_problem IS NOT NULL")[0][0])

    def evaluated(self, mode: str) -> set[int]:
        """The ids of the rollouts with an evaluation of `mode` (without reading it)."""
        return {rid for (rid,) in self._query("SELECT rollout_id FROM evaluation WHERE mode = ?", (mode,))}

    def evaluations(self, mode: str) -> dict[int, Evaluation]:
        """Stored evaluations of one evaluator mode, by rollout id (all decoded: `evaluation` reads one)."""
        verdicts: dict[int, list[Verdict]] = {}
        rows = self._query("SELECT rollout_id, grp, name, passed, message FROM verdict WHERE mode = ? "
                                  "ORDER BY rollout_id, idx", (mode,))
        for rollout_id, *row in rows:
            verdicts.setdefault(rollout_id, []).append(_verdict(*row))
        rows = self._query("SELECT rollout_id, details FROM evaluation WHERE mode = ?", (mode,))
        return {rid: Evaluation(tuple(verdicts.get(rid, ())), orjson.loads(details)) for rid, details in rows}

    def evaluation(self, rollout_id: int, mode: str) -> Evaluation | None:
        """One rollout's stored evaluation of `mode` (None: none stored), read from the store at each call but for
        the last few read (a reader asking twice in a row reads once): a report of a hundred thousand rollouts holds
        none of their decoded details."""
        key = (rollout_id, mode)
        if key in self._recent:
            self._recent.move_to_end(key)
            return self._recent[key]
        rows = self._query("SELECT details FROM evaluation WHERE rollout_id = ? AND mode = ?", key)
        found = None if not rows else Evaluation(tuple(_verdict(*row) for row in self._query(
            "SELECT grp, name, passed, message FROM verdict WHERE rollout_id = ? AND mode = ? ORDER BY idx", key)),
            orjson.loads(rows[0][0]))
        self._recent[key] = found
        if len(self._recent) > RECENT_EVALUATIONS:
            self._recent.popitem(last=False)
        return found


RECENT_EVALUATIONS = 16
"""Evaluations `RunResults.evaluation` keeps decoded, the last read (a page or a pair of rollouts reads a few at a
time)."""


def _verdict(group: str, name: str, passed: int | None, message: str | None) -> Verdict:
    return Verdict(group, name, None if passed is None else bool(passed), message)


_CALL_DEFAULTS = {"batch_saved_usd": "NULL", "batched": "0", "usage_problem": "NULL"}
"""What `calls` reads for the columns of `llm_call` that later migrations added, in a run written before them."""


class StoredResults(Sequence[RolloutResult]):
    """The results of stored rollouts (`RunResults.result`), each read at its access: a scorer going through a run's
    plans parses one at a time, never all of them at once."""

    def __init__(self, results: RunResults, rollouts: Sequence[StoredRollout]) -> None:
        self._results = results
        self._rollouts = rollouts

    def __len__(self) -> int:
        return len(self._rollouts)

    @overload
    def __getitem__(self, index: int) -> RolloutResult: ...

    @overload
    def __getitem__(self, index: slice) -> StoredResults: ...

    def __getitem__(self, index: int | slice) -> RolloutResult | StoredResults:
        if isinstance(index, slice):
            return StoredResults(self._results, self._rollouts[index])
        return self._results.result(self._rollouts[index])


def _rollout(row: tuple[Any, ...]) -> StoredRollout:
    plan = row[11].encode() if isinstance(row[11], str) else row[11]
    n_steps, calls, cache_hits, retries = row[12:16]
    cost_usd, saved_usd, started_at, finished_at, session = row[19:]
    benchmark, split, task, model, strategy, status, error_type = map(_shared, (*row[1:6], *row[7:9]))
    return StoredRollout(row[0], RolloutKey(benchmark, split, task, model, strategy, row[6]), status, error_type,
                         row[9], row[10], plan, n_steps, calls, cache_hits, retries, Usage(*row[16:19]), cost_usd,
                         saved_usd, started_at, finished_at, session)


def _shared(value: Any) -> Any:
    """One string for the many rollouts that repeat it (a key's model, a status): a few hundred bytes a rollout."""
    return sys.intern(value) if isinstance(value, str) else value


def load_run(run_dir: str | os.PathLike[str], *, plans: bool = True) -> RunResults:
    """Opens a run directory's results read-only.

    Args:
        run_dir: The run directory (a `str` from a notebook works as well as a `Path`).
        plans: Hold every rollout's plan (its JSON text); False: `RunResults.plan` and `result` read each when asked,
            so a run of a gigabyte of plans is loaded in the memory of its rows' other fields.

    Raises:
        UserError: the directory holds no results store, or shard folders beside its own (`find_shards`).
    """
    run_dir = Path(run_dir)
    path = run_dir / RESULTS_FILE
    if (shards := find_shards(run_dir)) is not None:
        return _load_shards(run_dir, shards, plans)
    if not path.is_file():
        raise MissingInput(f"{run_dir}: no {RESULTS_FILE} here: not a tripbench run directory (`tripbench run SPEC` "
                           "or `tripbench run --model M --strategies S --split SPLIT` makes one; `tripbench demo` "
                           "makes several)")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    try:
        tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name IN ('session', 'rollout')").fetchone()[0]
        if tables < 2:  # the first session is still creating the schema
            raise UserError(f"{run_dir}: the results store is being created; try again in a moment")
        return RunResults(conn, run_dir, plans=plans)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise UserError(damaged_message(path, exc)) from None
    except BaseException:
        conn.close()
        raise


def _load_shards(run_dir: Path, shards: ShardStores, plans: bool) -> RunResults:
    """A sharded run's stores as one run: copied into a private temporary database (deleted when closed)."""
    conn = sqlite3.connect("", uri=True, isolation_level=None, check_same_thread=False)
    try:
        migrate(conn)
        return RunResults(conn, run_dir, shards, merge_stores(conn, shards), plans=plans)
    except BaseException:
        conn.close()
        raise
