"""`tripbench report` as a user runs it: side-by-side comparison with deltas, and clear errors for bad input."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from reports import build_report
from runner.cli.main import cli
from tests.reports.report_runs import run, write_spec


def test_compare_puts_runs_side_by_side_with_deltas(travelplanner_data: Path, travelplanner_index: Path,
                                                     tmp_path: Path) -> None:
    # Before / after: the same label and strategy, a worse then a better model behind it (as after a prompt fix).
    runs = []
    for name, model in (("before", "offline:noisy"), ("after", "offline:oracle")):
        spec = write_spec(tmp_path, name, queries="train", models=[("agent", model)], strategies=["two-stage"],
                          index=travelplanner_index, data_dir=travelplanner_data, extra="limit = 12")
        runs.append(run(spec, tmp_path / name))

    report = build_report([runs[0]], compare=[runs[1]])
    compared = next(t for t in report.tables() if t.name == "compare_rates")
    assert [c.name for c in compared.columns[4:]] == ["N before", "before", "N after", "after", "Δ after"]
    before_rates, after_rates = (next(t for t in build_report([r]).tables() if t.name == "pass_rates").rows[0]
                                 for r in runs)
    assert [row[3] for row in compared.rows] == ["Delivery", "Commonsense micro", "Commonsense macro", "Hard micro",
                                                 "Hard macro", "Final pass"]
    for row, before, now in zip(compared.rows, before_rates[4:], after_rates[4:], strict=True):
        assert row[4:] == (12, before, 12, now, now - before)
    assert all(row[8] >= 0 for row in compared.rows) and any(row[8] > 0 for row in compared.rows)
    assert next(s for s in report.sections if s.title == "Comparison").notes == [  # the same 12 tasks each side
        "Deltas are each run minus before, in percentage points (rates) or dollars (cost), for the (model, strategy) "
        "pairs both ran."]
    assert report.warnings == []
    money = next(t for t in report.tables() if t.name == "compare_cost")
    assert money.rows == [("agent", "two-stage", "train", 0.0, 0.0, 0.0)]  # offline models cost nothing


def test_cli_writes_the_report_and_says_where(train_runs: dict[str, Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", str(train_runs["agents"]), "--compare", str(train_runs["agents"]),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert str(tmp_path / "out" / "report.html") in result.output
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Rates compared" in html and "Δ agents (2)" in html


def test_compare_warns_when_the_runs_ran_other_tasks(travelplanner_data: Path, travelplanner_index: Path,
                                                    tmp_path: Path) -> None:
    runs = [run(write_spec(tmp_path, name, queries="train", models=[("agent", "offline:oracle")],
                           strategies=["two-stage"], index=travelplanner_index, data_dir=travelplanner_data,
                           extra=f"limit = {limit}"), tmp_path / name) for name, limit in (("few", 3), ("more", 5))]
    report = build_report([runs[0]], compare=[runs[1]])
    warning = "Warning: more ran 5 tasks and few 3, 3 in common: its rates are over other tasks."
    assert report.warnings == [warning]
    assert next(s for s in report.sections if s.title == "Comparison").notes[1:] == [warning]
    compared = next(t for t in report.tables() if t.name == "compare_rates")
    assert {(row[4], row[6]) for row in compared.rows} == {(3, 5)}
    result = CliRunner().invoke(cli, ["report", str(runs[0]), "--compare", str(runs[1]), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0 and "Warning: more ran 5 tasks" in result.output


def test_bad_run_directories_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "empty")])
    assert result.exit_code == 1
    assert "not a tripbench run directory" in str(result.exception)
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "does not exist" in result.output
