"""`tripbench tool --benchmark traveleval ACTION`: one sandbox tool call, answered as the ReAct agents see it."""

from __future__ import annotations

from pathlib import Path

import click

from benchmarks.traveleval import paths, prompts
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import TOOLS_TEXT, run_tool
from datahome import home_option
from errors import UsageError


@click.command("tool")
@click.argument("action")
@home_option
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
              help="A TravelEval folder in the official layout (default: traveleval/ in the data home).")
def tool_command(action: str, home: Path | None, data_dir: Path | None) -> None:
    """Run a TravelEval tool call and print the observation the agent would get.

    ACTION is written as the agent writes it after `Action:`, a tool and its JSON arguments, e.g.
    'search_trains {"from_city": "北京", "to_city": "上海"}' or 'search_hotels {"city": "上海", "feature": "免费停车"}'.
    """
    try:
        call = prompts.parse_action(f"Action: {action}")
    except prompts.ActionError as exc:
        raise UsageError(f"{exc}\nThe tools:\n{TOOLS_TEXT}") from None
    if call.name == prompts.FINISH:
        raise UsageError("`finish` ends a rollout with its plan; score plans with `tripbench evaluate --benchmark "
                        "traveleval`")
    with Sandbox.open(ensure_index(data_dir or paths.data_dir(home))) as sandbox:
        result = run_tool(sandbox, call.name, call.arguments)
    if result.error is not None:  # an unknown tool or bad arguments: a usage error (exit 2), as for TravelPlanner
        raise UsageError(result.observation)
    # Arguments are echoed back in observations; a lone surrogate cannot be written as UTF-8.
    click.echo(result.observation.encode("utf-8", "backslashreplace").decode("utf-8"))
