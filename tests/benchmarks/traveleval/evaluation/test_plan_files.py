"""Plans made elsewhere, through the real CLI: the official generator's `plans_<model>_<strategy>.json` (an indented
JSON array) scored exactly as the same plans in JSONL, the official per-plan CSV rows, a file of which nothing
scores (exit 1 with the reason), and `import-plans` making a run that `report` reports, with the same numbers, its
plans scored a batch at a time as in one pass."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.registry import get_benchmark
from benchmarks.traveleval import dataset
from benchmarks.traveleval.offline.mistakes import NoisyConfig, noisy_plan
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from runner.engine import execute
from runner.engine.imported import import_plans
from runner.engine.spec import parse_options
from runner.store.results import load_run
from tests.runner.engine_support import run_cli

SIZE = 200
"""Plans in the official-format file: every fifth query of `all` (easy, medium and hard)."""


@pytest.fixture(scope="module")
def noisy_plans(data_dir: Path, traveleval_sandbox: Sandbox) -> list[dict[str, Any]]:
    """The noisy offline model's plans (half of them with a mistake) for SIZE staged queries."""
    tasks = dataset.load_tasks(data_dir, dataset.ALL)[::5][:SIZE]
    config = NoisyConfig(seed=3, rate=0.5)
    plans = [noisy_plan(traveleval_sandbox, task.input, config)[0] for task in tasks]
    return [plan for plan in plans if plan is not None]


