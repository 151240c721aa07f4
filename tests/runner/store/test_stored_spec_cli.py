"""The sampling a report says a run used comes from the stored spec's record (`runner.store.stored_spec`): a value
set in the spec's `[sampling]` table, which every model entry leaves to it, is named as the model's."""

from __future__ import annotations

from pathlib import Path

from benchmarks.traveleval.offline.world import generate_world
from tests.runner.engine_support import run_cli


def test_the_reports_sampling_note_names_the_sampling_tables_temperature(tmp_path: Path) -> None:
    world = generate_world(tmp_path / "world").folder
    spec = tmp_path / "run.toml"
    spec.write_text(f"""benchmark = "traveleval"
split = "full"
strategies = ["direct"]
limit = 2
options = {{ data_dir = "{world}" }}

[sampling]
temperature = 0.7

[[models]]
model = "offline:oracle"
max_tokens = 900
""")
    done = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet", home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    done = run_cli("report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    note = next(line for line in (tmp_path / "report" / "report.md").read_text().splitlines()
                if line.startswith("Sampling (run): "))
    assert note.startswith("Sampling (run): offline:oracle: temperature = 0.7 (spec), max\\_tokens = 900 (spec), "
                           "unset: ")
