"""A newcomer's first hour, round three (issue 31), through the real CLI: a run that cannot start writes nothing,
failure reasons in sight, reports of several benchmarks, and the smaller things a first user trips over."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from runner.cli.console import LOG_WIDTH, output_console
from tests.benchmarks.traveleval.conftest import TRAVELEVAL_DATA
from tests.runner.engine_support import CLI, PROJECT_ROOT, run_cli
from tests.staged_data import require

SPEC = """benchmark = "{benchmark}"
split = "{split}"
strategies = ["direct"]
limit = 2
{top}

[[models]]
model = "{model}"
{model_fields}
"""


def spec(folder: Path, name: str, *, benchmark: str = "natural-plan", split: str = "calendar", top: str = "",
         model: str = "offline:oracle", model_fields: str = "") -> str:
    path = folder / f"{name}.toml"
    path.write_text(SPEC.format(benchmark=benchmark, split=split, top=top, model=model, model_fields=model_fields))
    return str(path)


@pytest.fixture(scope="module")
def home(natural_plan_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home holding Natural Plan and TravelEval."""
    if not TRAVELEVAL_DATA.is_dir():
        require(f"the staged data at {TRAVELEVAL_DATA}", "clone the project beside ../shared")
    folder = tmp_path_factory.mktemp("home")
    for data in (natural_plan_data, TRAVELEVAL_DATA):
        assert run_cli("data", "import", str(data), home=folder).returncode == 0
    return folder


def test_a_run_that_cannot_start_leaves_the_default_folder_free(home: Path, tmp_path: Path) -> None:
    flags = ("--benchmark", "natural-plan", "--split", "calendar", "--strategies", "direct", "--limit", "1")
    keyless = run_cli("run", "--model", "openai:gpt-4o-mini", *flags, home=home, cwd=tmp_path)
    assert keyless.returncode == 1 and "OPENAI_API_KEY" in keyless.stderr, keyless.stderr
    assert not (tmp_path / "runs").exists()
    other = run_cli("run", "--model", "offline:oracle", *flags, "--quiet", home=home, cwd=tmp_path)
    assert other.returncode == 0, other.stderr  # the folder was not taken by the run that never started
    assert (tmp_path / "runs" / "natural-plan-calendar" / "results.sqlite").is_file()


