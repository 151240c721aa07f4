"""`tripbench tool`: the agent's observation, the reference rendering and the rows of one action."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.travelplanner.tools import execute_action, parse_action
from errors import DataError, UsageError, UserError
from runner.cli.main import cli


def tool(index: Path, *args: str, **env: str):
    return CliRunner().invoke(cli, ["tool", "--index", str(index), *args], env=env or None)


@pytest.mark.parametrize("action", [
    "FlightSearch[St. Petersburg, Rockford, 2022-03-16]",
    "AttractionSearch[Rockford]",
    "AccommodationSearch[Rockford]",
    "RestaurantSearch[Rockford]",
    "CitySearch[Illinois]",
    "GoogleDistanceMatrix[Kansas City, Pensacola, self-driving]",
])
def test_prints_the_agents_observation(sandbox, travelplanner_index: Path, action: str) -> None:
    done = tool(travelplanner_index, action)
    assert done.exit_code == 0, done.output
    assert done.output == execute_action(sandbox, *parse_action(action)).observation + "\n"


@pytest.mark.parametrize("action", ["FlightSearch[Rockford, Gotham, 2022-03-16]", "Fly[there]",
                                    "FlightSearch[Rockford]"])
def test_a_call_the_tools_refuse_is_a_usage_error_saying_what_the_agent_sees(sandbox, travelplanner_index: Path,
                                                                             action: str) -> None:
    """An unknown tool or bad arguments: exit 2 as for TravelEval's tools (README exit codes), the agent's
    observation in the message."""
    done = tool(travelplanner_index, action)
    assert isinstance(done.exception, UsageError), done.output
    assert str(done.exception) == f"{action}: " + execute_action(sandbox, *parse_action(action)).observation


def test_action_is_normalised_as_the_agent_does(travelplanner_index: Path) -> None:
    """Surrounding whitespace is stripped and inner newlines deleted before parsing (docs/fidelity/travelplanner.md
    §4.2)."""
    plain = tool(travelplanner_index, "CitySearch[Ohio]").output
    assert tool(travelplanner_index, "  \nCitySearch[Oh\nio]\n").output == plain


def test_reference_prints_the_official_reference_text(travelplanner_index: Path, travelplanner_data: Path) -> None:
    with open(travelplanner_data / "queries/train.jsonl", encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    official = {e["Description"]: e["Content"] for e in ast.literal_eval(first["reference_information"])}
    for action, description in [
        ("RestaurantSearch[Rockford]", "Restaurants in Rockford"),
        ("AccommodationSearch[Rockford]", "Accommodations in Rockford"),
        ("FlightSearch[St. Petersburg, Rockford, 2022-03-16]", "Flight from St. Petersburg to Rockford on 2022-03-16"),
        ("GoogleDistanceMatrix[St. Petersburg, Rockford, taxi]", "Taxi from St. Petersburg to Rockford"),
    ]:
        done = tool(travelplanner_index, "--reference", action)
        assert done.exit_code == 0, done.output
        assert done.output == official[description] + "\n"


def test_json_prints_the_rows(travelplanner_index: Path, travelplanner_data: Path) -> None:
    rows = json.loads(tool(travelplanner_index, "--json", "FlightSearch[St. Petersburg, Rockford, 2022-03-16]").output)
    with open(travelplanner_data / "database/train_ref_info.jsonl", encoding="utf-8") as handle:
        official = json.loads(handle.readline())
    assert rows == official["Flight from St. Petersburg to Rockford on 2022-03-16"]
    assert json.loads(tool(travelplanner_index, "--json", "CitySearch[Illinois]").output)[-1] == "Peoria"


def test_home_option_finds_the_index(travelplanner_index: Path) -> None:
    home = {"TRIPBENCH_HOME": str(travelplanner_index.parent)}
    done = CliRunner().invoke(cli, ["tool", "CitySearch[Ohio]"], env=home)
    assert done.exit_code == 0 and done.output.startswith("[")


def test_odd_arguments_are_echoed_not_crashed_on(travelplanner_index: Path) -> None:
    done = tool(travelplanner_index, "AttractionSearch[Rock\ud800ford]")
    assert isinstance(done.exception, UsageError)  # a refused call (README exit codes: 2), printable as UTF-8
    assert str(done.exception).startswith("AttractionSearch[Rock\\ud800ford]: Rock\\ud800ford is not valid city in [")


@pytest.mark.parametrize("args, error, text", [
    (["--reference", "CitySearch[Illinois]"], UserError, "no reference_information entry"),
    (["NotebookWrite[flights]"], UserError, "NotebookWrite is handled by the agent inside a rollout"),
    (["Planner[a 3-day plan]"], UserError, "not by the sandbox; try FlightSearch"),
])
def test_user_errors(travelplanner_index: Path, args: list[str], error: type[Exception], text: str) -> None:
    done = tool(travelplanner_index, *args)
    assert isinstance(done.exception, error) and text in str(done.exception)


def test_missing_index_is_a_one_line_hint(tmp_path: Path) -> None:
    assert isinstance(tool(tmp_path / "none.sqlite", "CitySearch[Ohio]").exception, DataError)
    done = subprocess.run(
        [sys.executable, "-c", "from runner.cli.main import main; main()", "tool", "--home", str(tmp_path),
         "CitySearch[Ohio]"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2  # an input that is not there (README exit codes)
    assert done.stderr.count("\n") == 1 and "tripbench data import" in done.stderr
