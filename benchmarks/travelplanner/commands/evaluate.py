"""`tripbench evaluate` and `tripbench check-submission`: score TravelPlanner submission files."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from benchmarks.travelplanner.dataset import SPLIT_SIZES, Query, find_split_file, load_queries
from benchmarks.travelplanner.evaluation import MODES
from benchmarks.travelplanner.evaluation.metrics import RATE_NAMES, Scores, constraint_rates
from benchmarks.travelplanner.evaluation.submission import (
    NO_LINE,
    SubmissionResult,
    check_submission,
    evaluate_submission,
)
from benchmarks.travelplanner.evaluation.verdict import UNCHECKED
from datahome import default_home, home_option
from errors import DataError, UserError
from sandbox_index import open_sandbox, travelplanner_index_path

SPLITS = click.Choice(list(SPLIT_SIZES))
TABLE3_HEADERS = ("Delivery", "Commonsense Micro", "Commonsense Macro", "Hard Micro", "Hard Macro", "Final Pass Rate")

split_option = click.option("--split", type=SPLITS, help="Pair line i with query i of this split.")
queries_option = click.option("--queries", "queries_file", type=click.Path(dir_okay=False, path_type=Path),
                              help="Query file (CSV / JSONL / parquet, Hugging Face layout) to pair lines with.")
data_option = click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path),
                           help="Folder holding queries/<split>.* and optionally travelplanner.sqlite.")


def _split_queries(split: str | None, queries_file: Path | None, data_dir: Path | None,
                   home: Path | None) -> list[Query] | None:
    """The queries lines are paired with: --queries, else the split's file under --data or the data home."""
    if queries_file is not None:
        return load_queries(queries_file)
    if split is None:
        return None
    try:
        return load_queries(find_split_file(data_dir or (home or default_home()) / "travelplanner", split))
    except DataError:
        if split == "test":  # the public test file may be absent; lines with full records still work
            return None
        raise


@click.command("evaluate")
@click.argument("submission", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@split_option
@queries_option
@data_option
@click.option("--index", "index_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Sandbox index (default: <data>/travelplanner.sqlite if present, else the data home's).")
@home_option
@click.option("--mode", type=click.Choice(list(MODES)), default="official", show_default=True,
              help="official reproduces the leaderboard, quirks included; strict applies the documented fixes.")
@click.option("--json", "as_json", is_flag=True, help="Print metrics, detail table and per-plan verdicts as JSON.")
def evaluate_command(submission: Path, split: str | None, queries_file: Path | None, data_dir: Path | None,
                     index_path: Path | None, home: Path | None, mode: str, as_json: bool) -> None:
    """Score a TravelPlanner submission file.

    SUBMISSION is JSONL with {"idx", "query", "plan"} per line; line i pairs with query i of the split, or
    with its own query record when "query" is an object.
    """
    split_queries = _split_queries(split, queries_file, data_dir, home)
    if index_path is None:
        bundled = data_dir / "travelplanner.sqlite" if data_dir else None
        index_path = bundled if bundled and bundled.is_file() else travelplanner_index_path(home or default_home())
    with open_sandbox(index_path) as sandbox:
        result = evaluate_submission(submission, sandbox, split_queries=split_queries,
                                     split=None if queries_file else split, mode=mode)
    if result.misaligned:
        click.echo(f"Warning: {len(result.misaligned)} line(s) carry another query's text than the query they are "
                   f"paired with (first: line {result.misaligned[0]}); lines pair with queries by position, as in "
                   "the official evaluation.", err=True)
    if as_json:
        click.echo(json.dumps(_as_json(result), ensure_ascii=False))
    else:
        _render(result, mode)


@click.command("check-submission")
@click.argument("submission", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--split", type=SPLITS, default="test", show_default=True, help="The split the file answers.")
@queries_option
@data_option
@home_option
def check_submission_command(submission: Path, split: str, queries_file: Path | None, data_dir: Path | None,
                             home: Path | None) -> None:
    """Check a submission's format for the leaderboard.

    Prints one message per problem and exits 1 if there is any. With the split's queries at hand (train,
    validation, --queries) the query texts and the number of days of each plan are checked too.
    """
    queries = _split_queries(split, queries_file, data_dir, home) if queries_file or split != "test" else None
    problems = check_submission(submission, split=split, split_queries=queries)
    for problem in problems:
        click.echo(problem)
    if problems:
        raise UserError(f"{submission}: {len(problems)} problem(s); the leaderboard would reject or mis-score it")
    click.echo(f"{submission}: OK")


def _as_json(result: SubmissionResult) -> dict[str, object]:
    return {"metrics": result.scores.rates, "detailed": result.scores.detailed,
            "per_plan": [verdict.to_json() for verdict in result.verdicts]}


def _render(result: SubmissionResult, mode: str) -> None:
    console = Console(width=120)
    scores = result.scores
    table3 = Table(title=f"TravelPlanner, {scores.queries} queries, {mode} evaluator (paper Table 3, %)")
    for header in TABLE3_HEADERS:
        table3.add_column(header, justify="right")
    table3.add_row(*(f"{100 * scores.rates[name]:.1f}" for name in RATE_NAMES))
    console.print(table3)
    console.print(_constraint_table(scores))
    if summary := _problem_summary(result):
        console.print(summary)


def _problem_summary(result: SubmissionResult) -> str | None:
    """One sentence counting unreadable lines, queries without a line and constraints that could not be checked."""
    missing = sum(verdict.error == NO_LINE for verdict in result.verdicts)
    unreadable = sum(verdict.error is not None for verdict in result.verdicts) - missing
    unchecked = sum(1 for verdict in result.verdicts for box in (verdict.commonsense, verdict.hard) if box
                    for _, message in box.values() if message and message.startswith(UNCHECKED))
    parts = [text for count, text in ((unreadable, f"{unreadable} line(s) could not be read"),
                                      (missing, f"{missing} query(ies) have no line in the file"),
                                      (unchecked, f"{unchecked} constraint(s) could not be checked")) if count]
    if not parts:
        return None
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{listed} (scored as failures; see --json for the messages)."


def _constraint_table(scores: Scores) -> Table:
    """Paper Table 4: pass rate of each constraint by level and by trip length."""
    rates = constraint_rates(scores.detailed)
    table = Table(title="Constraint pass rate (paper Table 4, %)")
    table.add_column("Constraint")
    for column in rates.columns:
        table.add_column(column, justify="right")
    group = None
    for row_group, name, values in rates.rows:
        if row_group != group:
            table.add_section()
            group = row_group
        table.add_row(name, *("-" if value is None else f"{100 * value:.1f}" for value in values))
    return table
