"""A user's mistake ends in one message and the README's exit code, never a traceback: every command's path
arguments (run dir, report folder, cache dir, data home, spec, queries) and every name a command or spec gives."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.runner.engine_support import run_cli

EXIT_FAILED, EXIT_USAGE = 1, 2
"""The README's exit codes: 1 failed (a path that cannot be made or written, a damaged file), 2 a usage or spec error
or an input that is not there."""

SPEC = """benchmark = "natural-plan"
{source}
strategies = ["{strategy}"]
limit = 2
{top}

[[models]]
model = "{model}"
"""


def spec(folder: Path, name: str, *, source: str = 'split = "calendar"', top: str = "",
         model: str = "offline:oracle", strategy: str = "direct") -> str:
    path = folder / f"{name}.toml"
    path.write_text(SPEC.format(source=source, top=top, model=model, strategy=strategy))
    return str(path)


@pytest.fixture(scope="module")
def world(natural_plan_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a data home holding Natural Plan, a finished run `run/`, a file `file` and a folder `taken`
    holding someone's file."""
    folder = tmp_path_factory.mktemp("world")
    assert run_cli("data", "import", str(natural_plan_data), home=folder / "home").returncode == 0
    done = run_cli("run", spec(folder, "ok"), "--run-dir", str(folder / "run"), "--quiet", home=folder / "home")
    assert done.returncode == 0, done.stderr
    (folder / "file").write_text("not a folder\n")
    (folder / "taken").mkdir()
    (folder / "taken" / "thesis.tex").write_text("years of work\n")
    return folder


def expect(done: subprocess.CompletedProcess[str], code: int, *named: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    message = done.stderr.strip()
    assert message.count("Error:") == 1, message
    for text in named:
        assert text in message, (text, message)


def test_bad_paths_name_the_path(world: Path) -> None:
    home, run, under_file = world / "home", str(world / "run"), str(world / "file" / "x")
    ok = spec(world, "ok")
    cases = [
        (("run", ok, "--run-dir", "/proc/tripbench-run", "--quiet"), EXIT_FAILED, "/proc/tripbench-run"),
        (("run", ok, "--run-dir", under_file, "--quiet"), EXIT_FAILED, under_file),
        (("run", "/proc/nothing.toml"), EXIT_USAGE, "/proc/nothing.toml"),
        (("run", str(world / "file")), EXIT_USAGE, str(world / "file")),
        (("run", spec(world, "cache", top='cache_dir = "/proc/tripbench-cache"'), "--quiet"), EXIT_FAILED,
         "/proc/tripbench-cache"),
        (("run", spec(world, "queries", source='queries = "missing.json"')), EXIT_USAGE,
         str(world / "missing.json")),
        (("run", spec(world, "data", top='[options]\ndata_dir = "elsewhere"')), EXIT_USAGE,
         str(world / "elsewhere")),  # relative to the spec's folder, printed resolved
        (("report", run, "--out", "/proc/tripbench-report"), EXIT_FAILED, "/proc/tripbench-report"),
        (("report", run, "--out", "/sys/tripbench-report"), EXIT_FAILED, "/sys/tripbench-report"),  # unwritable
        (("run", ok, "--run-dir", "/sys/tripbench-run", "--quiet"), EXIT_FAILED, "/sys/tripbench-run"),
        (("report", run, "--out", under_file), EXIT_FAILED, under_file),
        (("report", run, "--out", str(world / "taken")), EXIT_USAGE, str(world / "taken"), "not a report"),
        (("report", under_file), EXIT_USAGE, under_file),
        (("status", "/proc/tripbench-run"), EXIT_USAGE, "/proc/tripbench-run"),  # an input that is not there
        (("status", str(world / "file")), EXIT_USAGE, str(world / "file")),
        (("cache", "stats", "--cache-dir", "/proc/tripbench-cache"), EXIT_USAGE, "/proc/tripbench-cache"),
        (("cache", "verify", "--cache-dir", str(world / "file")), EXIT_USAGE, str(world / "file")),
        (("data", "import", str(home / "natural_plan"), "--home", "/proc/tripbench-home"), EXIT_FAILED,
         "/proc/tripbench-home"),
        (("data", "info", "--home", str(world / "file")), EXIT_USAGE, str(world / "file")),
        (("evaluate", "/proc/answers.jsonl"), EXIT_USAGE, "/proc/answers.jsonl"),
        (("check-submission", under_file), EXIT_USAGE, under_file),
        (("mock-server", "--config", "/proc/mock.toml"), EXIT_USAGE, "/proc/mock.toml"),
        (("demo", "--out", under_file), EXIT_FAILED, under_file),
        (("tool", "--index", "/proc/index.sqlite", "FlightSearch[A, B, 2022-03-01]"), EXIT_USAGE,
         "/proc/index.sqlite"),
    ]
    for args, code, *named in cases:
        expect(run_cli(*args, home=home, cwd=world), code, *named)
    assert (world / "taken" / "thesis.tex").read_text() == "years of work\n"  # a taken --out is never replaced


def test_usage_and_spec_errors_exit_2(world: Path) -> None:
    home, world = world / "home", world / "usage"
    world.mkdir()
    cases = [
        (("run", spec(world, "split", source='split = "calendr"')), "calendr"),
        (("run", "--benchmark", "natural-plann", "--model", "offline:oracle", "--strategies", "direct", "--split",
          "calendar"), "unknown benchmark 'natural-plann'"),
        (("run", spec(world, "provider", model="opneai:gpt-4o-mini")), "unknown provider 'opneai'"),
        (("run", spec(world, "offline", model="offline:oracel")), "oracel"),
        (("run", spec(world, "strategy", strategy="cot")), "strategies[0]"),
        (("run", spec(world, "key", top="limt = 3")), "did you mean limit?"),
    ]
    for args, named in cases:
        expect(run_cli(*args, home=home, cwd=world), EXIT_USAGE, named)
    assert not (world / "runs").exists()  # nothing was written for any of them


def test_evaluate_without_split_is_a_usage_error(travelplanner_index: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"idx": 1, "query": "3-day trip", "plan": []}\n')
    done = run_cli("evaluate", str(answers), "--index", str(travelplanner_index), home=tmp_path)
    expect(done, EXIT_USAGE, "pass --split or --queries")
