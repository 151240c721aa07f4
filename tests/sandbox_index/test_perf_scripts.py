"""The sandbox and evaluator perf scripts run at a smoke size, the way the closing notes run them.

They are started as `python perf/<script>.py` from the repository root, so the script's folder is first on
the import path: `perf/runner.py` would then shadow the `runner` package unless each script drops its folder
(it once broke all of these on import). Only that they run and print their figures is checked here; the
figures themselves are the full-size runs' business.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script, args, expected", [
    ("sandbox_flights.py", ["--size", "20000", "--lookups", "200", "--baseline-lookups", "2"],
     "FlightSearch over 20,000 rows, 200 random lookups:"),
    ("sandbox_tools.py", ["--size", "50", "--baseline-size", "3"], "goal p99 <= 1 ms per tool:"),
    ("sandbox_import.py", ["--size", "20000", "--repeat", "1"], "import: 20,000 flight rows"),
    ("fidelity_reference.py", ["--official-flight-order"],
     "45 train queries, 675 reference entries: 675 identical in text and rows (100.0%), 0 differ"),
    ("evaluate.py", ["--size", "50", "--baseline-size", "3"], "goal <= 5 ms/plan:"),
])
def test_perf_script_runs_from_the_repository_root(
        travelplanner_data: Path, script: str, args: list[str], expected: str) -> None:
    done = subprocess.run([sys.executable, f"perf/{script}", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert expected in done.stdout, done.stdout
