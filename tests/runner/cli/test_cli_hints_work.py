"""Every "do this" in a message is a command that works as printed (issue 31): the hints of a missing dataset, run one
by one (DIR and PATH filled in with real folders and files), then the command that failed succeeds."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.benchmarks.traveleval.conftest import TRAVELEVAL_DATA
from tests.runner.engine_support import CLI, PROJECT_ROOT
from tests.staged_data import require

UNREACHABLE = {"https_proxy": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
               "http_proxy": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "no_proxy": "", "NO_PROXY": ""}
"""A network that answers nothing (every download goes through a proxy on a closed port)."""


def tripbench(*args: str, home: Path, cwd: Path, offline: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "TRIPBENCH_HOME": str(home), **(UNREACHABLE if offline
                                                                                            else {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=False, env=env, cwd=cwd)


def hints(message: str) -> list[list[str]]:
    """The commands a message tells the user to run (`tripbench ...` in backquotes), as argument lists."""
    commands = [shlex.split(found) for found in re.findall(r"`(tripbench [^`]+)`", message)]
    assert commands, message
    return [command[1:] for command in commands]


def filled(command: list[str], **values: str) -> list[str]:
    return [values.get(arg, arg) for arg in command]


def follow(failed: subprocess.CompletedProcess[str], folder: Path, home: Path, cwd: Path) -> None:
    """Runs each hint of a failed command: a fetch reaches for the network (none here: it fails saying so, and its own
    hint is followed in turn); an import of DIR imports `folder`."""
    assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr
    for command in hints(failed.stderr):
        if "fetch" in command:
            fetched = tripbench(*command, home=home, cwd=cwd, offline=True)
            assert fetched.returncode == 1 and "cannot download" in fetched.stderr, fetched.stderr
            assert [hint for hint in hints(fetched.stderr) if "DIR" in hint], fetched.stderr
            continue
        assert "DIR" in command, command
        done = tripbench(*filled(command, DIR=str(folder)), home=home, cwd=cwd)
        assert done.returncode == 0, (command, done.stderr)


SPEC = """benchmark = "{benchmark}"
split = "{split}"
strategies = ["{strategy}"]
limit = 2

[[models]]
model = "offline:oracle"
"""


def spec(folder: Path, benchmark: str, split: str, strategy: str) -> str:
    path = folder / f"{benchmark}.toml"
    path.write_text(SPEC.format(benchmark=benchmark, split=split, strategy=strategy))
    return str(path)


def test_natural_plans_missing_data_hints_work(natural_plan_data: Path, tmp_path: Path) -> None:
    home, run = tmp_path / "home", spec(tmp_path, "natural-plan", "calendar", "direct")
    failed = tripbench("run", run, "--quiet", home=home, cwd=tmp_path)
    assert not (tmp_path / "runs").exists()
    follow(failed, natural_plan_data, home, tmp_path)
    assert tripbench("run", run, "--quiet", home=home, cwd=tmp_path).returncode == 0


def test_travelplanners_missing_data_hints_work(travelplanner_data: Path, tmp_path: Path) -> None:
    home, run = tmp_path / "home", spec(tmp_path, "travelplanner", "validation", "direct")
    failed = tripbench("run", run, "--quiet", home=home, cwd=tmp_path)
    assert "no query file for split 'validation'" in failed.stderr
    follow(failed, travelplanner_data, home, tmp_path)
    assert tripbench("run", run, "--quiet", home=home, cwd=tmp_path).returncode == 0


@pytest.fixture
def traveleval_folder() -> Path:
    if not TRAVELEVAL_DATA.is_dir():
        require(f"the staged data at {TRAVELEVAL_DATA}", "clone the project beside ../shared")
    return TRAVELEVAL_DATA


def test_travelevals_missing_data_hints_work(traveleval_folder: Path, tmp_path: Path) -> None:
    home, run = tmp_path / "home", spec(tmp_path, "traveleval", "easy", "direct")
    follow(tripbench("run", run, "--quiet", home=home, cwd=tmp_path), traveleval_folder, home, tmp_path)
    assert tripbench("run", run, "--quiet", home=home, cwd=tmp_path).returncode == 0


def test_prices_update_offline_names_a_command_that_works(tmp_path: Path) -> None:
    failed = tripbench("prices", "update", "--timeout", "5", home=tmp_path, cwd=tmp_path, offline=True)
    assert failed.returncode == 1 and "cannot download the price list" in failed.stderr, failed.stderr
    assert "data import" not in failed.stderr  # what the benchmarks' downloads suggest, no help for a price list
    saved = tmp_path / "model_prices_and_context_window.json"
    saved.write_text(json.dumps({
        "gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 2.5e-06,
                   "output_cost_per_token": 1e-05},
        "claude-haiku-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 1e-06,
                             "output_cost_per_token": 5e-06}}))
    [command] = hints(failed.stderr)
    path = next(arg for arg in command if "PATH" in arg)
    done = tripbench(*filled(command, **{path: saved.as_uri()}), home=tmp_path, cwd=tmp_path, offline=True)
    assert done.returncode == 0 and "2 models priced" in done.stdout, done.stderr
    shown = tripbench("prices", "show", "gpt-4o", home=tmp_path, cwd=tmp_path)
    assert "openai:gpt-4o: 2.5 / " in shown.stdout and saved.as_uri() in shown.stdout
