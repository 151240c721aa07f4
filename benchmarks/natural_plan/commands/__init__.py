"""Natural Plan's own commands: evaluate, data fetch / import / info (the benchmark's `commands` part,
`base.Commands`)."""

from __future__ import annotations

import click

from benchmarks.natural_plan.commands.data import data_info, holds_data

__all__ = ["by_name", "data_info", "holds_data"]


def by_name() -> dict[str, click.Command]:
    """`evaluate`, `fetch`, `import`; imported when asked for (`data info` needs none)."""
    from benchmarks.natural_plan.commands import data, evaluate

    return {"evaluate": evaluate.evaluate_command, "fetch": data.fetch_command, "import": data.import_command}
