"""A report on a run still going says it is partial and scores only what finished."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from reports import build_report


def still_going(finished_run: Path, dest: Path, keep: int) -> Path:
    """A copy of a finished run as it looked mid-run: `keep` rollouts of each group stored, the session open (its
    pid this test's, so alive)."""
    shutil.copytree(finished_run, dest)
    with sqlite3.connect(dest / "results.sqlite") as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM rollout WHERE id NOT IN (SELECT id FROM (SELECT id, row_number() OVER "
                     "(PARTITION BY model, strategy ORDER BY CAST(task AS INTEGER)) AS n FROM rollout) WHERE n <= ?)",
                     (keep,))
        conn.execute("UPDATE session SET outcome = NULL, ended_at = NULL, pid = ?", (os.getpid(),))
    return dest


def test_a_live_run_gets_a_partial_report_over_its_finished_rollouts(train_runs: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    run_dir = still_going(train_runs["agents"], tmp_path / "live", keep=10)
    report = build_report([run_dir], (), "official")
    notes = [note for section in report.sections for note in section.notes]
    assert any("partial report: the run is still going, 20 of 90 planned rollouts finished" in n for n in notes), notes
    assert not any("to the spec's `evaluate`" in n for n in notes)  # the spec has "official": no advice to add it
    rates = next(t for t in report.tables() if t.name == "pass_rates")
    oracle = next(row for row in rates.rows if row[0] == "oracle")
    assert oracle[3] == 10  # N: the finished rollouts, not the 45 planned
    assert oracle[4:] == (1.0,) * 6  # the oracle passes every task it finished; unfinished ones are not failures
