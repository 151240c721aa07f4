"""Real runs to report on: the engine, the offline models and greedy over the staged train split."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_runs import run, write_spec


@pytest.fixture(scope="session")
def train_runs(travelplanner_data: Path, travelplanner_index: Path,
               tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two finished runs on the 45 train queries: `agents` (offline oracle and noisy, two-stage) and `greedy`."""
    folder = tmp_path_factory.mktemp("train-runs")
    agents = write_spec(folder, "agents", queries="train", models=[("oracle", "offline:oracle"),
                                                                     ("noisy", "offline:noisy")],
                        strategies=["two-stage"], index=travelplanner_index, data_dir=travelplanner_data)
    greedy = write_spec(folder, "greedy", queries="train", models=[("no-llm", "offline:oracle")],
                        strategies=["greedy"], index=travelplanner_index, data_dir=travelplanner_data)
    return {"agents": run(agents, folder / "runs" / "agents"), "greedy": run(greedy, folder / "runs" / "greedy")}
