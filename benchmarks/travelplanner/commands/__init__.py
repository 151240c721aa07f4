"""TravelPlanner's own commands: evaluate and check-submission, tool, data fetch / import / info (the benchmark's
`commands` part, `base.Commands`)."""

from __future__ import annotations

from pathlib import Path

import click

from benchmarks.answers_files import first_record
from benchmarks.travelplanner.commands.data import data_info, holds_data

__all__ = ["by_name", "data_info", "holds_answers", "holds_data"]


def holds_answers(path: Path) -> bool:
    """A submission file: `{"idx", "query", "plan"}` per line."""
    record = first_record(path)
    return isinstance(record, dict) and "plan" in record and ("idx" in record or "query" in record)


def by_name() -> dict[str, click.Command]:
    """`evaluate`, `check-submission`, `tool`, `fetch`, `import`; imported when asked for (`data info` needs none)."""
    from benchmarks.travelplanner.commands import data, evaluate, tool

    return {"evaluate": evaluate.evaluate_command, "check-submission": evaluate.check_submission_command,
            "tool": tool.tool_command, "fetch": data.fetch_command, "import": data.import_command}
