"""TravelEval's command-line commands: `data fetch|import traveleval` and `data info` (`data`), `evaluate`
(`evaluate`) and `tool` (`tool`); the benchmark's `commands` part (`base.Commands`)."""

from __future__ import annotations

from pathlib import Path

import click

from benchmarks.answers_files import first_record
from benchmarks.traveleval.commands.data import data_info, holds_data

__all__ = ["by_name", "data_info", "holds_answers", "holds_data"]


def holds_answers(path: Path) -> bool:
    """A plans file: one `FinalTravelPlan` (`query_uid`, `itinerary`) per line."""
    record = first_record(path)
    return isinstance(record, dict) and ("query_uid" in record or "itinerary" in record)


def by_name() -> dict[str, click.Command]:
    """`evaluate`, `tool`, `fetch`, `import`; imported when asked for (`data info` needs none)."""
    from benchmarks.traveleval.commands import data, evaluate, tool

    return {"evaluate": evaluate.evaluate_command, "tool": tool.tool_command, "fetch": data.fetch_command,
            "import": data.import_command}
