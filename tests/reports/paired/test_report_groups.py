"""`tripbench report` of a run of several groups: the groups compared pair by pair with the first, or with
`--baseline`, in report.md, report.html and the CSVs (the tables of `tripbench compare`)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from reports import build
from tests.reports.paired.conftest import TASKS
from tests.runner.engine_support import run_cli


def _rows(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "csv" / f"{name}.csv").open(encoding="utf-8") as file:
        return list(csv.DictReader(file))


def test_a_run_of_several_groups_compares_them_with_the_first(toy_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = run_cli("report", str(toy_runs["groups"]), "--out", str(out))
    assert done.returncode == 0, done.stderr
    (passed,) = [row for row in _rows(out, "compare_binary") if row["metric"] == "passed"]
    assert (passed["A"], passed["B"]) == ("groups:toy/scripted", "groups:toy/silent")
    pairs = 2 * TASKS  # two samples of each task
    assert (int(passed["N"]), int(passed["A only"]), int(passed["B only"])) == (pairs, pairs, 0)
    # McNemar: every discordant pair one way
    assert float(passed["p"]) == pytest.approx(2 / 2**pairs, rel=1e-5) and passed["sig."] == "*"
    (per_task,) = [row for row in _rows(out, "compare_per_task") if row["metric"] == "passed"]
    assert int(per_task["tasks"]) == TASKS and float(per_task["Δ"]) == -100.0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "## Groups compared pair by pair" in markdown
    assert "Each group (B) against groups:toy/scripted (A)" in markdown
    assert "| groups:toy/scripted | groups:toy/silent | passed |" in markdown
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="compare_binary"' in html and 'id="compare_changes"' in html


def test_baseline_names_the_group_the_others_are_compared_with(toy_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = run_cli("report", str(toy_runs["groups"]), "--out", str(out), "--baseline", "toy/silent")
    assert done.returncode == 0, done.stderr
    (passed,) = [row for row in _rows(out, "compare_binary") if row["metric"] == "passed"]
    assert (passed["A"], passed["B"], passed["B only"]) == ("groups:toy/silent", "groups:toy/scripted", str(2 * TASKS))
    changes = _rows(out, "compare_changes")
    assert len(changes) == 2 * TASKS and {row["change"] for row in changes} == {"improved"}


def test_a_run_of_one_group_has_no_paired_section(toy_runs: dict[str, Path], tmp_path: Path) -> None:
    done = run_cli("report", str(toy_runs["a"]), "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    assert "pair by pair" not in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def test_an_unknown_baseline_is_a_usage_error(toy_runs: dict[str, Path], tmp_path: Path) -> None:
    for baseline, message in (("toy/nothing", "the run has no group toy/nothing (it has: toy/scripted, toy/silent)"),
                              ("toy", "--baseline toy: name a group as MODEL/STRATEGY"),
                              ("toy/scripted", "--baseline toy/scripted: the run has no other group")):
        run = toy_runs["a" if "no other" in message else "groups"]
        done = run_cli("report", str(run), "--out", str(tmp_path / "r"), "--baseline", baseline)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_report_lists_the_first_changes_and_counts_the_rest(toy_runs: dict[str, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "CHANGES_SHOWN", 5)
    report = build.build_report([toy_runs["groups"]])
    (changes,) = [table for table in report.tables() if table.name == "compare_changes"]
    assert len(changes.rows) == 5
    assert f"The first 5 shown, {2 * TASKS - 5} more: `tripbench compare" in (changes.note or "")
