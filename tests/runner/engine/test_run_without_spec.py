"""`tripbench run --model M --strategies a,b --split S` without a spec file, as inspect_ai / lm-eval users type it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path


def tripbench(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={"PATH": "/usr/bin:/bin", "TRIPBENCH_HOME": str(home)})


def test_flags_make_a_spec_that_is_written_printed_and_resumable(natural_plan_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert tripbench("data", "import", str(natural_plan_data), cwd=tmp_path, home=home).returncode == 0
    flags = ["run", "--benchmark", "natural-plan", "--model", "offline:oracle", "--model", "offline:noisy",
             "--strategies", "direct", "--split", "calendar", "--limit", "7", "--quiet"]
    first = tripbench(*flags, cwd=tmp_path, home=home)
    assert first.returncode == 0, first.stderr
    spec_file = tmp_path / "runs" / "natural-plan-calendar" / "spec.toml"
    spec = tomllib.loads(spec_file.read_text())
    assert spec == {"benchmark": "natural-plan", "split": "calendar", "strategies": ["direct"],
                    "models": [{"model": "offline:oracle"}, {"model": "offline:noisy"}]}
    assert f"# runs/natural-plan-calendar/spec.toml\n{spec_file.read_text()}" in first.stderr
    assert first.stdout.count("7/7") == 2  # 7 tasks for each model
    again = tripbench("run", str(spec_file), "--run-dir", str(spec_file.parent), "--limit", "7", cwd=tmp_path,
                      home=home)
    assert again.returncode == 0, again.stderr
    assert "completed · 2 session(s)" in again.stdout and again.stdout.count("7/7") == 2  # resumed, nothing to add


def test_missing_flags_and_mixing_with_a_spec_are_usage_errors(tmp_path: Path) -> None:
    done = tripbench("run", "--model", "offline:oracle", "--split", "train", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 2 and "without a SPEC file, --strategies must be given" in done.stderr
    spec = tmp_path / "s.toml"
    spec.write_text('benchmark = "travelplanner"\nsplit = "train"\nstrategies = ["direct"]\n')
    done = tripbench("run", str(spec), "--model", "offline:oracle", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 2 and "describe a run without a SPEC file" in done.stderr
