"""Real runs to report on (the engine, the offline models and greedy over the staged train split), and a browser."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.reports.report_runs import run, write_spec
from tests.staged_data import require


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


CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture
def browser():  # type: ignore[no-untyped-def]
    if not (CHROMIUM and DRIVER):
        require("chromium and chromedriver", "apt-get install chromium chromium-driver (.ci/run does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1800"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