@pytest.fixture(scope="module")
def both_formats(noisy_plans: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The plans as the official generator writes them (json.dump, indent 2, Chinese unescaped) and as JSONL."""
    folder = tmp_path_factory.mktemp("plans")
    official = folder / "plans_noisy-3_Direct Prompting.json"
    official.write_text(json.dumps(noisy_plans, ensure_ascii=False, indent=2), encoding="utf-8")
    lines = folder / "plans.jsonl"
    lines.write_text("".join(json.dumps(plan, ensure_ascii=False) + "\n" for plan in noisy_plans), encoding="utf-8")
    return official, lines


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _evaluate(path: Path, data_dir: Path, *flags: str) -> list[dict[str, Any]]:
    done = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--json", "--data-dir", str(data_dir),
                   "--distance", "offline", *flags)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_official_array_scores_as_the_same_plans_in_jsonl(both_formats: tuple[Path, Path], data_dir: Path,
                                                               noisy_plans: list[dict[str, Any]],
                                                               tmp_path: Path) -> None:
    official, lines = both_formats
    csv_dir = tmp_path / "rows"
    from_array = _evaluate(official, data_dir, "--official-csv", str(csv_dir))
    from_lines = _evaluate(lines, data_dir, "--official-csv", str(csv_dir))
    assert len(noisy_plans) == len(from_array) >= 190
    assert [r["metrics"] for r in from_array] == [r["metrics"] for r in from_lines]
    assert all("metrics" in r for r in from_array)
    assert {(r["file"], r["model"], r["strategy"]) for r in from_array} == {(str(official), "noisy-3", "direct")}
    assert "model" not in from_lines[0]
    # the noisy model's mistakes show: the plans differ in what they score
    assert len({r["metrics"]["constraint"]["budget_satisfaction"] for r in from_array}) == 2

    rows = {name: _rows(csv_dir / f"{name}.csv") for name in (official.stem, lines.stem)}
    assert rows[official.stem] == rows["plans"]
    header = list(rows["plans"][0])
    assert header[:3] == ["query_id", "status", "detailed_metrics_accuracy_cost_deviation_rate"]
    assert header[-1] == "error"
    accuracy = [name for name in header if name.startswith("detailed_metrics_accuracy_")]
    assert accuracy == sorted(accuracy) and len(accuracy) == 6  # the official writer sorts a dimension's columns
    assert "detailed_metrics_economy_cost_distribution_meals" in header
    first = rows["plans"][0]
    assert first["query_id"] == from_lines[0]["query_uid"] and first["status"] == "success"
    assert float(first["detailed_metrics_utility_ads"]) == from_lines[0]["metrics"]["utility"]["ads"]
    assert first["detailed_metrics_space_RP"] == "0.0"  # official mode without distances: the official value


def test_the_distance_summary_of_the_daily_routes(both_formats: tuple[Path, Path], data_dir: Path) -> None:
    _, lines = both_formats
    done = run_cli("evaluate", str(lines), "--benchmark", "traveleval", "--json", "--data-dir", str(data_dir),
                   "--distance", "offline", "--distance-summary")
    assert done.returncode == 0, done.stderr
    *results, last = [json.loads(line) for line in done.stdout.splitlines()]
    summary = last["distance_summary"]
    assert last["file"] == str(lines) and last["distance"] == "offline"
    assert summary["plans"] == len(results)
    # no Gaode cache staged: every leg is the offline estimate, which is what official RP = 0.0 hides
    assert summary["measured_legs"] == 0 and summary["estimated_legs"] == summary["legs"] > len(results)
    assert 0 < summary["located_stops"] <= summary["stops"]
    per_leg, per_day = summary["km_per_leg"], summary["km_per_day"]
    assert 0 < per_leg["median"] <= per_leg["p90"] <= per_leg["max"] <= per_day["max"]
    assert per_day["mean"] > per_leg["mean"]
    table = run_cli("evaluate", str(lines), "--benchmark", "traveleval", "--data-dir", str(data_dir),
                    "--distance", "offline", "--distance-summary")
    assert f"{summary['legs']} estimated (haversine x 1.3)" in " ".join(table.stdout.split())


def test_a_file_of_which_nothing_scores_is_an_error_with_the_reason(data_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "plans_gpt-4o_Zero-shot CoT.json"
    elsewhere.write_text(json.dumps([{"query_uid": f"TP{n}", "itinerary": {}} for n in range(3)] + [[1]], indent=2),
                         encoding="utf-8")
    done = run_cli("evaluate", str(elsewhere), "--benchmark", "traveleval", "--data-dir", str(data_dir))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (f"{elsewhere}: 0 of 4 plans scored: 3 x no TravelEval query with that uid (are these TravelEval "
            "plans?); 1 x expected a FinalTravelPlan object, got list") in done.stderr
    assert "0 of 4 plans scored" in done.stdout  # the table is still printed
    cut = tmp_path / "plans_gpt-4o_Direct Prompting.json"
    cut.write_text(elsewhere.read_text(encoding="utf-8")[:-40], encoding="utf-8")  # an array cut short
    done = run_cli("evaluate", str(cut), "--benchmark", "traveleval", "--data-dir", str(data_dir))
    assert done.returncode == 1 and not done.stdout and "Traceback" not in done.stderr
    assert f"{cut}: not a valid JSON array of plans: " in done.stderr


def test_import_plans_makes_a_run_that_reports(both_formats: tuple[Path, Path], data_dir: Path,
                                               tmp_path: Path) -> None:
    official, _ = both_formats
    run_dir = tmp_path / "imported"
    done = run_cli("import-plans", str(official), "--benchmark", "traveleval", "--run-dir", str(run_dir),
                   "--mode", "official", "--mode", "no-queue", "--option", f"data_dir={data_dir}",
                   "--option", "distance=offline")
    assert done.returncode == 0, done.stderr
    assert "noisy-3 / direct:" in done.stdout and "split all, 1000 queries" in done.stdout
    expected = {r["query_uid"]: r["metrics"] for r in _evaluate(official, data_dir)}
    no_queue = {r["query_uid"]: r["metrics"] for r in _evaluate(official, data_dir, "--mode", "no-queue")}
    with load_run(run_dir) as results:
        assert {(r.key.model, r.key.strategy, r.status) for r in results.rollouts} == {("noisy-3", "direct",
                                                                                       "delivered")}
        stored = results.evaluations("official")
        assert {r.key.task: stored[r.id].details["metrics"] for r in results.rollouts} == expected
        queueless = results.evaluations("no-queue")
        assert {r.key.task: queueless[r.id].details["metrics"] for r in results.rollouts} == no_queue
    # without the queue model only the time dimension and the visit-time verdict can move, and some do
    changed = {(dimension, key) for uid, metrics in expected.items() for dimension, values in metrics.items()
               for key, value in values.items() if no_queue[uid][dimension][key] != value}
    assert changed and changed <= {("time", "average_tour_ratio"), ("time", "daily_time_utilization"),
                                   ("time", "overall_time_utilization"), ("constraint", "travel_time_satisfaction")}
    report = run_cli("report", str(run_dir))
    assert report.returncode == 0, report.stderr
    markdown = (run_dir / "report" / "report.md").read_text(encoding="utf-8")
    assert "noisy-3" in markdown and "direct" in markdown
    again = run_cli("import-plans", str(official), "--benchmark", "traveleval", "--run-dir", str(run_dir),
                    "--option", f"data_dir={data_dir}", "--option", "distance=amap")
    assert again.returncode == 2 and "holds a run of other settings" in again.stderr


def test_import_pairs_the_react_and_reflexion_file_and_reads_failed_answers(data_dir: Path,
                                                                             noisy_plans: list[dict[str, Any]],
                                                                             tmp_path: Path) -> None:
    first, second = noisy_plans[:2]
    # ReAct&Reflexion: a query's ReAct plan, then its revised plan; the second query's critique call failed
    paired = tmp_path / "plans_m_ReAct&Reflexion.json"
    paired.write_text(json.dumps([first, second, first], ensure_ascii=False, indent=2), encoding="utf-8")
    failed = tmp_path / "fail_plans_m_ReAct&Reflexion.json"
    failed.write_text(json.dumps([{"_raw_response": {"query_uid": second["query_uid"]}, "_error": "1 validation "
                                   "error for FinalTravelPlan"}, {"_raw_response": None, "_error": "no JSON"}]),
                      encoding="utf-8")
    lines = tmp_path / "mine.jsonl"
    lines.write_text(json.dumps(first, ensure_ascii=False) + "\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    refused = run_cli("import-plans", str(lines), "--benchmark", "traveleval", "--run-dir", str(run_dir),
                      "--option", f"data_dir={data_dir}")
    assert refused.returncode == 2 and "give --model and --strategy" in refused.stderr
    progressive = {**first, "query_uid": "G01-1"}
    lines.write_text(json.dumps(progressive, ensure_ascii=False) + "\n" + json.dumps(first, ensure_ascii=False),
                     encoding="utf-8")
    both = run_cli("import-plans", str(lines), "--model", "m", "--strategy", "cot", "--benchmark", "traveleval",
                   "--run-dir", str(tmp_path / "both"), "--option", f"data_dir={data_dir}",
                   "--option", "distance=offline")
    assert both.returncode == 0, both.stderr  # queries of `all` and of `progressive`: the pooled split `full`
    with load_run(tmp_path / "both") as results:
        assert results.spec.split == "full"
        assert {r.key.task for r in results.rollouts} == {"G01-1", first["query_uid"]}
    done = run_cli("import-plans", str(failed), str(paired), str(lines), "--strategy", "cot", "--model", "m",
                   "--benchmark", "traveleval", "--run-dir", str(run_dir), "--option", f"data_dir={data_dir}",
                   "--option", "distance=offline", "--split", "all")
    assert done.returncode == 0, done.stderr
    assert "m / cot: 5 answers" in done.stdout  # --strategy names them all: a repeated query is the next sample
    assert "skipped: G01-1 (m / cot): not a query of split all" in done.stderr
    done = run_cli("import-plans", str(failed), str(paired), "--benchmark", "traveleval", "--run-dir",
                   str(tmp_path / "paired"), "--option", f"data_dir={data_dir}", "--option", "distance=offline")
    assert done.returncode == 0, done.stderr
    assert f"{failed}[1]: the generator could not use this answer: no JSON (it names no query)" in done.stderr
    with load_run(tmp_path / "paired") as results:
        found = {(r.key.task, r.key.strategy, r.key.sample, r.status) for r in results.rollouts}
    assert found == {(first["query_uid"], "react", 0, "delivered"), (first["query_uid"], "reflexion", 0, "delivered"),
                     (second["query_uid"], "react", 0, "delivered"),
                     (second["query_uid"], "reflexion", 0, "parse_failure")}


def test_evaluate_recognises_an_official_array_without_benchmark(both_formats: tuple[Path, Path], data_dir: Path,
                                                                  tmp_path: Path) -> None:
    official, lines = both_formats
    renamed = tmp_path / "mine.json"  # not the official name: recognised by its content
    renamed.write_bytes(official.read_bytes())
    expected = [r["metrics"] for r in _evaluate(lines, data_dir)]
    for path in (official, renamed):
        done = run_cli("evaluate", str(path), "--json", "--data-dir", str(data_dir), "--distance", "offline")
        assert done.returncode == 0, done.stderr
        assert [json.loads(line)["metrics"] for line in done.stdout.splitlines()] == expected


def test_the_papers_react_and_reflexion_files_are_recognised_by_name(data_dir: Path, noisy_plans: list[dict[str, Any]],
                                                                     tmp_path: Path) -> None:
    """`plans_<model>_ReAct.json` and `plans_<model>_Reflexion.json` (the paper's runs) need no --model or
    --strategy: one strategy each, not the paired ReAct&Reflexion file."""
    files = []
    for indent, written in enumerate(("ReAct", "Reflexion"), 1):  # the same plans, not the same file (refused)
        path = tmp_path / f"plans_gpt-4o_{written}.json"
        path.write_text(json.dumps(noisy_plans[:2], ensure_ascii=False, indent=indent), encoding="utf-8")
        files.append(str(path))
    done = run_cli("import-plans", *files, "--benchmark", "traveleval", "--run-dir", str(tmp_path / "run"),
                   "--option", f"data_dir={data_dir}", "--option", "distance=offline")
    assert done.returncode == 0, done.stderr
    with load_run(tmp_path / "run") as results:
        found = {(r.key.model, r.key.strategy, r.key.task) for r in results.rollouts}
    assert found == {("gpt-4o", strategy, plan["query_uid"]) for strategy in ("react", "reflexion")
                     for plan in noisy_plans[:2]}
    scored = run_cli("evaluate", files[0], "--json", "--data-dir", str(data_dir), "--distance", "offline")
    assert {(r["model"], r["strategy"]) for r in map(json.loads, scored.stdout.splitlines())} == {("gpt-4o", "react")}


def test_import_scores_a_batch_at_a_time_exactly_as_in_one_pass(both_formats: tuple[Path, Path], data_dir: Path,
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`evaluate_stored` scores and saves the stored plans a batch at a time through one evaluator: the evaluations
    it stores are those of the whole run scored in one call (the way before batches), in both modes."""
    official, _ = both_formats
    monkeypatch.setattr(execute, "EVALUATE_BATCH", 7)  # 190-odd plans: some 28 batches, the last one short
    benchmark = get_benchmark("traveleval")
    options = {"data_dir": str(data_dir), "distance": "offline"}
    modes = ["official", "corrected"]
    report = asyncio.run(import_plans(benchmark, [official], tmp_path / "run", options=options, modes=modes))
    assert report.stored > 7 * 20
    with load_run(tmp_path / "run") as results:
        rollouts = results.rollouts
        tasks = {task.id: task for task in results.tasks()}
        for mode in modes:
            stored = results.evaluations(mode)
            whole = benchmark.evaluate([tasks[r.key.task] for r in rollouts], [results.result(r) for r in rollouts],
                                       mode, parse_options(benchmark.options_model, options, "test"))
            assert len(stored) == len(rollouts)
            for rollout, evaluation in zip(rollouts, whole, strict=True):
                assert evaluation is not None
                assert stored[rollout.id].verdicts == evaluation.verdicts
                assert stored[rollout.id].details == json.loads(json.dumps(evaluation.details, ensure_ascii=False))
