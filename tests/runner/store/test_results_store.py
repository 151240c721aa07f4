"""The results store: migrations, one transaction per rollout, replacement on re-run, safe text, live reads, one
writing process per run directory, write errors that reach their caller."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest

from benchmarks.base import BUDGET_EXHAUSTED, DELIVERED, Evaluation, RolloutResult, Task, Verdict
from errors import UserError
from providers.interface import Usage
from runner.ladder.calls import CallRecord
from runner.store import migrations
from runner.store.ledger import settle_left_open
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.results import NOT_READ, load_run
from runner.store.writer import ResultsStore, RunDirInUse, StoreError

KEY = RolloutKey("toy", "train", "7", "m", "scripted", 0)


def record(status: str, cost: float, *, answer: str | None = "ok", steps: list | None = None) -> RolloutRecord:
    call = CallRecord("x:m", "k1", False, Usage(10, 2, 5), cost, 0.0, 0.25, 1)
    return RolloutRecord(KEY, RolloutResult(status, answer, {"days": [1, 2]}, steps or [{"n": 1}]), [call], None,
                         100.0, 101.5)


async def test_a_rerun_replaces_the_rollout(tmp_path: Path) -> None:
    store = await ResultsStore.open(tmp_path)
    session = await store.start_session({"benchmark": "toy"}, "run.toml", "0", {"m": {"scripted": 1}})
    await store.save_tasks("toy", "train", [Task("7", {"calls": 2})])
    await store.save_rollout(record(BUDGET_EXHAUSTED, 0.25), session)
    assert await store.resume_plan() == (set(), {KEY: BUDGET_EXHAUSTED})  # cut by the cap: runs again on resume

    with load_run(tmp_path) as reader:  # a reader sees committed rollouts while the writer is open (WAL)
        assert [r.status for r in reader.rollouts] == [BUDGET_EXHAUSTED]

    await store.save_rollout(record(DELIVERED, 0.5), session)
    await store.end_session(session, "completed")
    assert await store.resume_plan() == ({KEY}, {})
    await store.close()

    with load_run(tmp_path) as results:
        (rollout,) = results.rollouts
        assert (rollout.status, rollout.cost_usd, rollout.calls, rollout.retries) == (DELIVERED, 0.5, 1, 1)
        assert rollout.usage == Usage(10, 2, 5) and rollout.plan == {"days": [1, 2]}
        assert len(results.calls()) == 1 and results.steps(rollout.id) == [{"n": 1}]
        assert results.all_steps() == {rollout.id: [{"n": 1}]}  # the replaced attempt's steps are gone
        assert results.tasks() == [Task("7", {"calls": 2})]
        assert results.sessions[0].outcome == "completed"


async def test_a_run_loaded_without_plans_reads_each_when_asked(tmp_path: Path) -> None:
    store = await ResultsStore.open(tmp_path)
    session = await store.start_session({"benchmark": "toy"}, "run.toml", "0", {"m": {"scripted": 2}})
    await store.save_rollout(record(DELIVERED, 0.5), session)
    await store.save_rollout(RolloutRecord(RolloutKey("toy", "train", "7", "m", "scripted", 1),
                                           RolloutResult(BUDGET_EXHAUSTED, None, None, []), [], None, 1.0, 2.0),
                             session)
    await store.close()
    with load_run(tmp_path, plans=False) as results:
        with_plan, without = results.rollouts
        assert with_plan.plan_json == without.plan_json == NOT_READ  # no plan's text held
        assert results.plan(with_plan) == {"days": [1, 2]} and results.plan(without) is None
        assert results.result(with_plan).plan == {"days": [1, 2]}
        with pytest.raises(RuntimeError, match="loaded without its plan"):
            with_plan.plan  # noqa: B018  (a plan never silently None)


async def test_money_is_the_charges_settled_plus_the_worst_case_of_those_open(tmp_path: Path) -> None:
    store = await ResultsStore.open(tmp_path)
    first = await store.start_session({}, "run.toml", "0", {})
    a, b, c = await store.book(first, [("m", "ka", 0.5), ("m", "kb", 0.25), ("m", None, 0.125)], [])
    await store.book(first, [], [(a, 0.1), (a, 0.3)])  # settling twice (a retried write) books the first cost once
    await store.save_rollout(record(DELIVERED, 0.5), first)  # a rollout's calls are booked by their charges only
    assert await store.spent_usd() == pytest.approx(0.1 + 0.25 + 0.125)
    assert await store.open_charges() == [(b, "kb"), (c, None)]
    second = await store.start_session({}, "run.toml", "0", {})
    await store.book(second, [], [(b, 0.05)])  # settled later: its money goes to the session that opened it
    await store.close()
    with load_run(tmp_path) as results:
        assert [s.spent_usd for s in results.sessions] == [pytest.approx(0.15), 0.0]
        assert results.spent_usd == pytest.approx(0.15) and results.reserved_usd == pytest.approx(0.125)



async def test_a_batched_call_killed_before_its_batch_was_recorded_is_settled_at_nothing(tmp_path: Path) -> None:
    """A session killed between booking a batched call and recording its batch: the call was never sent (a batched
    call only leaves in a recorded batch), so the resume settles it at 0, not at its worst case nor at the cost of
    the answer a later session paid for (both counted money no provider billed: the SIGKILL batch test saw 5.22
    spent for 4.72 billed). An online call and a batched one inside a recorded batch stay as they were."""
    store = await ResultsStore.open(tmp_path)
    try:
        await _settle_a_killed_batch_session(store, tmp_path)
    finally:
        await store.close()


async def _settle_a_killed_batch_session(store: ResultsStore, tmp_path: Path) -> None:
    killed = await store.start_session({"batch": True, "models": [{"model": "openai:b"}, {"model": "openai:o",
                                                                                        "batch": False}]},
                                       "run.toml", "0", {})
    orphan, in_batch, online = await store.book(killed, [("openai:b", "k1", 0.5), ("openai:b", "k2", 0.25),
                                                         ("openai:o", "k3", 0.125)], [])
    await store.prepare_batch(killed, "openai:b", "tag", [("c2", "k2", in_batch)])
    assert await store.spent_usd() == pytest.approx(0.875)
    await store.start_session({}, "run.toml", "0", {})
    assert await settle_left_open(store, tmp_path / "no-cache") == 1
    assert await store.open_charges() == [(in_batch, "k2"), (online, "k3")]
    assert await store.spent_usd() == pytest.approx(0.375)

async def test_a_run_directory_given_as_a_str_opens_like_a_path(tmp_path: Path) -> None:
    """Notebook users pass plain strings; a bad one still gets the one-line UserError, not a TypeError."""
    store = await ResultsStore.open(tmp_path)
    session = await store.start_session({"benchmark": "toy"}, "run.toml", "0", {"m": {"scripted": 1}})
    await store.save_rollout(record(DELIVERED, 0.5), session)
    await store.close()
    with load_run(str(tmp_path)) as results:
        assert results.run_dir == tmp_path and [r.key for r in results.rollouts] == [KEY]
    with pytest.raises(UserError, match="not a tripbench run directory"):
        load_run(str(tmp_path / "elsewhere"))

async def test_untrusted_text_is_stored_not_fatal(tmp_path: Path) -> None:
    store = await ResultsStore.open(tmp_path)
    session = await store.start_session({}, "run.toml", "0", {})
    await store.save_rollout(record(DELIVERED, 0.0, answer="plan \ud800 <script>", steps=[{"obj": {1, 2}}]),
                             session)
    await store.save_evaluations("official", [(1, Evaluation((Verdict("hard", "b", False, "x\udfff"),
                                                              Verdict("hard", "a", None)), {"cost": 3}))])
    await store.close()
    with load_run(tmp_path) as results:
        (rollout,) = results.rollouts
        assert rollout.answer == "plan ? <script>"
        assert results.steps(rollout.id) == [{"obj": "{1, 2}"}]
        evaluation = results.evaluations("official")[rollout.id]
        assert [(v.constraint, v.passed, v.message) for v in evaluation.verdicts] == [("b", False, "x?"),
                                                                                        ("a", None, None)]


async def test_migrations_run_once_and_new_ones_apply_to_old_run_dirs(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store = await ResultsStore.open(tmp_path)
    await store.close()
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:
        assert migrations.migrate(conn) == []
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)

    def m999_rollout_note(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE rollout ADD COLUMN note TEXT")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, m999_rollout_note])
    store = await ResultsStore.open(tmp_path)  # an older run dir, reopened by a newer tripbench
    session = await store.start_session({}, "run.toml", "0", {})
    await store.save_rollout(record(DELIVERED, 0.1), session)
    await store.close()
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM _migrations ORDER BY applied_at")]
        assert names == ["m001_initial", "m002_charge", "m003_batches", "m004_untrusted_usage", "m999_rollout_note"]
        assert "note" in [row[1] for row in conn.execute("PRAGMA table_info(rollout)")]
    with load_run(tmp_path) as results:  # the reader names its columns: an added one shifts nothing
        assert [r.key for r in results.rollouts] == [KEY] and len(results.calls()) == 1


async def test_a_second_writer_of_the_run_dir_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    store = await ResultsStore.open(tmp_path)
    with pytest.raises(RunDirInUse, match=rf"pid {os.getpid()}\b.*another --run-dir"):
        await ResultsStore.open(tmp_path)  # a second `tripbench run` on the same directory
    with load_run(tmp_path) as reader:  # readers (status, reports) are never refused
        assert reader.rollouts == []
    await store.close()
    again = await ResultsStore.open(tmp_path)
    await again.close()


async def test_a_failed_write_reaches_its_caller_and_the_writer_goes_on(tmp_path: Path) -> None:
    store = await ResultsStore.open(tmp_path)
    blocker = sqlite3.connect(tmp_path / "results.sqlite", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # e.g. an older tripbench without the lock, writing the same file
    with pytest.raises(StoreError, match=r"results.sqlite: SQLite could not use it \(database is locked\)"):
        await asyncio.wait_for(store.start_session({}, "run.toml", "0", {}), 30)  # BEGIN fails: never a hang
    blocker.rollback()
    blocker.close()
    session = await asyncio.wait_for(store.start_session({}, "run.toml", "0", {}), 30)
    await store.save_rollout(record(DELIVERED, 0.1), session)
    await store.close()
    with load_run(tmp_path) as results:
        assert [r.key for r in results.rollouts] == [KEY] and len(results.sessions) == 1
