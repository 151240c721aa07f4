"""Natural Plan's own commands: evaluate, data fetch / import / info (the benchmark's `commands` part,
`base.Commands`)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from benchmarks.answers_files import first_record, head
from benchmarks.natural_plan.commands.data import data_info, holds_data
from benchmarks.natural_plan.dataset import FILE_STEMS

__all__ = ["by_name", "data_info", "holds_answers", "holds_data"]

_OFFICIAL = re.compile(r'\s*\{\s*"(?:' + "|".join(FILE_STEMS.values()) + r')_example_')
"""The start of an official-format file: an object keyed by example ids (`calendar_scheduling_example_543`)."""


def holds_answers(path: Path) -> bool:
    """An official-format file, or a run's submission: `{"id", "task", "answer"}` per line."""
    record = first_record(path)
    if isinstance(record, dict) and "id" in record and ("task" in record or "answer" in record):
        return True
    return bool(_OFFICIAL.match(head(path)))


def by_name() -> dict[str, click.Command]:
    """`evaluate`, `fetch`, `import`; imported when asked for (`data info` needs none)."""
    from benchmarks.natural_plan.commands import data, evaluate

    return {"evaluate": evaluate.evaluate_command, "fetch": data.fetch_command, "import": data.import_command}
