"""`tripbench run --model M --strategies a,b --split S` without a spec file, as inspect_ai / lm-eval users type it.

The spec those flags make must be the run they made: every flag that shapes it is in the written file, that file
resumes the same folder, a folder is never shared by two different runs, and nothing is written before the checks.
"""

from __future__ import annotations

import fcntl
import io
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from rich.console import Console

from runner.store.results import load_run
from runner.store.summary import render_summary


def tripbench(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={"PATH": "/usr/bin:/bin", "TRIPBENCH_HOME": str(home)})


@pytest.fixture
def home(natural_plan_data: Path, tmp_path: Path) -> Path:
    """A data home holding Natural Plan's staged files."""
    home = tmp_path / "home"
    assert tripbench("data", "import", str(natural_plan_data), cwd=tmp_path, home=home).returncode == 0
    return home


FLAGS = ("run", "--benchmark", "natural-plan", "--strategies", "direct", "--split", "calendar", "--quiet")


def test_flags_make_a_spec_that_is_written_printed_and_resumable(home: Path, tmp_path: Path) -> None:
    first = tripbench(*FLAGS, "--model", "offline:oracle", "--model", "offline:noisy", "--limit", "7",
                      "--max-cost", "1", "--samples", "2", "--option", "shots=0", cwd=tmp_path, home=home)
    assert first.returncode == 0, first.stderr  # offline models are free: a cap needs no price for them
    spec_file = tmp_path / "runs" / "natural-plan-calendar" / "spec.toml"
    spec = tomllib.loads(spec_file.read_text())
    assert spec == {"benchmark": "natural-plan", "split": "calendar", "strategies": ["direct"], "limit": 7,
                    "samples": 2, "max_cost": 1.0, "options": {"shots": 0},
                    "models": [{"model": "offline:oracle"}, {"model": "offline:noisy"}]}
    assert f"# runs/natural-plan-calendar/spec.toml\n{spec_file.read_text()}" in first.stderr
    assert first.stdout.count("14/14") == 2  # 7 tasks x 2 samples for each model
    planned = tripbench("run", str(spec_file), "--dry-run", cwd=tmp_path, home=home)
    assert planned.returncode == 0, planned.stderr
    assert "at most $1.00" in planned.stdout and planned.stdout.count(" 0 ") >= 2  # nothing left to run, capped
    again = tripbench("run", str(spec_file), cwd=tmp_path, home=home)  # the spec in a run dir resumes that run
    assert again.returncode == 0, again.stderr
    assert "completed · 2 session(s)" in again.stdout and again.stdout.count("14/14") == 2
    assert not (spec_file.parent / "runs").exists()


def test_another_run_on_the_same_split_is_refused_with_both_ways_on(home: Path, tmp_path: Path) -> None:
    assert tripbench(*FLAGS, "--model", "offline:oracle", "--limit", "2", cwd=tmp_path, home=home).returncode == 0
    spec_file = tmp_path / "runs" / "natural-plan-calendar" / "spec.toml"
    written = spec_file.read_text()
    other = tripbench(*FLAGS, "--model", "offline:noisy", "--limit", "2", cwd=tmp_path, home=home)
    assert other.returncode == 2, other.stderr
    assert "holds another run" in other.stderr and "tripbench run runs/natural-plan-calendar/spec.toml" in other.stderr
    assert "--run-dir" in other.stderr and "Traceback" not in other.stderr
    assert spec_file.read_text() == written
    typo = tripbench(*FLAGS, "--model", "ofline:noisy", "--limit", "2", cwd=tmp_path, home=home)
    assert typo.returncode == 2 and "unknown provider 'ofline'" in typo.stderr, typo.stderr  # the typo, first
    elsewhere = tripbench(*FLAGS, "--model", "offline:noisy", "--limit", "2", "--run-dir", "runs/noisy", cwd=tmp_path,
                          home=home)
    assert elsewhere.returncode == 0, elsewhere.stderr
    more = tripbench(*FLAGS, "--model", "offline:oracle", "--limit", "3", cwd=tmp_path, home=home)  # a higher limit
    assert more.returncode == 2 and "--extend" in more.stderr, more.stderr  # more tasks: growing is said explicitly
    more = tripbench(*FLAGS, "--model", "offline:oracle", "--limit", "3", "--extend", cwd=tmp_path, home=home)
    assert more.returncode == 0, more.stderr
    assert tomllib.loads(spec_file.read_text())["limit"] == 3 and "3/3" in more.stdout


