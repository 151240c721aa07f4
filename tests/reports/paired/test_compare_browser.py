"""`compare.html` in the real headless Chromium (the `browser` fixture of tests/reports/conftest.py): the page loads
with its tables, a table sorts on a header's click, and a changed task's side-by-side page highlights the first call
whose request differs."""

from __future__ import annotations

import json
from pathlib import Path

from reports.paired.html import DIFFERS
from tests.runner.engine_support import run_cli


def test_compare_html_loads_sorts_and_highlights_the_first_differing_call(browser, toy_runs: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    out = tmp_path / "cmp"
    done = run_cli("compare", str(toy_runs["a"]), str(toy_runs["b"]), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    (regressed,) = json.loads(done.stdout)["regressed"]
    first = regressed["first_difference"]
    assert first is not None  # B's task 3 crashed after its first call: the pair parts at A's second

    browser.get((out / "compare.html").as_uri())
    assert browser.title.startswith("tripbench compare")
    assert browser.find_element(By.ID, "compare_binary").is_displayed()
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 1  # the report's sort script, nothing else

    # clicking a numeric header of the continuous metrics sorts its rows, ascending then descending
    table = browser.find_element(By.ID, "compare_continuous").find_element(
        By.XPATH, "following-sibling::div[@class='scroll'][1]/table")
    header = next(th for th in table.find_elements(By.TAG_NAME, "th") if th.text == "mean A")
    column = header.get_property("cellIndex")

    def values() -> list[float]:
        return [float(row.find_elements(By.TAG_NAME, "td")[column].get_attribute("data-sort"))
                for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert len(set(values())) > 2 and values() != sorted(values())
    header.click()
    assert values() == sorted(values())
    header.click()
    assert values() == sorted(values(), reverse=True)

    # the changed task's page: A and B side by side, the first differing call highlighted, the earlier ones the same
    browser.find_element(By.CSS_SELECTOR, "ul.index a").click()
    assert "regressed: task 3" in browser.title
    rows = browser.find_elements(By.CSS_SELECTOR, "table.steps")[0].find_elements(By.CSS_SELECTOR, "tbody tr")
    highlighted = [n for n, row in enumerate(rows) if "first-difference" in (row.get_attribute("class") or "")]
    assert highlighted == [first]
    row = rows[first]
    assert row.value_of_css_property("background-color") == "rgba(255, 235, 233, 1)"  # DIFFERS' #ffebe9
    assert "#ffebe9" in DIFFERS
    for earlier in rows[:first]:
        cells = [cell.text for cell in earlier.find_elements(By.TAG_NAME, "td")]
        assert cells[1] == cells[3] and cells[1] not in ("–", "not sent")  # the same request key in A and B
    cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    assert cells[0] == f"#{first}" and cells[1] != cells[3]
    browser.find_element(By.PARTIAL_LINK_TEXT, "the comparison").click()
    assert browser.current_url.endswith("compare.html#pairs")
