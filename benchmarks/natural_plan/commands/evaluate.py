"""`tripbench evaluate --benchmark natural-plan`: score a file of answers by the official rules, with the official
per-group accuracies (trip by cities, meeting by people, calendar by people x days)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from benchmarks.jsonl import parse, read_jsonl
from benchmarks.natural_plan.benchmark import score_answer
from benchmarks.natural_plan.commands.data import data_dir
from benchmarks.natural_plan.dataset import (
    TASKS,
    answers_of,
    find_file,
    group_of,
    read_records,
    records_from,
    sorted_groups,
)
from benchmarks.natural_plan.evaluation import Scored
from datahome import home_option
from datahome.input_files import read_input
from errors import DataError

ANSWER_FIELD = "pred_5shot_pro"


@click.command("evaluate")
@click.argument("answers", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--task", type=click.Choice(TASKS), help="The task of every record (default: each record's own).")
@click.option("--field", default=ANSWER_FIELD, show_default=True,
              help="The field holding the answer in an official-format file.")
@click.option("--data", "data", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of the official files, for a file of our own answers (default: the data home's).")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print per-record verdicts and accuracies as JSON.")
def evaluate_command(answers: Path, task: str | None, field: str, data: Path | None, home: Path | None,
                     as_json: bool) -> None:
    """Score Natural Plan answers by the official rules.

    ANSWERS is a file in the official format (a JSON object of records, the answer in --field) or our own
    output (a run's submission.jsonl: {"id", "task", "answer"} per line, scored against the official files).
    """
    records, texts = _answers(answers, task, field, data or data_dir(home))
    verdicts = [(example_id, record, score_answer(record, texts[example_id]))
                for example_id, record in records.items()]
    summary = _summary(verdicts)
    if as_json:
        click.echo(json.dumps({**summary, "records": [
            {"id": example_id, "task": record["task"], **scored.to_json()} for example_id, record, scored in verdicts]},
            ensure_ascii=False))
        return
    console = Console(width=100)
    for name, found in summary["tasks"].items():
        table = Table(title=f"Natural Plan {name}: {found['solved']}/{found['n']} solved, "
                            f"accuracy {100 * found['accuracy']:.1f}%")
        for column in ("group", "N", "solved", "accuracy %"):
            table.add_column(column, justify="left" if column == "group" else "right")
        for label, group in found["groups"].items():
            table.add_row(label, str(group["n"]), str(group["solved"]), f"{100 * group['accuracy']:.1f}")
        console.print(table)
    console.print(f"overall accuracy: {100 * summary['accuracy']:.1f}% of {len(verdicts)} records")


def _answers(path: Path, task: str | None, field: str,
             folder: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The records and their answers: from the file itself (official format) or by id from the official files."""
    try:
        text = read_input(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a readable JSON file: {exc}") from None
    whole, _ = parse(text)  # the official format is one JSON object; else JSON lines, which `_read_lines` reads
    if isinstance(whole, dict) and "id" not in whole:  # an object keyed by example id, not a one-line submission
        official = records_from(whole, path, task)
        return official, answers_of(official, field)
    lines = _read_lines(path)
    kinds = {task} if task else {str(line.get("task")) for line in lines}
    unknown = kinds - set(TASKS)
    if unknown:
        raise DataError(f"{path}: unknown task(s) {', '.join(sorted(unknown))} (expected {', '.join(TASKS)})")
    known: dict[str, dict[str, Any]] = {}
    for kind in sorted(kinds):
        known.update(read_records(find_file(folder, kind), kind))
    records: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        example_id = str(line.get("id"))
        if example_id not in known:
            raise DataError(f"{path}:{number}: no record {example_id!r} in {folder}")
        records[example_id] = known[example_id]
        answer = line.get("answer")
        texts[example_id] = answer if isinstance(answer, str) else ""
    return records, texts


def _read_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for line in read_jsonl(path, expected='the official JSON object or one {"id", "task", "answer"}'):
        if line.error is not None:
            raise DataError(f"{path}:{line.number}: {line.error}")
        if not isinstance(line.value, dict) or "id" not in line.value:
            raise DataError(f"{path}:{line.number}: expected {{\"id\", \"task\", \"answer\"}}")
        lines.append(line.value)
    return lines


def _summary(verdicts: Sequence[tuple[str, Mapping[str, Any], Scored]]) -> dict[str, Any]:
    """Accuracy overall, per task, and per official group within each task."""
    per_task: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for _, record, scored in verdicts:
        per_task[record["task"]][group_of(record)].append(scored.solved)
    tasks: dict[str, Any] = {}
    for name in (t for t in TASKS if t in per_task):
        groups = per_task[name]
        oks = [ok for found in groups.values() for ok in found]
        tasks[name] = {"n": len(oks), "solved": sum(oks), "accuracy": sum(oks) / len(oks),
                       "groups": {label: {"n": len(groups[label]), "solved": sum(groups[label]),
                                          "accuracy": sum(groups[label]) / len(groups[label])}
                                  for label in sorted_groups(list(groups))}}
    solved = sum(scored.solved for _, _, scored in verdicts)
    return {"accuracy": solved / len(verdicts) if verdicts else 0.0, "tasks": tasks}
