"""`batch = "planner"` on TravelPlanner: `tripbench run --dry-run` states the one batch round a rollout waits for and
the Planner's share of the tokens (`strategies.PLANNER_SHARE` for two-stage, every token for direct), with no key
and nothing sent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(("strategy", "share"), [("two-stage", "9%"), ("direct", "100%")])
def test_the_dry_run_states_one_round_and_the_planners_share(travelplanner_data: Path, travelplanner_index: Path,
                                                            tmp_path: Path, strategy: str, share: str) -> None:
    spec = tmp_path / "night.toml"
    spec.write_text(f"""benchmark = "travelplanner"
split = "train"
limit = 2
strategies = ["{strategy}"]
cache_dir = "cache"
batch = "planner"

[options]
data_dir = "{travelplanner_data}"
index = "{travelplanner_index}"

[[models]]
model = "openai:gpt-4o-mini"
""", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", "run", str(spec),
                           "--dry-run"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (f"batch: openai:gpt-4o-mini: about 1 batch rounds one after the other (1 per rollout), {share} of its new "
            "tokens at the batch price; the rounds take about 31 min") in " ".join(done.stdout.split())
