"""`tripbench run --dry-run` shows the settings the official code picks by model, with no key and nothing sent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_dry_run_shows_the_two_stage_settings_of_each_model(travelplanner_data: Path, travelplanner_index: Path,
                                                               tmp_path: Path) -> None:
    spec = tmp_path / "presets.toml"
    spec.write_text(f"""benchmark = "travelplanner"
split = "train"
limit = 2
strategies = ["two-stage"]
cache_dir = "cache"

[options]
data_dir = "{travelplanner_data}"
index = "{travelplanner_index}"

[[models]]
model = "openai:gpt-3.5-turbo"

[[models]]
model = "openai:gpt-4o"

[[models]]
name = "hot"
model = "openai:gpt-3.5-turbo"
temperature = 0.7
""", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", "run", str(spec),
                           "--dry-run"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("settings: ")]
    assert lines == [
        "settings: openai:gpt-3.5-turbo · two-stage: temperature 1, prompt limit 15,000 tokens (official by model), "
        "max_tokens 256, stop at a newline",
        "settings: openai:gpt-4o · two-stage: temperature 0, prompt limit 30,000 tokens (official by model), "
        "max_tokens 256, stop at a newline",
        "settings: hot · two-stage: temperature 1, prompt limit 15,000 tokens (official by model), max_tokens 256, "
        "stop at a newline (the spec sets temperature 0.7, which wins)",
    ]
