"""`tripbench demo` end to end, as a user runs it first: no data, no key, a fresh folder."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from runner.cli.main import cli
from runner.store.results import load_run


def _table(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("│")]


def test_demo_runs_everything_offline_and_replays_from_its_cache(tmp_path: Path):
    out = tmp_path / "demo"
    runner = CliRunner()
    first = runner.invoke(cli, ["demo", "--out", str(out)], env={"COLUMNS": "300"})
    assert first.exit_code == 0, first.output
    rows, np_rows, te_rows = _table(first.output)[:4], _table(first.output)[4:13], _table(first.output)[13:]
    assert [row.split("│")[1:3] for row in rows] == [
        [" oracle                 ", " two-stage "], [" noisy                  ", " two-stage "],
        [" oracle-via-mock-server ", " two-stage "], [" no-llm                 ", " greedy    "]]
    oracle, noisy, via_mock, greedy = ([cell.strip() for cell in row.split("│")[4:10]] for row in rows)  # N first
    assert oracle == via_mock == ["100.0"] * 6  # the oracle passes every query of the world, over HTTP too
    # delivers all, passes none (docs/fidelity/travelplanner.md §8)
    assert greedy[0] == "100.0" and greedy[2] == greedy[5] == "0.0"
    assert float(noisy[0]) < 100
    assert "offline:noisy: 9/9 rollouts ended with the status of the fault injected into them" in first.output
    assert (out / "worlds" / "travelplanner" / "database" / "flights" / "clean_Flights_2022.csv").is_file()
    # Natural Plan in the same demo and report: model, task, N, solved, accuracy per row
    np_cells = [[cell.strip() for cell in row.split("│")[1:6]] for row in np_rows]
    assert [(model, task) for model, task, *_ in np_cells] == [
        (model, task) for model in ("oracle", "noisy", "oracle-via-mock-server") for task in ("trip", "meeting",
                                                                                             "calendar")]
    assert all(cells[2:] == ["6", "6", "100.0"] for cells in np_cells if cells[0] != "noisy")
    assert all(float(cells[4]) < 100 for cells in np_cells if cells[0] == "noisy")
    assert ("offline:noisy: 18/18 Natural Plan answers scored as built: the mistake put into them, or solved"
            in first.output)
    assert (out / "report" / "csv" / "np_accuracy.csv").is_file()
    page = (out / "report" / "report.html").read_text()
    # the four Table 4s (one per model and strategy) are one view with a selector; every table scrolls in its box;
    # in a report of several benchmarks each table is titled with its benchmark's name
    assert ('4 tables alike, one shown: <select class="views"><option value="0">travelplanner: Constraint pass '
            "rates, oracle / two-stage") in page
    assert page.count("<table") == page.count('<div class="scroll"><table')
    specs = sorted(out.glob("*.toml"))  # the closing summary lists the specs the demo wrote, as examples
    assert len(specs) >= 3 and all(f"    {spec}\n" in first.output for spec in specs)
    # TravelEval in the same demo: model, strategy, split, N, plans scored, delivery, the seven constraint rates, all
    # seven together (over the scored plans, then over the rollouts)
    te_cells = [[cell.strip() for cell in row.split("│")[1:16]] for row in te_rows]
    assert [cells[:4] for cells in te_cells] == [
        [model, strategy, "all", "9"] for model in ("oracle", "noisy", "oracle-via-mock-server")
        for strategy in ("direct", "react")] + [["oracle", "direct", "progressive", "3"],
                                                ["noisy", "direct", "progressive", "3"]]
    assert all(cells[4] == cells[3] and cells[5:] == ["100.0"] * 10 for cells in te_cells if cells[0] != "noisy")
    assert all(float(cells[13]) < 100 for cells in te_cells if cells[0] == "noisy")
    assert ("offline:noisy: 18/18 TravelEval plans scored as built: each mistake moved its metric and only it, or "
            "none moved" in first.output.replace("\n", " "))
    assert (out / "report" / "plots" / "te_radar_1.png").is_file()  # a radar chart per model
    with load_run(out / "runs" / "offline-models") as results:
        assert len(results.rollouts) == 27 and not any(r.cache_hits for r in results.rollouts)
    # the report of both runs: its Table 3 is the one printed, and the priced mock-server model has a cost
    assert f"report: {out / 'report' / 'report.html'}" in first.output.replace("\n", "")
    lines = (out / "report" / "csv" / "pass_rates.csv").read_text().splitlines()[1:]
    assert [f"{float(line.split(',')[-1]):.1f}" for line in lines] == [row[5] for row in (oracle, noisy, via_mock,
                                                                                          greedy)]
    with (out / "report" / "csv" / "cost.csv").open(newline="") as handle:
        cost = {row["model"]: float(row["spent"]) for row in csv.DictReader(handle)}
    assert cost["oracle-via-mock-server"] > 0 and cost["oracle"] == 0

    again = runner.invoke(cli, ["demo", "--out", str(out)], env={"COLUMNS": "300"})
    assert again.exit_code == 0, again.output
    assert _table(again.output) == rows + np_rows + te_rows
    # the second demo ran every rollout again, and every LLM call came from the cache: nothing spent, $ saved
    with load_run(out / "runs" / "offline-models") as results:
        assert len(results.rollouts) == 27 and all(r.cache_hits == r.calls > 0 for r in results.rollouts)
        assert results.spent_usd == 0
    with load_run(out / "runs" / "natural-plan") as results:
        assert len(results.rollouts) == 54 and all(r.cache_hits == r.calls == 1 for r in results.rollouts)
    with (out / "report" / "csv" / "cost.csv").open(newline="") as handle:
        saved = {row["model"]: float(row["saved by cache"]) for row in csv.DictReader(handle)}
    assert saved["oracle-via-mock-server"] == cost["oracle-via-mock-server"]
