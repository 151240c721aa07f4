"""TravelEval's command-line commands: `data fetch|import traveleval` and `data info` (`data`), `evaluate`
(`evaluate`) and `tool` (`tool`); the benchmark's `commands` part (`base.Commands`)."""

from __future__ import annotations

from pathlib import Path

import click

from benchmarks.answers_files import first_record, head
from benchmarks.traveleval.commands.data import data_info, holds_data

__all__ = ["by_name", "data_info", "holds_answers", "holds_data"]


def holds_answers(path: Path) -> bool:
    """A plans file: one `FinalTravelPlan` (`query_uid`, `itinerary`) per line, or the official generator's JSON array
    of them (named `plans_<model>_<strategy>.json`, or any array whose start names a `query_uid`)."""
    from benchmarks.traveleval.plan_files import official_source

    if official_source(path) is not None:
        return True
    start = head(path).lstrip()
    if start.startswith("["):
        return '"query_uid"' in start
    record = first_record(path)
    return isinstance(record, dict) and ("query_uid" in record or "itinerary" in record)


def by_name() -> dict[str, click.Command]:
    """`evaluate`, `tool`, `fetch`, `import`; imported when asked for (`data info` needs none)."""
    from benchmarks.traveleval.commands import data, evaluate, tool

    return {"evaluate": evaluate.evaluate_command, "tool": tool.tool_command, "fetch": data.fetch_command,
            "import": data.import_command}
