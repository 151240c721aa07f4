"""The report's numbers are the evaluator's numbers: Table 3 and Table 4 equal `tripbench evaluate` on the run's
submission files; CSV and Markdown carry the same values; the test split reports delivery only."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.travelplanner.dataset import load_queries
from benchmarks.travelplanner.evaluation.metrics import RATE_NAMES, constraint_rates
from reports import build_report, write_report
from reports.table import Table
from runner.cli.main import cli
from tests.reports.report_runs import run, write_spec


def evaluate_json(submission: Path, data: Path, index: Path, mode: str = "official") -> dict:
    result = CliRunner().invoke(cli, ["evaluate", str(submission), "--split", "train", "--data", str(data),
                                      "--index", str(index), "--mode", mode, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def table(report_tables: list[Table], name: str) -> Table:
    return next(t for t in report_tables if t.name == name)


@pytest.mark.parametrize("mode", ["official", "strict"])
def test_pass_rates_and_constraint_table_equal_tripbench_evaluate(train_runs: dict[str, Path], travelplanner_data: Path,
                                                                  travelplanner_index: Path, mode: str) -> None:
    report = build_report([train_runs["agents"], train_runs["greedy"]], mode=mode)
    tables = report.tables()
    rows = table(tables, "pass_rates").rows
    groups = [g for run in report.runs for g in run.groups]
    assert [(row[1], row[2]) for row in rows] == [("oracle", "two-stage"), ("noisy", "two-stage"),
                                                  ("no-llm", "greedy")]
    finals = set()
    for row, group in zip(rows, groups, strict=True):
        official = evaluate_json(group.submission, travelplanner_data, travelplanner_index, mode)
        assert row[4] == 45
        assert list(row[5:]) == [official["metrics"][name] for name in RATE_NAMES]  # exact, not approximately
        finals.add(row[-1])
        # Table 4 of the same group equals the evaluator's detail table, constraint by constraint
        expected = constraint_rates(_int_days(official["detailed"]))
        got = next(t for t in tables if t.title.startswith(f"Constraint pass rates, {group.label} "))
        assert [c.name for c in got.columns[2:]] == list(expected.columns)
        assert [list(r[2:]) for r in got.rows] == [list(values) for _, _, values in expected.rows]
    assert len(finals) == 3  # three different agents, three different outcomes: the comparison is not vacuous


def _int_days(detailed: dict) -> dict:
    """JSON turned the day keys into strings; the evaluator's own table has ints."""
    return {group: {level: {int(days): cell for days, cell in cells.items()} for level, cells in levels.items()}
            for group, levels in detailed.items()}


def test_csv_and_markdown_show_the_tables_values(train_runs: dict[str, Path], tmp_path: Path) -> None:
    report = build_report([train_runs["agents"]])
    files = write_report(report, tmp_path / "report")
    rates = table(report.tables(), "pass_rates")
    with (files["csv"] / "pass_rates.csv").open(newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert [line["model"] for line in lines] == ["oracle", "noisy"]
    for line, row in zip(lines, rates.rows, strict=True):
        assert float(line["Final pass"]) == pytest.approx(100 * row[-1], abs=1e-4)
        assert float(line["Delivery"]) == pytest.approx(100 * row[4], abs=1e-4)
    markdown = files["markdown"].read_text(encoding="utf-8")
    oracle = rates.rows[0]
    assert f"| oracle | two-stage | train | 45 | {100 * oracle[4]:.1f} |" in markdown
    # every table has its CSV, every plot its PNG, and the Markdown links each plot
    assert sorted(p.stem for p in files["csv"].glob("*.csv")) == sorted(t.name for t in report.tables())
    for plot in report.plots():
        assert (files["plots"] / f"{plot.name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(plots/{plot.name}.png)" in markdown


def test_error_tables_count_every_rollout_and_match_the_noisy_models_statuses(train_runs: dict[str, Path]) -> None:
    report = build_report([train_runs["agents"]])
    taxonomy = table(report.tables(), "error_taxonomy")
    noisy = {row[2]: row[4] for row in taxonomy.rows if row[0] == "noisy"}
    assert sum(noisy.values()) == 45
    group = next(g for g in report.runs[0].groups if g.model == "noisy")
    statuses: dict[str, int] = {}
    for view in group.rollouts:
        statuses[view.stored.status] = statuses.get(view.stored.status, 0) + 1
    assert noisy == statuses  # the stored statuses agree with the categories re-derived from the step logs
    figure2 = next(row for row in table(report.tables(), "tool_use_errors").rows if row[0] == "noisy")
    failures = figure2[2]
    assert failures == sum(n for category, n in noisy.items() if category.endswith("dead_loop")
                           or category in ("max_steps", "token_limit"))
    assert sum(share for share in figure2[3:7] if share is not None) == pytest.approx(1.0)


def test_a_test_split_run_reports_delivery_errors_and_cost_only(travelplanner_data: Path, travelplanner_index: Path,
                                                               tmp_path: Path) -> None:
    # The public test split hides the constraints: the same queries without them.
    hidden = tmp_path / "test.jsonl"
    with hidden.open("w", encoding="utf-8") as out:
        for line in (travelplanner_data / "queries" / "train.jsonl").read_text(encoding="utf-8").splitlines()[:6]:
            record = json.loads(line)
            for field in ("visiting_city_number", "people_number", "local_constraint", "budget", "annotated_plan"):
                record.pop(field, None)
            out.write(json.dumps(record) + "\n")
    assert not any(q.has_labels for q in load_queries(hidden))
    spec = write_spec(tmp_path, "test", queries=str(hidden), models=[("no-llm", "offline:oracle")],
                      strategies=["greedy"], index=travelplanner_index)
    report = build_report([run(spec, tmp_path / "run")])
    row = table(report.tables(), "pass_rates").rows[0]
    assert row[3] == 6 and row[4] is not None and row[5:] == (None,) * 5  # no run column: one run
    assert "test split" in (table(report.tables(), "pass_rates").note or "")
    assert not any(t.name.startswith("constraints_") for t in report.tables())
    submissions = table(report.tables(), "submissions").rows
    assert submissions[0][3].endswith("outputs/no-llm/greedy/submission.jsonl")
    assert table(report.tables(), "cost").rows[0][2] == 6


def test_a_run_without_verdicts_in_the_mode_says_so_instead_of_scoring_zero(travelplanner_data: Path,
                                                                           travelplanner_index: Path,
                                                                           tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "unscored", queries="train", models=[("no-llm", "offline:oracle")],
                      strategies=["greedy"], index=travelplanner_index, data_dir=travelplanner_data,
                      extra="limit = 3", evaluate=())
    report = build_report([run(spec, tmp_path / "run")], mode="strict")
    rates = table(report.tables(), "pass_rates")
    assert rates.rows[0][3:] == (3, 1.0, None, None, None, None, None)
    assert "Not evaluated in this mode: no-llm / greedy" in (rates.note or "")
    assert any("no `strict` evaluation is stored" in note for note in report.sections[0].notes)
