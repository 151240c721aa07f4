"""The gateway and runner perf scripts start: `python perf/NAME.py` puts perf/ first on the import path, where
perf/runner.py would shadow the runner package (three of them once died on import that way)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PERF = Path(__file__).resolve().parents[2] / "perf"


@pytest.mark.parametrize("script", ["gateway.py", "gateway_limits.py", "mock_server.py", "runner.py"])
def test_perf_script_starts(script: str) -> None:
    done = subprocess.run([sys.executable, str(PERF / script), "--help"], check=False, capture_output=True, text=True,
                          timeout=120, cwd=PERF.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script}")
