"""`tripbench evaluate` and `tripbench check-submission` end to end (click CliRunner, real index)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from benchmarks.travelplanner.dataset import Query
from errors import UserError
from runner.cli.main import cli
from tests.runner.engine_support import run_cli


def _train_submission(path: Path, queries: list[Query]) -> Path:
    path.write_text("".join(json.dumps({"idx": i + 1, "query": q.query, "plan": q.annotated_plan}) + "\n"
                            for i, q in enumerate(queries)))
    return path


def test_evaluate_json(tmp_path: Path, travelplanner_data: Path, travelplanner_index: Path,
                       train_queries: list[Query]) -> None:
    submission = _train_submission(tmp_path / "train.jsonl", train_queries)
    result = CliRunner().invoke(cli, ["evaluate", str(submission), "--split", "train",
                                      "--data", str(travelplanner_data), "--index", str(travelplanner_index), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert set(report) == {"metrics", "detailed", "per_plan"}
    assert report["metrics"] == {
        "Delivery Rate": 1.0, "Commonsense Constraint Micro Pass Rate": 1.0,
        "Commonsense Constraint Macro Pass Rate": 1.0, "Hard Constraint Micro Pass Rate": 1.0,
        "Hard Constraint Macro Pass Rate": 1.0, "Final Pass Rate": 1.0}
    assert report["detailed"]["Hard Constraint"]["hard"]["7"]["Budget"] == {"true": 5, "false": 0, "total": 5}
    assert len(report["per_plan"]) == 45
    first = report["per_plan"][0]
    assert set(first) == {"commonsense", "hard", "total_cost", "error"}
    assert first["commonsense"]["is_not_absent"] == [True, None]
    assert first["hard"]["valid_cuisine"] == [None, None]
    assert first["total_cost"] == 1608 and first["error"] is None


def test_evaluate_tables_and_strict_mode(tmp_path: Path, travelplanner_data: Path, travelplanner_index: Path,
                                         train_queries: list[Query]) -> None:
    submission = _train_submission(tmp_path / "train.jsonl", train_queries)
    queries = travelplanner_data / "queries" / "train.jsonl"
    result = CliRunner().invoke(cli, ["evaluate", str(submission), "--queries", str(queries), "--index",
                                      str(travelplanner_index), "--mode", "strict"])
    assert result.exit_code == 0, result.output
    assert "strict evaluator" in result.output and "Final Pass Rate" in result.output
    assert "97.8" in result.output  # 44 of 45: train query 41 fails Within Current City in strict mode
    assert "Within Current City" in result.output and "7-day" in result.output


def test_evaluate_refuses_the_public_test_split(tmp_path: Path, travelplanner_index: Path,
                                                train_queries: list[Query]) -> None:
    submission = _train_submission(tmp_path / "s.jsonl", train_queries[:2])
    result = CliRunner().invoke(cli, ["evaluate", str(submission), "--split", "test", "--home", str(tmp_path),
                                      "--index", str(travelplanner_index)])
    assert result.exit_code == 1
    assert isinstance(result.exception, UserError)
    assert "public test split hides" in str(result.exception) and "check-submission" in str(result.exception)


def test_check_submission_command(tmp_path: Path, travelplanner_data: Path, train_queries: list[Query]) -> None:
    submission = _train_submission(tmp_path / "s.jsonl", train_queries)
    result = CliRunner().invoke(cli, ["check-submission", str(submission), "--split", "test"])
    assert result.exit_code == 1
    assert "45 lines, but the test set has 1000 queries" in result.output
    assert "1 problem(s)" in str(result.exception)
    ok = CliRunner().invoke(cli, ["check-submission", str(submission), "--split", "train", "--data",
                                  str(travelplanner_data)])
    assert ok.exit_code == 0 and ok.output.strip() == f"{submission}: OK"
    missing = CliRunner().invoke(cli, ["check-submission", str(submission), "--split", "train", "--queries",
                                       str(tmp_path / "missing.jsonl")])
    assert missing.exit_code == 1 and "query file not found" in str(missing.exception)


def test_evaluate_reports_unreadable_lines_and_unchecked_constraints(
        tmp_path: Path, travelplanner_data: Path, travelplanner_index: Path, train_queries: list[Query]) -> None:
    plan = [dict(day) for day in train_queries[0].annotated_plan]  # type: ignore[union-attr]
    plan[0]["transportation"] = plan[0]["transportation"].replace("Flight Number:", "Flight number:")
    submission = tmp_path / "s.jsonl"
    submission.write_text("not json\n" + json.dumps({"idx": 2, "query": "", "plan": plan}) + "\n")
    queries = tmp_path / "q.jsonl"
    rows = [json.loads(line) for line in (travelplanner_data / "queries" / "train.jsonl").read_text().splitlines()]
    queries.write_text("".join(json.dumps(row) + "\n" for row in (rows[1], rows[0])))
    result = CliRunner().invoke(cli, ["evaluate", str(submission), "--queries", str(queries), "--index",
                                      str(travelplanner_index)])
    assert result.exit_code == 0, result.output
    assert "1 line(s) could not be read and 1 constraint(s) could not be checked" in result.output


def test_evaluate_counts_queries_without_a_line_apart_from_unreadable_lines(
        tmp_path: Path, travelplanner_data: Path, travelplanner_index: Path, train_queries: list[Query]) -> None:
    submission = _train_submission(tmp_path / "short.jsonl", train_queries[:3])
    result = CliRunner().invoke(cli, ["evaluate", str(submission), "--split", "train", "--data",
                                      str(travelplanner_data), "--index", str(travelplanner_index)])
    assert result.exit_code == 0, result.output
    assert "42 query(ies) have no line in the file (scored as failures" in result.output
    assert "could not be read" not in result.output


def test_an_empty_submission_is_named_not_scored_as_zeros(tmp_path: Path, travelplanner_data: Path,
                                                          travelplanner_index: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n")
    for command, *flags in (("evaluate", "--index", str(travelplanner_index)), ("check-submission",)):
        done = run_cli(command, str(tmp_path / "empty.jsonl"), "--split", "validation", "--data",
                       str(travelplanner_data), *flags)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
        assert 'empty.jsonl: empty: expected one {"idx", "query", "plan"} object per line' in done.stderr
