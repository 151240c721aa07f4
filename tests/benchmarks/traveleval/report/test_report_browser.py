"""A TravelEval report made by the real CLI (a run of the offline models with two samples over the `full` split of a
generated world, then `tripbench report`), read in a real headless Chromium: the paper's views are there, every plot
loads, unmeasured metrics say so, look-alike tables switch, and a rollout's page lists its metric values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.traveleval.offline.world import generate_world
from tests.reports.conftest import browser  # noqa: F401 (the fixture)


def tripbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", *args],
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("te-browser")
    world = generate_world(folder / "world").folder
    done = tripbench("run", "--benchmark", "traveleval", "--split", "full", "--model", "offline:oracle",
                     "--model", "offline:noisy", "--strategies", "direct,cot", "--samples", "2",
                     "--option", f"data_dir={world}", "--run-dir", str(folder / "run"), "--quiet")
    assert done.returncode == 0, done.stderr
    done = tripbench("report", str(folder / "run"), "--out", str(folder / "report"))
    assert done.returncode == 0, done.stderr
    return folder / "report" / "report.html"


def test_the_paper_views_in_a_browser(browser: Any, report_page: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(report_page.as_uri())
    sections = [h2.text for h2 in browser.find_elements(By.TAG_NAME, "h2")]
    for title in ("TravelEval: six dimensions", "The paper's tiers", "Progressive steps", "Budget",
                  "Cost composition", "Correlations between metrics", "Queries no plan can satisfy",
                  "The paper's Table 2, Figure B1, Table A3 and Table B3(b)"):
        assert title in sections
    images = browser.find_elements(By.TAG_NAME, "img")
    alts = [image.get_attribute("alt") for image in images]
    assert "Correlations between metrics (Pearson's r)" in alts and "What the money goes on" in alts
    assert any(alt.startswith("Six dimensions, Easy tier") for alt in alts)
    assert len([alt for alt in alts if alt.startswith("Strategies on the Hard tier")]) == 2  # Figure B1, per model
    assert all(browser.execute_script("return arguments[0].naturalWidth", image) > 0 for image in images)

    space = browser.find_element(By.ID, "te_space").find_element(By.XPATH, "following-sibling::div[1]/table")
    assert "not measured" in space.text and "SSR route penalty" in space.text
    compliance = browser.find_element(By.ID, "te_constraint").find_element(By.XPATH, "following-sibling::div[1]")
    assert all(label in compliance.text for label in ("#0", "#1", "mean", "sd", "95% CI ±"))

    # Table 4, one per agent (4 here), collapsed into one view with a selector
    selector = Select(browser.find_element(By.CSS_SELECTOR, "select.views"))
    assert [option.text for option in selector.options][:2] == [
        "Every metric by paper tier (Table 4 / B4): offline:oracle / cot",
        "Every metric by paper tier (Table 4 / B4): offline:oracle / direct"]
    views = browser.find_elements(By.CSS_SELECTOR, "div.views > div.view")
    assert views[0].is_displayed() and not views[1].is_displayed()
    selector.select_by_index(1)
    assert views[1].is_displayed() and not views[0].is_displayed()

    # a rollout's page lists its metrics, the unmeasured ones said
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    browser.find_elements(By.CSS_SELECTOR, "ul.index a")[0].click()
    heading = browser.find_element(By.XPATH, "//h3[text()='Metrics']")
    metrics = heading.find_element(By.XPATH, "following-sibling::div[1]/table").text
    assert "FAR fictitious (accuracy.fictitious_attraction_rate)" in metrics
    assert "SSR route penalty (space.RP) not measured" in metrics
