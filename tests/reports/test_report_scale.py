"""A 12,000-rollout report stays small: report.html <= 5 MB, every rollout's drill-down on its own page, and the
page opens in Chromium. The times are printed, not asserted (this machine is shared and noisy): the speed of a
report is measured against its raw store read by perf/report_render.py.

The run is the 90 two-stage rollouts of `train_runs` (30-step trajectories, evaluations, calls), copied in SQLite
as 134 times as many tasks: what a night of 12,000 rollouts leaves in a results store, made in seconds.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import orjson

from reports import build_report, write_report
from runner.store.writer import CALL_COLUMNS, ROLLOUT_COLUMNS

COPIES = 134
KEY = ("benchmark", "split", "task", "model", "strategy", "sample")


def replicate(run_dir: Path, copies: int) -> int:
    """Adds `copies - 1` copies of every task and its rollouts (steps, calls, evaluations, verdicts) to a run."""
    with sqlite3.connect(run_dir / "results.sqlite") as conn:
        tasks = conn.execute("SELECT benchmark, split, id, position, input FROM task").fetchall()
        conn.executemany("INSERT INTO task VALUES (?, ?, ?, ?, ?)",
                         [(b, s, f"{t}-{k}", p + k * len(tasks), data) for k in range(1, copies)
                          for b, s, t, p, data in tasks])
        copied = ROLLOUT_COLUMNS.replace("task,", "task || '-' || ?,", 1)
        same = " AND ".join("n.task = o.task || '-' || ?" if c == "task" else f"n.{c} = o.{c}" for c in KEY)
        calls = ", ".join(f"x.{c}" for c in CALL_COLUMNS.split(", ")[1:])
        children = {"step": "x.idx, x.data", f"llm_call ({CALL_COLUMNS})": calls,
                    "evaluation": "x.mode, x.details", "verdict": "x.mode, x.idx, x.grp, x.name, x.passed, x.message"}
        for k in range(1, copies):
            conn.execute(f"INSERT INTO rollout ({ROLLOUT_COLUMNS}) SELECT {copied} FROM rollout "
                         "WHERE task NOT LIKE '%-%'", (k,))
            for table, columns in children.items():  # each child row again, under its rollout's copy
                conn.execute(f"INSERT INTO {table} SELECT n.id, {columns} FROM {table.split()[0]} x "
                             f"JOIN rollout o ON o.id = x.rollout_id JOIN rollout n ON {same} "
                             "WHERE o.task NOT LIKE '%-%'", (k,))
        planned = orjson.loads(conn.execute("SELECT planned FROM session").fetchone()[0])
        planned = {model: {s: n * copies for s, n in strategies.items()} for model, strategies in planned.items()}
        conn.execute("UPDATE session SET planned = ?", (orjson.dumps(planned).decode(),))
        return int(conn.execute("SELECT count(*) FROM rollout").fetchone()[0])


def test_a_night_of_12000_rollouts_reports_small(train_runs: dict[str, Path], browser, tmp_path: Path) -> None:
    run_dir = tmp_path / "night"
    shutil.copytree(train_runs["agents"], run_dir)
    rollouts = replicate(run_dir, COPIES)
    assert rollouts == 90 * COPIES

    started = time.perf_counter()
    report = build_report([run_dir])
    files = write_report(report, tmp_path / "report")
    seconds = time.perf_counter() - started
    html = files["html"].stat().st_size
    pages = sum(1 for _ in (tmp_path / "report" / "rollouts").rglob("*.html"))

    browser.get(files["html"].as_uri())
    timing = browser.execute_script("var t = performance.timing; return [t.domInteractive - t.navigationStart, "
                                    "t.loadEventEnd - t.navigationStart]")
    print(f"\n{rollouts:,} rollouts: report built and written in {seconds:.1f} s; report.html {html / 1e6:.2f} MB, "
          f"{pages:,} rollout pages; Chromium interactive in {timing[0]} ms, loaded in {timing[1]} ms")
    assert pages == rollouts
    assert html <= 5e6
    assert browser.execute_script("return document.readyState") == "complete"