def test_checks_come_before_writes(home: Path, tmp_path: Path) -> None:
    for flags, message in ((("--split", "calendr"), "the command-line flags: split: expected one of trip, "),
                           (("--strategies", "cot"), "the command-line flags: strategies[0]"),
                           (("--model", "offline:oracel"), "oracel")):
        done = tripbench("run", "--benchmark", "natural-plan", "--model", "offline:oracle", "--strategies", "direct",
                         "--split", "calendar", *flags, cwd=tmp_path, home=home)
        assert done.returncode == 2 and message in done.stderr, (flags, done.stderr)
        assert "Traceback" not in done.stderr
        assert not (tmp_path / "runs").exists(), flags
    dry = tripbench(*FLAGS, "--model", "offline:oracle", "--dry-run", cwd=tmp_path, home=home)
    assert dry.returncode == 0 and "a dry run writes nothing" in dry.stderr
    assert not (tmp_path / "runs").exists()


def test_a_run_dir_another_process_holds_keeps_its_spec(home: Path, tmp_path: Path) -> None:
    assert tripbench(*FLAGS, "--model", "offline:oracle", "--limit", "2", cwd=tmp_path, home=home).returncode == 0
    run_dir = tmp_path / "runs" / "natural-plan-calendar"
    written = (run_dir / "spec.toml").read_text()
    fd = os.open(run_dir / "results.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        refused = tripbench(*FLAGS, "--model", "offline:oracle", "--limit", "5", cwd=tmp_path, home=home)
    finally:
        os.close(fd)
    assert refused.returncode == 1 and "another tripbench process" in refused.stderr, refused.stderr
    assert (run_dir / "spec.toml").read_text() == written


def test_missing_flags_and_mixing_with_a_spec_are_usage_errors(tmp_path: Path) -> None:
    done = tripbench("run", "--model", "offline:oracle", "--split", "train", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 2 and "without a SPEC file, --strategies must be given" in done.stderr
    spec = tmp_path / "s.toml"
    spec.write_text('benchmark = "travelplanner"\nsplit = "train"\nstrategies = ["direct"]\n')
    for flag in (("--model", "offline:oracle"), ("--samples", "2"), ("--option", "shots=0")):
        done = tripbench("run", str(spec), *flag, cwd=tmp_path, home=tmp_path)
        assert done.returncode == 2 and "describe a run without a SPEC file" in done.stderr


def test_a_dry_run_expects_one_call_of_a_single_call_strategy(home: Path, tmp_path: Path) -> None:
    spec = tmp_path / "paid.toml"
    spec.write_text('benchmark = "natural-plan"\nsplit = "calendar"\nstrategies = ["direct"]\nlimit = 5\n'
                    'max_calls = 200\n\n[[models]]\nmodel = "openai:gpt-4o-mini"\n')  # a dry run needs no key
    done = tripbench("run", str(spec), "--dry-run", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("openai:gpt-4o-mini"))
    assert [cell.strip() for cell in row.split("│")[1:4]] == ["5", "0", "5"]  # 5 rollouts, 5 new calls, not 50
    assert "assuming 1 calls per rollout, from the strategy's own count" in " ".join(done.stdout.split())


def test_a_path_option_is_read_from_where_it_was_typed(natural_plan_data: Path, tmp_path: Path) -> None:
    (tmp_path / "np").symlink_to(natural_plan_data)
    done = tripbench(*FLAGS, "--model", "offline:oracle", "--limit", "2", "--option", "data_dir=np", cwd=tmp_path,
                     home=tmp_path / "empty-home")
    assert done.returncode == 0, done.stderr
    spec = tomllib.loads((tmp_path / "runs" / "natural-plan-calendar" / "spec.toml").read_text())
    assert spec["options"] == {"data_dir": str(tmp_path / "np")}
    bad = tripbench(*FLAGS, "--model", "offline:oracle", "--option", "shots=3", "--run-dir", "other", cwd=tmp_path,
                    home=tmp_path)
    assert bad.returncode == 2 and "--option: options.shots: expected one of 0, 5, got 3" in bad.stderr, bad.stderr


def test_at_80_columns_the_summary_is_lines_not_a_wrapped_table(home: Path, tmp_path: Path) -> None:
    assert tripbench(*FLAGS, "--model", "offline:noisy", "--limit", "6", cwd=tmp_path, home=home).returncode == 0
    output = io.StringIO()
    with load_run(tmp_path / "runs" / "natural-plan-calendar") as results:
        render_summary(results, Console(file=output, width=80, color_system=None))
    lines = output.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines[1:]), lines  # the first names the run directory, unbroken
    assert lines[1].startswith("spent $0.0000") and lines[2] == "offline:noisy · direct: 6/6 done, 6 delivered"
    assert "│" not in output.getvalue()