async def test_failure_reasons_are_in_the_summary_status_and_report(home: Path, tmp_path: Path,
                                                                    start_mock_llm) -> None:
    server = await start_mock_llm()
    server.plan.fail_next(500, times=10_000)  # every call a 500 (a server that is down is refused at start)
    model = f"openai-compatible:mock@{server.openai_base_url}"
    down = spec(tmp_path, "down", model=model, top="[retry]\nmax_attempts = 1",
                model_fields="prices = { input = 0.0, output = 0.0 }")
    run_dir = tmp_path / "runs" / "down"
    done = await asyncio.to_thread(run_cli, "run", down, "--quiet", home=home, cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    reason = "provider_error: "
    line = next(line for line in done.stdout.splitlines() if reason in line)
    assert line.startswith(f"  {model}: 2 × provider_error: ")
    assert "500" in line.split(reason, 1)[1]  # the provider's own message: what to fix
    status = run_cli("status", str(run_dir), home=home, cwd=tmp_path)
    assert line in status.stdout.splitlines()
    as_json = json.loads(run_cli("status", str(run_dir), "--json", home=home, cwd=tmp_path).stdout)
    [found] = as_json["failure_reasons"][model]
    assert found["count"] == 2 and found["reason"] == line.split(" × ", 1)[1]
    assert run_cli("report", str(run_dir), home=home, cwd=tmp_path).returncode == 0
    report = (run_dir / "report" / "report.md").read_text()
    assert "## Failure reasons" in report and "provider\\_error: " in report and " | 2 |" in report


def test_reports_of_traveleval_runs_name_the_benchmark_and_evaluate_finds_its_plans(home: Path,
                                                                                    tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    te = spec(tmp_path, "te", benchmark="traveleval", split="easy", top='evaluate = ["official"]')
    assert run_cli("run", te, "--quiet", home=home, cwd=tmp_path).returncode == 0
    assert run_cli("run", spec(tmp_path, "np"), "--quiet", home=home, cwd=tmp_path).returncode == 0
    # a mode the run did not store is an error, not empty tables
    corrected = run_cli("report", str(runs / "te"), "--mode", "corrected", home=home, cwd=tmp_path)
    assert corrected.returncode == 2 and "no `corrected` evaluation is stored, only official" in corrected.stderr
    # one report of both benchmarks: each benchmark's sections and tables say whose they are
    assert run_cli("report", str(runs / "te"), str(runs / "np"), "--out", str(tmp_path / "both"), home=home,
                   cwd=tmp_path).returncode == 0
    report = (tmp_path / "both" / "report.md").read_text()
    sections = [line for line in report.splitlines() if line.startswith("## ")]
    assert sections.count("## natural-plan: Errors") == 1 and not [s for s in sections if s.startswith("## Errors")]
    for part in report.split("\n## ")[1:]:
        title = part.split("\n", 1)[0].lower()
        for benchmark in ("natural-plan", "traveleval"):
            if title.startswith(benchmark):
                tables = [line for line in part.splitlines() if line.startswith("### ")]
                assert all(benchmark in table.lower() for table in tables), tables
    # a TravelEval plans file is recognised without --benchmark; a file nobody's answers is said so (exit 1)
    plans = runs / "te" / "outputs" / "offline_oracle" / "direct" / "submission.jsonl"
    scored = run_cli("evaluate", str(plans), home=home, cwd=tmp_path)
    assert scored.returncode == 0 and "budget_satisfaction" in scored.stdout, scored.stderr
    (tmp_path / "junk.jsonl").write_text('{"foo": 1}\n')
    junk = run_cli("evaluate", str(tmp_path / "junk.jsonl"), home=home, cwd=tmp_path)
    assert junk.returncode == 1 and "no benchmark recognises these answers" in junk.stderr
    # runs with no (model, strategy) in common: said, not an empty table
    compared = run_cli("report", str(runs / "np"), "--compare", str(runs / "te"), "--out", str(tmp_path / "cmp"),
                       home=home, cwd=tmp_path)
    assert compared.returncode == 0 and "has no (model, strategy, split) in common with np" in compared.stderr


def test_the_smaller_things(home: Path, tmp_path: Path) -> None:
    suggested = run_cli("prices", "show", "claude-sonet-4-5", home=home)
    assert suggested.returncode == 1 and "did you mean anthropic:claude-sonnet-4-5?" in suggested.stderr
    for data_home in (home, tmp_path / "empty"):
        info = run_cli("data", "info", home=data_home).stdout
        assert "None" not in info and "[]" not in info and "False" not in info and ": none" in info
    batch = run_cli("run", spec(tmp_path, "batch", top="batch = true"), "--dry-run", home=home, cwd=tmp_path)
    assert batch.returncode == 2 and "got true" in batch.stderr and "True" not in batch.stderr, batch.stderr
    listed = run_cli("list", home=home).stdout
    noisy = " ".join(listed.split("offline:noisy", 1)[1].split("priced models")[0].split())
    assert "target the tool agent (two-stage" in noisy
    oracle = " ".join(listed.split("offline:oracle", 1)[1].split("offline:noisy")[0].split())
    assert "all pass" not in oracle and "the run and report say so" in oracle


def test_check_submission_flags_a_plan_a_day_short(travelplanner_data: Path, tmp_path: Path) -> None:
    first = json.loads((travelplanner_data / "queries" / "validation.jsonl").read_text().splitlines()[0])
    (tmp_path / "one.jsonl").write_text(json.dumps(first) + "\n")
    day = {"current_city": "-", "transportation": "-", "breakfast": "-", "attraction": "-", "lunch": "-",
           "dinner": "-", "accommodation": "-"}

    def check(days: int) -> subprocess.CompletedProcess[str]:
        line = {"idx": 1, "query": first["query"], "plan": [{"days": n + 1, **day} for n in range(days)]}
        (tmp_path / "submission.jsonl").write_text(json.dumps(line) + "\n")
        return run_cli("check-submission", str(tmp_path / "submission.jsonl"), "--queries",
                       str(tmp_path / "one.jsonl"), home=tmp_path)

    short = check(first["days"] - 1)
    assert short.returncode == 1 and f"the plan has {first['days'] - 1} day(s), the query asks for {first['days']}" \
        in short.stdout, short.stdout
    assert check(first["days"]).returncode == 0


def test_the_demos_tables_are_whole_in_a_log(tmp_path: Path) -> None:
    """Under nohup or tee (stdout a pipe, no $COLUMNS) the headline tables keep every column unfolded."""
    env = {**{key: value for key, value in os.environ.items() if key != "COLUMNS"}, "PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run([*CLI, "demo", "--out", str(tmp_path / "demo")], capture_output=True, text=True,
                          check=False, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    te = [line for line in done.stdout.splitlines() if line.startswith("│ oracle ") and "│ all " in line]
    assert te and all(len(line.split("│")) == 17 for line in te)  # model ... all seven / rollouts: 15 cells, unfolded
    assert "traveleval: Compliance and delivery (% of scored plans; counts of rollouts)" in done.stdout


@pytest.mark.parametrize(("columns", "width"), [("80", LOG_WIDTH), ("300", 300), ("wide", LOG_WIDTH)])
def test_a_log_is_never_folded_narrower_than_the_log_width(monkeypatch, columns: str, width: int) -> None:
    """CI runners export COLUMNS=80: off a terminal only a wider $COLUMNS changes the width (the outage test's
    'run again in this session' line was folded in CI)."""
    monkeypatch.setenv("COLUMNS", columns)
    assert output_console().width == width
