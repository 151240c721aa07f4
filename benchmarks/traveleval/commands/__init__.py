"""TravelEval's command-line commands: `data fetch|import traveleval` and `data info` (`data`), `evaluate`
(`evaluate`) and `tool` (`tool`); the benchmark's `commands` part (`base.Commands`)."""

from __future__ import annotations

import click

from benchmarks.traveleval.commands.data import data_info, holds_data

__all__ = ["by_name", "data_info", "holds_data"]


def by_name() -> dict[str, click.Command]:
    """`evaluate`, `tool`, `fetch`, `import`; imported when asked for (`data info` needs none)."""
    from benchmarks.traveleval.commands import data, evaluate, tool

    return {"evaluate": evaluate.evaluate_command, "tool": tool.tool_command, "fetch": data.fetch_command,
            "import": data.import_command}
