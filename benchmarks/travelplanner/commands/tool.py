"""`tripbench tool ACTION`: run one TravelPlanner tool action against the sandbox index and print the result."""

from __future__ import annotations

import json
from pathlib import Path

import click

from benchmarks.travelplanner.agents.planner_tool import format_step
from benchmarks.travelplanner.reference import entry_for_action
from benchmarks.travelplanner.render import records
from benchmarks.travelplanner.tools import SUCCESSFUL, execute_action, parse_action
from datahome import default_home, home_option
from errors import UsageError, UserError
from sandbox_index import Frame, open_sandbox, travelplanner_index_path


@click.command("tool")
@click.argument("action")
@click.option("--reference", is_flag=True, help="Print the sole-planning reference_information rendering instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the result rows (or message) as JSON.")
@home_option
@click.option("--index", "index_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The index file (default: travelplanner.sqlite in the data home).")
@click.option("--synthetic", is_flag=True, help="Include synthetic flights (performance work only).")
def tool_command(action: str, reference: bool, as_json: bool, home: Path | None, index_path: Path | None,
                 synthetic: bool) -> None:
    """Run a TravelPlanner tool action and print what the agent would see.

    ACTION is written as the two-stage agent writes it, e.g.
    'FlightSearch[St. Petersburg, Rockford, 2022-03-16]', 'RestaurantSearch[Rockford]',
    'GoogleDistanceMatrix[Kansas City, Pensacola, self-driving]' or 'CitySearch[Illinois]'.
    """
    if reference and as_json:
        raise click.UsageError("--reference and --json are alternatives")
    path = index_path or travelplanner_index_path(home or default_home())
    # normalised as the agent does (docs/fidelity/travelplanner.md §4.2)
    action_type, argument = parse_action(format_step(action))
    with open_sandbox(path, synthetic=synthetic) as sandbox:
        if reference:
            try:
                _echo(entry_for_action(sandbox, action_type, argument).content)
            except ValueError as exc:
                raise UserError(str(exc)) from None
            return
        try:
            outcome = execute_action(sandbox, action_type, argument)
        except ValueError:  # NotebookWrite / Planner: the agent's own state
            raise UserError(f"{action_type} is handled by the agent inside a rollout (its notebook, its planner "
                            "model), not by the sandbox; try FlightSearch, AttractionSearch, AccommodationSearch, "
                            "RestaurantSearch, GoogleDistanceMatrix or CitySearch") from None
    if outcome.state != SUCCESSFUL:  # an unknown tool or bad arguments: a usage error (exit 2), as for TravelEval
        raise UsageError(_printable(f"{action}: {outcome.observation}"))
    if as_json:
        data = records(outcome.data) if isinstance(outcome.data, Frame) else outcome.data
        _echo(json.dumps(outcome.observation if data is None else data, ensure_ascii=False, indent=2))
    else:
        _echo(outcome.observation)


def _echo(text: str) -> None:
    click.echo(_printable(text))


def _printable(text: str) -> str:
    # Arguments are echoed back in error texts; a lone surrogate cannot be written as UTF-8.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
