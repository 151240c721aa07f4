"""`offline:oracle` on the staged data fails where the data allows no passing answer, and the run and the report say
why (issue 31): TravelPlanner queries whose legs the partial flights table and the distance table cannot serve, or
whose required cuisine no visited city has; TravelEval budgets below the cheapest allowed legs and rooms."""

from __future__ import annotations

from pathlib import Path

from tests.benchmarks.traveleval.conftest import TRAVELEVAL_DATA
from tests.runner.engine_support import run_cli
from tests.staged_data import require

SPEC = """benchmark = "{benchmark}"
split = "{split}"
strategies = ["{strategy}"]
{select}

[[models]]
model = "offline:oracle"
"""


def run_oracle(folder: Path, home: Path, **fields: str) -> tuple[str, str]:
    """The oracle's run of `fields`: the end-of-run output, and its report.md."""
    spec = folder / "oracle.toml"
    spec.write_text(SPEC.format(**fields))
    done = run_cli("run", str(spec), "--quiet", home=home, cwd=folder)
    assert done.returncode == 0, done.stderr
    reported = run_cli("report", str(folder / "runs" / "oracle"), home=home, cwd=folder)
    assert reported.returncode == 0, reported.stderr
    return done.stdout, (folder / "runs" / "oracle" / "report" / "report.md").read_text()


def why_of(report: str) -> dict[str, str]:
    """Task -> why, from the report's table of the oracle's failures."""
    section = report.split("### Where offline:oracle failed", 1)[1].split("\n_", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| offline:oracle")]
    return {cells[2]: cells[3].rstrip(" |") for cells in rows}  # model | strategy | task | why


def test_travelplanner_oracle_failures_name_what_the_staged_data_lacks(travelplanner_data: Path,
                                                                        tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("data", "import", str(travelplanner_data), home=home).returncode == 0
    # 1 passes; 32 has a leg with no flight in the partial table and no road in the distance table; 121 asks for a
    # cuisine no visited city serves (task numbers of the staged validation split)
    output, report = run_oracle(tmp_path, home, benchmark="travelplanner", split="validation", strategy="direct",
                                select='tasks = ["1", "32", "121"]')
    why = why_of(report)
    assert set(why) == {"32", "121"}
    assert why["32"] == "the sandbox has no flight, taxi or self-driving route from Omaha to Seattle (day 1)"
    assert why["121"] == "the sandbox has no American restaurant in the cities visited"
    assert "offline:oracle: 2 rollouts failed, 2 of them where the data allows no passing answer" in output
    assert "not an evaluator error" in report



def test_travelplanner_oracle_plans_as_the_evaluator_counts_and_says_what_the_request_leaves_out(
        travelplanner_data: Path, tmp_path: Path) -> None:
    """Validation tasks the oracle once failed with no reason given: 150's cheapest 'Cafe Coffee Day' in Dallas is the
    second row of that name (the evaluator charges the first, $76, putting the plan $25 over budget); 175's cheapest
    room in Belleville has a line break in its name, shown escaped, so no plan can name it; 124's request never says
    two people travel, and the evaluator charges for two. React halts at its official token limit on task 31."""
    home = tmp_path / "home"
    assert run_cli("data", "import", str(travelplanner_data), home=home).returncode == 0
    _, report = run_oracle(tmp_path, home, benchmark="travelplanner", split="validation", strategy="direct",
                           select='tasks = ["124", "150", "175"]')
    assert why_of(report) == {"124": "the request does not say 2 people travel, which the evaluator charges for (the "
                                     "oracle, reading the request, plans for 1)"}
    (tmp_path / "react").mkdir()
    _, report = run_oracle(tmp_path / "react", home, benchmark="travelplanner", split="validation", strategy="react",
                           select='tasks = ["31"]')
    assert why_of(report) == {"31": "the strategy's official prompt token limit was reached before an answer (the "
                                    "prompt carries this query's data, and the oracle's reasoning adds to it)"}

def test_traveleval_oracle_failures_name_the_impossible_budget(tmp_path: Path) -> None:
    if not TRAVELEVAL_DATA.is_dir():
        require(f"the staged data at {TRAVELEVAL_DATA}", "clone the project beside ../shared")
    home = tmp_path / "home"
    assert run_cli("data", "import", str(TRAVELEVAL_DATA), home=home).returncode == 0
    output, report = run_oracle(tmp_path, home, benchmark="traveleval", split="hard", strategy="direct",
                                select='tasks = ["T0601", "T0602", "T0604"]')
    why = why_of(report)
    assert set(why) == {"T0601", "T0602"}  # T0604's plan passes all seven
    assert why["T0602"] == ("the budget (2,800) is below what the cheapest allowed legs and rooms alone cost (4,164): "
                            "no plan keeping the other constraints meets it")
    assert why["T0601"].startswith("the oracle's plan (legs, rooms, meals, visits) costs ")
    assert "offline:oracle: 2 rollouts failed, 2 of them where the data allows no passing answer" in output
