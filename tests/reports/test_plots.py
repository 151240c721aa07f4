"""Plots draw on their own Agg canvas: PNGs without a display, whatever backend the user has chosen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from reports import plots
assert "matplotlib" not in sys.modules, "imported with the module"
plot = plots.money("cost", "Cost", [("m", 1.0, 2.0)])
assert plot is not None and plot.png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
import matplotlib
print("matplotlib.pyplot" in sys.modules, matplotlib.get_backend())
"""


def test_plots_draw_headless_without_touching_the_users_backend() -> None:
    # a GUI backend that cannot start here: drawing must not go through it, nor switch it to Agg
    env = {**os.environ, "MPLBACKEND": "TkAgg", "DISPLAY": ""}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "TkAgg"]


TIED = """
import hashlib
from reports import plots
counts = {name: 3 for name in ("delivered", "provider_error", "step_limit", "no_plan", "bad_format", "budget")}
plot = plots.stacked_shares("outcomes", "How rollouts ended", [("model a", counts), ("model b", dict(counts))])
print(hashlib.sha256(plot.png).hexdigest())
"""


def test_categories_with_equal_counts_draw_the_same_bytes_under_any_hash_seed() -> None:
    # string hashing is salted per process: an order left to a set would change the legend between two reports
    digests = {subprocess.run([sys.executable, "-c", TIED], cwd=REPO, env={**os.environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, timeout=60, check=True).stdout for seed in "123"}
    assert len(digests) == 1


def test_long_model_labels_are_shortened_apart_keeping_both_ends() -> None:
    from reports.plots import LABEL_CHARS, _shorts

    servers = [f"openai-compatible:llama-3.1-8b-instruct@http://gpu-node-{n}.lab.example.org:8000/v1 / two-stage"
               for n in (17, 18)]
    assert _shorts(servers) == [f"llama-3.1-8b-instruct@gpu-node-{n}.lab.example.org:8000 / two-stage"
                                for n in (17, 18)]  # cut in the middle they would be alike: whole, less the noise
    (alone,) = _shorts(servers[:1])
    assert len(alone) == LABEL_CHARS and alone.startswith("llama-3.1-8b") and alone.endswith(":8000 / two-stage")
    assert _shorts(["openai:gpt-4o-mini"]) == ["openai:gpt-4o-mini"]
