"""TravelEval behind the plugin seam: the real CLI runs, scores and exports it, and the evaluations it stores are
the evaluator's own results."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchmarks.base import DELIVERED, RolloutResult
from benchmarks.registry import get_benchmark
from benchmarks.traveleval.agents.statuses import MAX_STEPS, PARSE_FAILURE
from benchmarks.traveleval.benchmark import TravelEvalBenchmark, TravelEvalOptions
from benchmarks.traveleval.evaluation import CONSTRAINT_METRICS
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from benchmarks.traveleval.tools import run_tool
from errors import DataError
from runner.store.results import load_run

from .conftest import fenced, plan


def tripbench(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", *args],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "TRIPBENCH_HOME": str(home)})


def test_list_shows_the_splits_modes_and_strategies(traveleval_home: Path) -> None:
    done = tripbench(traveleval_home, "list")
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("benchmark traveleval\n")[1].split("benchmark ")[0]
    assert ("  splits: easy, medium, hard, all, progressive, full\n  evaluator modes: official, corrected, no-queue\n"
            in section)
    lines = section.splitlines()[3:9]
    assert [line.split()[0] for line in lines] == ["direct", "cot", "react", "reflexion", "react-tools",
                                                   "reflexion-tools"]
    assert all("the paper's" in line for line in lines[:4]) and all("beyond the paper" in line for line in lines[4:])


def test_a_cli_run_stores_the_evaluators_results_and_the_plans_it_reads(traveleval_home: Path,
                                                                       tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = tripbench(traveleval_home, "run", "--benchmark", "traveleval", "--split", "easy", "--limit", "3",
                     "--model", "offline:oracle", "--strategies", "direct,react-tools", "--run-dir", str(run_dir),
                     "--quiet")
    assert done.returncode == 0, done.stderr
    with load_run(run_dir) as results:
        rollouts = results.rollouts
        stored = results.evaluations("official")
        react_steps = [results.steps(r.id) for r in rollouts if r.key.strategy == "react-tools"]
    assert sorted((r.key.strategy, r.key.task, r.status) for r in rollouts) == [
        (strategy, f"T000{n}", DELIVERED) for strategy in ("direct", "react-tools") for n in (1, 2, 3)]
    # react-tools looked something up in the sandbox before it finished
    assert all(steps[0]["action"] == "search_attractions" and steps[0]["error"] is None
               and steps[0]["observation"].split(" ")[1] == "attractions." for steps in react_steps)
    for strategy in ("direct", "react-tools"):
        submission = run_dir / "outputs" / "offline_oracle" / strategy / "submission.jsonl"
        scored = tripbench(traveleval_home, "evaluate", str(submission), "--benchmark", "traveleval", "--json")
        assert scored.returncode == 0, scored.stderr
        lines = [json.loads(line) for line in scored.stdout.splitlines()]
        assert {line.pop("file") for line in lines} == {str(submission)}  # the rest is what the run stored
        by_uid = {line["query_uid"]: line for line in lines}
        assert sorted(by_uid) == ["T0001", "T0002", "T0003"]
        for rollout in (r for r in rollouts if r.key.strategy == strategy):
            evaluation = stored[rollout.id]
            assert evaluation.details == by_uid[rollout.key.task]
            constraint = by_uid[rollout.key.task]["metrics"]["constraint"]
            assert [(v.group, v.constraint, v.passed) for v in evaluation.verdicts] == [
                ("constraint", key, constraint[key] == 1) for key in CONSTRAINT_METRICS]


def test_a_cli_run_of_the_papers_strategies_makes_the_official_calls_and_records_its_protocol(
        traveleval_home: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ("run", "--benchmark", "traveleval", "--split", "easy", "--limit", "3", "--model", "offline:oracle",
            "--strategies", "direct,cot,react,reflexion", "--run-dir", str(run_dir), "--quiet")
    done = tripbench(traveleval_home, *args)
    assert done.returncode == 0, done.stderr
    with load_run(run_dir) as results:
        calls = {(r.key.strategy, r.key.task): len(results.calls(r.id)) for r in results.rollouts}
        statuses = {r.status for r in results.rollouts}
        spec = results.spec
    assert statuses == {DELIVERED}
    assert calls == {(strategy, f"T000{n}"): 2 if strategy == "reflexion" else 1
                     for strategy in ("direct", "cot", "react", "reflexion") for n in (1, 2, 3)}
    assert {key: spec.options[key] for key in ("protocol", "language", "parsing", "sampling")} == {
        "protocol": "paper-2", "language": "zh", "parsing": "official", "sampling": "official"}
    # a run made before the paper's protocol (its stored spec has none of these options) is not resumed with it
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        (stored,) = db.execute("SELECT spec FROM session ORDER BY id DESC LIMIT 1").fetchone()
        old = json.loads(stored)
        old["options"] = {}
        db.execute("UPDATE session SET spec = ?", (json.dumps(old),))
    again = tripbench(traveleval_home, *args)
    assert again.returncode != 0 and "Traceback" not in again.stderr
    assert ("other settings for options.language, options.parsing, options.protocol, options.sampling"
            in again.stderr)
    assert 'options.protocol: unset then, "paper-2" now' in again.stderr and "did not have yet" in again.stderr


def test_a_rollout_without_a_plan_fails_every_constraint_with_the_reason(traveleval_home: Path) -> None:
    benchmark = get_benchmark("traveleval")
    options = TravelEvalOptions(data_dir=traveleval_home / "traveleval", distance="offline")
    tasks = benchmark.load_tasks("easy", options)[:3]
    results = [RolloutResult(PARSE_FAILURE, answer="no plan here", error="no JSON object in the answer"),
               RolloutResult(MAX_STEPS, error="no finish action in 30 steps"),
               RolloutResult(DELIVERED, answer=fenced(plan()), plan=plan())]
    assert vars(benchmark) == {}  # nothing kept from `load_tasks`
    # scored by an instance that loaded nothing: the options are all `evaluate` reads
    failed, halted, scored = TravelEvalBenchmark().evaluate(tasks, results, "corrected", options)
    assert failed is not None and halted is not None and scored is not None
    assert failed.details == {"query_uid": "T0001",
                              "error": "no plan (parse_failure: no JSON object in the answer)"}
    assert [(v.constraint, v.passed, v.message) for v in halted.verdicts] == [
        (key, False, "no plan (max_steps: no finish action in 30 steps)") for key in CONSTRAINT_METRICS]
    assert scored.details["mode"] == "corrected" and scored.details["distance"] == "offline"
    assert len(scored.verdicts) == 7 and all(v.message is None for v in scored.verdicts)
    with pytest.raises(DataError, match="unknown TravelEval evaluation mode 'strict'"):
        benchmark.evaluate(tasks, results, "strict", options)
    # only delivered plans are written to the plans file
    assert list(benchmark.submission(tasks, results)) == [results[2].plan]


def test_a_cli_run_standardizes_names_unless_told_not_to(traveleval_home: Path, tmp_path: Path) -> None:
    """The official pipeline always renames places before its evaluator: a run does by default, and its report says
    so; `standardize_names=false` scores the plans as written, and the report says that."""
    for option, names in (((), "standardized"), (("--option", "standardize_names=false"), "as written")):
        run_dir = tmp_path / names.replace(" ", "-")
        done = tripbench(traveleval_home, "run", "--benchmark", "traveleval", "--split", "easy", "--limit", "2",
                         "--model", "offline:oracle", "--strategies", "direct", *option, "--run-dir", str(run_dir),
                         "--quiet")
        assert done.returncode == 0, done.stderr
        with load_run(run_dir) as results:
            details = [evaluation.details for evaluation in results.evaluations("official").values()]
        assert len(details) == 2 and all(found["names"] == names for found in details)
        # the oracle's names are exact: nothing renamed
        assert all(found.get("renamed") == ({} if option == () else None) for found in details)
        report = tripbench(traveleval_home, "report", str(run_dir))
        assert report.returncode == 0, report.stderr
        markdown = (run_dir / "report" / "report.md").read_text(encoding="utf-8")
        assert f"Place names: {names} (2 plans)" in " ".join(markdown.split())


def test_a_run_may_standardize_names_before_scoring(traveleval_home: Path) -> None:
    benchmark = get_benchmark("traveleval")
    tasks = benchmark.load_tasks("easy", TravelEvalOptions(data_dir=traveleval_home / "traveleval"))[:1]
    written = plan()
    first = written["itinerary"]["daily_plans"][0]["activities"][0]
    first["location_name"] = f"参观{first['location_name']}"
    result = RolloutResult(DELIVERED, answer=fenced(written), plan=written)
    for standardize, renamed in ((False, None), (True, {first["location_name"]: first["location_name"][2:]})):
        options = TravelEvalOptions(data_dir=traveleval_home / "traveleval", distance="offline",
                                    standardize_names=standardize)
        [scored] = benchmark.evaluate(tasks, [result], "official", options)
        assert scored is not None and scored.details.get("renamed") == renamed
    assert first["location_name"].startswith("参观")  # the stored plan is left as the model wrote it


def test_options_are_checked(traveleval_home: Path) -> None:
    with pytest.raises(ValidationError, match="max_stepz"):
        TravelEvalOptions.model_validate({"max_stepz": 3})
    with pytest.raises(ValidationError, match="distance"):
        TravelEvalOptions.model_validate({"distance": "google"})
    strategies = TravelEvalBenchmark().strategies(TravelEvalOptions(max_steps=5, max_reflections=1, rule_seed=4))
    assert [s.name for s in strategies] == ["direct", "cot", "react", "reflexion", "react-tools", "reflexion-tools",
                                            "rule-based", "rule-based-strict"]
    assert [getattr(s, "seed", None) for s in strategies[6:]] == [4, 4]
    assert "retries (1 max)" in strategies[5].description
    with pytest.raises(ValidationError, match="parsing"):
        TravelEvalOptions.model_validate({"parsing": "generous"})
    with pytest.raises(ValidationError, match="protocol"):
        TravelEvalOptions.model_validate({"protocol": "paper-0"})


def test_the_tool_command_answers_as_the_agent_is_answered(traveleval_home: Path,
                                                           traveleval_sandbox: Sandbox) -> None:
    action = 'search_hotels {"city": "上海", "feature": "免费停车", "max_price": 400}'
    done = tripbench(traveleval_home, "tool", "--benchmark", "traveleval", action)
    assert done.returncode == 0, done.stderr
    expected = run_tool(traveleval_sandbox, "search_hotels", {"city": "上海", "feature": "免费停车", "max_price": 400})
    assert done.stdout == expected.observation + "\n"
    for bad, says in (('search_hotels {"city": "拉萨"}', "Unknown city '拉萨'"),
                      ("search_hotels[上海]", "not valid JSON"),
                      ('finish {"query_uid": "T0001"}', "`finish` ends a rollout")):
        done = tripbench(traveleval_home, "tool", "--benchmark", "traveleval", bad)
        # a call the tools refuse is a usage error, as for TravelPlanner's tool (README exit codes)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_show_prompt_prints_what_the_model_sees_for_one_query(traveleval_home: Path) -> None:
    query = json.loads((traveleval_home / "traveleval" / "data" / "queries" / "easy.json").read_text())["queries"][0]
    shown = {}
    for strategy, model in (("direct", "openai:gpt-4o"), ("reflexion", "anthropic:claude-sonnet-4-5")):
        done = tripbench(traveleval_home, "tool", "--benchmark", "traveleval", "--show-prompt", strategy,
                         query["uid"], "--model", model)
        assert done.returncode == 0, done.stderr
        shown[strategy] = done.stdout
    assert shown["direct"].startswith("direct on T0001: 1 call(s), answered by offline:oracle (delivered)")
    assert "=== call 1: temperature 1.3, max_tokens 8192 (for openai:gpt-4o) ===" in shown["direct"]
    assert f"--- user ---\n查询编号：T0001\n旅行者的请求：{query['nature_language']}\n" in shown["direct"]
    assert query["dates"] not in shown["direct"] and query["nature_language_en"] not in shown["direct"]
    assert shown["reflexion"].count("=== call") == 2 and "temperature 1.0" in shown["reflexion"]
    critique = shown["reflexion"].split("=== call 2")[1]  # one lone system message, as the official critique
    assert critique.count("--- system ---") == 1 and "--- user ---" not in critique
    for bad, says in ((("--show-prompt", "react", "T9999"), "no TravelEval query has uid 'T9999'"),
                      (("--show-prompt", "planner", "T0001"), "unknown TravelEval strategy 'planner'")):
        done = tripbench(traveleval_home, "tool", "--benchmark", "traveleval", *bad)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr
