"""The HTML report in a real headless Chromium: it renders, its tables sort, and hostile model output stays text."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image
import pytest

from reports import build_report, write_report
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.mock_server import MockConfig
from tests.reports.hostile_replies import PAYLOAD
from tests.reports.report_runs import write_spec


@pytest.fixture
async def hostile_report(start_mock_llm, travelplanner_data: Path, travelplanner_index: Path,
                         tmp_path: Path) -> Path:
    """A real run whose model answers every prompt with injection payloads, priced, reported to HTML."""
    server = await start_mock_llm(MockConfig(reply="tests.reports.hostile_replies:reply"))
    spec = write_spec(tmp_path, "hostile", queries="train", index=travelplanner_index, data_dir=travelplanner_data,
                      models=[("hostile", f"openai-compatible:evil@{server.openai_base_url}")],
                      strategies=["two-stage", "direct"], extra="limit = 2")
    with spec.open("a") as handle:
        handle.write("prices = { input = 0.15, output = 0.6 }\n")
    await execute(prepare(spec), tmp_path / "run", show_progress=False)
    return write_report(build_report([tmp_path / "run"]), tmp_path / "report")["html"]


def test_the_page_renders_sorts_and_keeps_model_output_inert(browser, hostile_report: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(hostile_report.as_uri())
    assert browser.title.startswith("tripbench report")
    heading = browser.find_element(By.TAG_NAME, "h1")
    assert heading.is_displayed() and heading.text.startswith("tripbench report")
    # plots are data URIs the Content-Security-Policy allows: they load
    images = browser.find_elements(By.TAG_NAME, "img")
    assert images and all(browser.execute_script("return arguments[0].naturalWidth", img) > 0 for img in images)

    assert len(browser.find_elements(By.TAG_NAME, "script")) == 1  # ours only
    report_url = browser.current_url

    # open a rollout's page from the index: the payload is on screen as text, and nothing of it ran
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    links = browser.find_elements(By.CSS_SELECTOR, "ul.index a")
    assert len(links) == 4  # two tasks, two strategies (direct, then two-stage, whose trajectory has the payload)
    links[-1].click()
    cells = [c for c in browser.find_elements(By.CSS_SELECTOR, "table.steps td") if PAYLOAD[:20] in c.text]
    assert cells and cells[0].is_displayed()
    assert PAYLOAD in cells[0].text
    assert browser.title == "run: hostile / two-stage · task 2"  # the <script> did not set it
    assert browser.execute_script("return document.body.dataset.pwned") is None  # the onerror did not fire
    assert browser.execute_script("return document.querySelectorAll('[onerror], [onmouseover]').length") == 0
    assert browser.find_elements(By.TAG_NAME, "script") == []
    browser.find_element(By.PARTIAL_LINK_TEXT, "tripbench report").click()  # back to the report
    assert browser.current_url.split("#")[0] == report_url

    # the cost table shows what the priced calls cost
    cost = browser.find_element(By.ID, "cost").find_element(By.XPATH,
                                                            "following-sibling::div[@class='scroll'][1]/table")
    assert "$0." in cost.text

    # clicking a numeric header sorts the rows by it, ascending then descending
    header = next(th for th in cost.find_elements(By.TAG_NAME, "th") if th.text == "input tokens")
    column = header.get_property("cellIndex")

    def values() -> list[float]:
        return [float(row.find_elements(By.TAG_NAME, "td")[column].get_attribute("data-sort"))
                for row in cost.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert len(set(values())) == 2
    header.click()
    assert values() == sorted(values())
    header.click()
    assert values() == sorted(values(), reverse=True)

    # a screenshot of what a person sees: a page, not a blank canvas
    browser.execute_script("window.scrollTo(0, 0)")
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot))
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[0] > 500 and (pixels[..., :3] < 0.5).mean() > 0.005  # dark text on a light page
