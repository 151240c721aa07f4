"""One exit-code rule for every command (README "Commands"): 0 done, nothing wrong; 1 ran and found problems or failed
on the way; 2 a usage or input error (a bad value, an unknown name, an input that is not there), nothing ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.cli.main import COMMANDS
from tests.benchmarks.traveleval.conftest import TRAVELEVAL_DATA
from tests.runner.engine_support import run_cli
from tests.staged_data import require

DONE, PROBLEMS, USAGE = 0, 1, 2

SPEC = """benchmark = "natural-plan"
split = "calendar"
strategies = ["direct"]
limit = 2

[[models]]
model = "{model}"
"""


@pytest.fixture(scope="module")
def world(natural_plan_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home holding Natural Plan and TravelEval, a finished run `run/` of the offline oracle, its cache."""
    if not TRAVELEVAL_DATA.is_dir():
        require(f"the staged data at {TRAVELEVAL_DATA}", "clone the project beside ../shared")
    folder = tmp_path_factory.mktemp("exit-codes")
    for data in (natural_plan_data, TRAVELEVAL_DATA):
        assert run_cli("data", "import", str(data), home=folder / "home").returncode == 0
    (folder / "oracle.toml").write_text(SPEC.format(model="offline:oracle"))
    (folder / "keyed.toml").write_text(SPEC.format(model="openai:gpt-4o-mini"))
    done = run_cli("run", str(folder / "oracle.toml"), "--run-dir", str(folder / "run"), "--quiet",
                   home=folder / "home")
    assert done.returncode == 0, done.stderr
    (folder / "junk.jsonl").write_text('{"foo": 1}\n')
    (folder / "short.jsonl").write_text(json.dumps({"idx": 1, "query": "q", "plan": {"not": "a list"}}) + "\n")
    return folder


def cases(world: Path, index: Path) -> list[tuple[tuple[str, ...], int]]:
    run, missing = str(world / "run"), str(world / "nothing-here")
    return [
        # cache
        (("cache", "stats"), DONE),
        (("cache", "stats", "--cache-dir", missing), USAGE),
        (("cache", "prune", "--older-than", "5x"), USAGE),
        (("cache", "prune", "--max-size", "lots"), USAGE),
        (("cache", "prune"), USAGE),
        (("cache", "verify", "--cache-dir", missing), USAGE),
        (("cache", "explain", "--key", "v1:0000", "--cache-dir", str(world / "home" / "cache")), PROBLEMS),
        # check-submission
        (("check-submission", str(world / "short.jsonl")), PROBLEMS),  # 1 line of 1,000, a plan not a list
        (("check-submission", missing), USAGE),
        (("check-submission", "--benchmark", "traveleval", str(world / "junk.jsonl")), USAGE),
        # compare
        (("compare", missing, run), USAGE),
        (("compare", run, run), USAGE),  # both sides the same
        (("compare", run + ":nosuch/none", run), USAGE),
        # data
        (("data", "info"), DONE),
        (("data", "import", missing), USAGE),
        (("data", "fetch", "nosuch-benchmark"), USAGE),
        # demo
        (("demo", "--seed", "x"), USAGE),
        # evaluate
        (("evaluate", str(world / "junk.jsonl")), PROBLEMS),  # no benchmark recognises it
        (("evaluate", missing), USAGE),
        (("evaluate", "--benchmark", "nosuch", str(world / "junk.jsonl")), USAGE),
        # list
        (("list",), DONE),
        (("list", "--nosuch"), USAGE),
        # mock-server
        (("mock-server", "--config", missing), USAGE),
        # pack, replay: a pack made, replayed identical, inspected; a file that is not a pack, or is not there
        (("pack", run, "-o", str(world / "run.tbpack")), DONE),
        (("pack", missing), USAGE),
        (("replay", str(world / "run.tbpack"), "--info"), DONE),
        (("replay", str(world / "run.tbpack"), "--run-dir", str(world / "replayed")), DONE),
        (("replay", str(world / "junk.jsonl")), PROBLEMS),
        (("replay", missing), USAGE),
        # prices
        (("prices", "show", "zzz-no-such-model"), PROBLEMS),
        (("prices", "show", "openai:gpt-4o-mini"), DONE),
        # report
        (("report", missing), USAGE),
        (("report", run, "--mode", "nosuch"), USAGE),
        (("report", run, "--out", str(world / "report")), DONE),
        # run
        (("run", missing + ".toml"), USAGE),
        (("run", str(world / "keyed.toml"), "--run-dir", str(world / "keyed")), PROBLEMS),  # no key
        (("run", str(world / "oracle.toml"), "--run-dir", run, "--quiet"), DONE),
        # status
        (("status", run), DONE),
        (("status", missing), USAGE),
        # tool
        (("tool", "--index", str(index), "NoSuchTool[Rockford]"), USAGE),
        (("tool", "--index", str(index), "FlightSearch[Rockford, Nowhere, 2022-03-16]"), USAGE),
        (("tool", "--index", str(index), "CitySearch[Illinois]"), DONE),
        (("tool", "--index", missing, "CitySearch[Illinois]"), USAGE),
        (("tool", "--benchmark", "traveleval", 'no_such_tool {"city": "上海"}'), USAGE),
        (("tool", "--benchmark", "traveleval", 'search_hotels {"city": "上海"}'), DONE),
        (("tool", "--benchmark", "natural-plan", "x"), USAGE),
        # answers made elsewhere: a file that is not there, an unknown benchmark
        (("import-plans", str(world / "nosuch.json"), "--benchmark", "traveleval", "--run-dir", str(world / "imp")),
         USAGE),
        (("import-plans", str(world / "oracle.toml"), "--benchmark", "nosuch", "--run-dir", str(world / "imp")),
         USAGE),
        # the team database: its variable unset, no such subcommand
        (("team", "status", "--url-env", "TRIPBENCH_NO_SUCH_VARIABLE"), USAGE),
        (("team", "nosuch"), USAGE),
        (("team", "budget", "night\x07", "--url-env", "TRIPBENCH_NO_SUCH_VARIABLE"), USAGE),
        (("team", "budget", "night", "--cap", "5", "--no-cap"), USAGE),
        (("team", "budget", "night", "--cap", "-1"), USAGE),
        # no such command
        (("nosuch",), USAGE),
    ]


def test_every_command_follows_the_exit_code_rule(world: Path, travelplanner_index: Path) -> None:
    table = cases(world, travelplanner_index)
    covered = {args[0] for args, _ in table}
    assert set(COMMANDS) <= covered, set(COMMANDS) - covered  # a new command joins the table
    wrong = []
    for args, code in table:
        done = run_cli(*args, home=world / "home", cwd=world)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        if done.returncode != code:
            wrong.append((args, done.returncode, code, done.stderr.strip()[-300:]))
    assert not wrong, "\n".join(map(str, wrong))
    assert not (world / "keyed").exists()  # a run that never started wrote nothing
