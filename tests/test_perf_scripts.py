"""Every perf script starts the way the closing notes run it: `python perf/<script>.py` from the repository root.

The script's folder is then first on the import path, so no script may be named like one of our packages (a
`perf/runner.py` once shadowed `runner` and broke most of them on import). The sandbox, evaluator, report,
token-counting and CLI start-up scripts run at a smoke size and must print their figures; the figures themselves
are the full-size runs' business.
The gateway, engine and transport scripts need a minute at any useful size, so only their start is checked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.postgres_server import server_binaries
from tests.staged_data import require

REPO = Path(__file__).resolve().parents[1]


def perf(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, f"perf/{script}", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.parametrize("script, args, expected", [
    ("sandbox_flights.py", ["--size", "20000", "--lookups", "200", "--baseline-lookups", "2"],
     "FlightSearch over 20,000 rows, 200 random lookups:"),
    ("sandbox_tools.py", ["--size", "50", "--baseline-size", "3"], "goal p99 <= 1 ms per tool:"),
    ("traveleval_sandbox.py", ["--size", "200", "--baseline-size", "3"], "goal p99 <= 1 ms per lookup:"),
    ("traveleval_offline.py", ["--size", "30"], "every made mistake moved its metric or the oracle already failed"),
    ("sandbox_import.py", ["--size", "20000", "--repeat", "1"], "import: 20,000 flight rows"),
    ("fidelity_reference.py", ["--official-flight-order"],
     "45 train queries, 675 reference entries: 675 identical in text and rows (100.0%), 0 differ"),
    ("evaluate.py", ["--size", "50", "--baseline-size", "3"], "goal <= 5 ms/plan:"),
    ("report_render.py", ["--size", "50", "--repeat", "1"], "x the raw read (goal: a few seconds)"),
    ("token_counting.py", ["--queries", "2", "--steps", "5"], "counted 3x per call; counts identical"),
    ("cli_startup.py", ["--repeat", "1"], "python -c pass (baseline):"),
    ("cache_size.py", ["--data", "../shared/data/travelplanner", "--limit", "2"], "of before (goal <= 15 %)"),
    ("batch_runs.py", ["--direct", "12", "--two-stage", "2", "--delay", "0.05", "--flush", "0.05"],
     "most submissions of one request 1;"),
])
def test_perf_script_runs_at_a_smoke_size(travelplanner_data: Path, script: str, args: list[str],
                                          expected: str) -> None:
    done = perf(script, *args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert expected in done.stdout, done.stdout


@pytest.mark.parametrize("script", ["gateway.py", "gateway_limits.py", "mock_server.py", "engine_throughput.py",
                                    "transports.py", "local_concurrency.py", "team_backend.py"])
def test_perf_script_starts(script: str) -> None:
    done = perf(script, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script}")


def test_no_perf_script_shadows_a_package() -> None:
    packages = {path.parent.name for path in REPO.glob("*/__init__.py")}
    assert packages and not packages & {path.stem for path in (REPO / "perf").glob("*.py")}


def test_the_shards_script_runs_at_a_smoke_size() -> None:
    if server_binaries() is None:
        require("PostgreSQL's server programs (initdb, pg_ctl)", "apt-get install postgresql")
    done = perf("shards.py", "--size", "9", "--shards", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 shard processes" in done.stdout and "merged shards equal to the one process's run: True" in done.stdout
