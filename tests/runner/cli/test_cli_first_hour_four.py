"""A newcomer's first hour, round four (issue 44), through the real CLI: agent failures told apart from provider
errors, a down server caught at start, resuming by folder, and the smaller things a first user trips over."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from tests.benchmarks.traveleval.conftest import TRAVELEVAL_DATA
from tests.runner.engine_support import CLI, PROJECT_ROOT, run_cli
from tests.staged_data import require


def travelplanner_spec(folder: Path, data: Path, index: Path, *, name: str = "tp", model: str = "offline:noisy",
                       limit: int = 12, strategy: str = "two-stage") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'benchmark = "travelplanner"\nsplit = "validation"\nstrategies = ["{strategy}"]\nlimit = {limit}\n'
                    f'[options]\ndata_dir = "{data}"\nindex = "{index}"\n[[models]]\nmodel = "{model}"\n')
    return path


def test_agent_failures_are_told_apart_from_provider_errors(travelplanner_data: Path, travelplanner_index: Path,
                                                            tmp_path: Path) -> None:
    spec = travelplanner_spec(tmp_path, travelplanner_data, travelplanner_index)
    done = run_cli("run", str(spec), "--progress-every", "0.05", home=tmp_path / "home", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if " rollouts · " in line]
    assert lines and all(re.search(r" · \d+ agent failures · 0 provider errors · ", line) for line in lines), lines
    assert " errors ·" not in done.stdout.replace("provider errors ·", "")  # no lumped "errors" count left
    summary = next(line for line in done.stdout.splitlines() if line.startswith("not delivered: "))
    failed = int(summary.split()[2])
    assert failed > 0 and summary == f"not delivered: {failed} agent failures · 0 provider errors"
    status = json.loads(run_cli("status", "runs/tp", "--json", home=tmp_path / "home", cwd=tmp_path).stdout)
    assert status["failures"] == {"agent failures": failed}


def test_a_named_server_that_is_down_is_caught_at_start(natural_plan_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    flags = ("--benchmark", "natural-plan", "--split", "calendar", "--strategies", "direct", "--limit", "2")
    started = time.monotonic()
    down = run_cli("run", "--model", "openai-compatible:mock@http://127.0.0.1:1/v1", *flags, home=home, cwd=tmp_path)
    assert time.monotonic() - started < 15  # one request, not 13 s of retries then "completed"
    assert down.returncode == 1, down.stdout + down.stderr
    assert "the server at http://127.0.0.1:1/v1 does not answer" in down.stderr and "Traceback" not in down.stderr
    assert not (tmp_path / "runs").exists()  # nothing written: the folder stays free for the fixed command


def test_a_run_folder_is_a_spec_and_keeps_a_copy_of_its_own(travelplanner_data: Path, travelplanner_index: Path,
                                                           tmp_path: Path) -> None:
    spec = travelplanner_spec(tmp_path, travelplanner_data, travelplanner_index, limit=3, strategy="direct")
    run_dir = tmp_path / "runs" / "tp"
    assert run_cli("run", str(spec), "--quiet", home=tmp_path / "home", cwd=tmp_path).returncode == 0
    copy = (run_dir / "spec.toml").read_text()
    assert copy == f"# tripbench: a copy of {spec.resolve()}\n{spec.read_text()}"
    for moved in (False, True):  # the original beside it, then gone (the folder moved to another machine)
        if moved:
            spec.rename(tmp_path / "elsewhere.toml")
        again = run_cli("run", "runs/tp", "--quiet", home=tmp_path / "home", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert re.search(r"direct\s*│\s*3/3\s", again.stdout) and not (run_dir / "runs").exists(), again.stdout
    (tmp_path / "plain").mkdir()
    refused = run_cli("run", "plain", home=tmp_path / "home", cwd=tmp_path)
    assert refused.returncode == 2 and "plain is a folder without a spec.toml" in refused.stderr, refused.stderr


def test_a_misspelt_price_suggests_the_provider_tripbench_runs(tmp_path: Path) -> None:
    for typo, meant in (("gpt-4o-mni", "openai:gpt-4o-mini"), ("claude-sonet-4-5", "anthropic:claude-sonnet-4-5")):
        shown = run_cli("prices", "show", typo, home=tmp_path)
        assert shown.returncode == 1 and f"did you mean {meant}?" in shown.stderr, shown.stderr


def test_a_rerun_and_a_replay_say_what_happened_in_words(travelplanner_data: Path, travelplanner_index: Path,
                                                         tmp_path: Path) -> None:
    spec = travelplanner_spec(tmp_path, travelplanner_data, travelplanner_index, limit=3, strategy="direct")
    first = run_cli("run", str(spec), "--quiet", home=tmp_path / "home", cwd=tmp_path)
    assert first.returncode == 0 and "nothing to do" not in first.stdout and "from the cache" not in first.stdout
    again = run_cli("run", str(spec), "--quiet", home=tmp_path / "home", cwd=tmp_path)
    assert again.returncode == 0 and "nothing to do: all 3 rollouts of this run were done already" in again.stdout
    replay = run_cli("run", str(spec), "--quiet", "--run-dir", "replay", home=tmp_path / "home", cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert re.search(r"every call came from the cache \(\d+ calls, \$0 spent in this session\)", replay.stdout)


def test_exit_codes_agree_across_ways_of_saying_the_same(travelplanner_data: Path, travelplanner_index: Path,
                                                         tmp_path: Path) -> None:
    # a settings conflict is a usage error (exit 2) through a spec as through flags
    spec = travelplanner_spec(tmp_path, travelplanner_data, travelplanner_index, limit=1, strategy="direct")
    assert run_cli("run", str(spec), "--quiet", home=tmp_path / "home", cwd=tmp_path).returncode == 0
    spec.write_text(spec.read_text().replace("[options]\n", "[options]\nmax_steps = 3\n"))
    changed = run_cli("run", str(spec), "--quiet", home=tmp_path / "home", cwd=tmp_path)
    assert changed.returncode == 2 and "other settings for options.max_steps" in changed.stderr, changed.stderr

    # a fail_plans_ file holds no plans by definition: its failed answers are counted, not an error
    if not TRAVELEVAL_DATA.is_dir():
        require(f"the staged data at {TRAVELEVAL_DATA}", "clone the project beside ../shared")
    assert run_cli("data", "import", str(TRAVELEVAL_DATA), home=tmp_path / "home").returncode == 0
    failed = tmp_path / "fail_plans_m_direct.json"
    failed.write_text(json.dumps([{"_raw_response": None, "_error": "no JSON"},
                                  {"_raw_response": {"query_uid": "x"}, "_error": "1 validation error"}]))
    scored = run_cli("evaluate", str(failed), home=tmp_path / "home")
    assert scored.returncode == 0, scored.stderr
    assert "0 of 2 plans scored" in scored.stdout and "the generator could not use this answer" in scored.stdout

    # the mock server stops on Ctrl-C as it says, without click's "Aborted!"
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    server = subprocess.Popen([*CLI, "mock-server", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
    assert server.stdout is not None and "mock LLM server on" in server.stdout.readline()
    server.send_signal(signal.SIGINT)
    out, err = server.communicate(timeout=30)
    assert server.returncode == 130 and "Aborted" not in out + err and "mock LLM server stopped" in err, out + err


def test_commands_agree_with_their_help_and_name_what_was_meant(tmp_path: Path) -> None:
    for args, choose in ((("data", "fetch", "natural-plan", "--help"), "tripbench data fetch NAME ...: the command "
                          "of another benchmark"),
                         (("data", "import", "--help"), "tripbench data import NAME DIR ...: the command of another"),
                         (("tool", "--help"), "tripbench tool --benchmark NAME ...: the command of another")):
        shown = run_cli(*args, home=tmp_path)
        assert shown.returncode == 0 and choose in shown.stdout, shown.stdout + shown.stderr
        assert "fetch natural-plan --benchmark" not in shown.stdout  # `data fetch` has no --benchmark
    misspelt = run_cli("data", "fetch", "travelplaner", home=tmp_path)
    assert misspelt.returncode == 2 and "did you mean travelplanner?" in misspelt.stderr, misspelt.stderr
    assert "natural-plan, traveleval, travelplanner" in misspelt.stderr and "unexpected extra" not in misspelt.stderr
    typo = run_cli("runn", home=tmp_path)
    assert typo.returncode == 2 and "No such command 'runn'; did you mean 'run'?" in typo.stderr, typo.stderr


def test_check_submission_recognises_a_traveleval_file(tmp_path: Path) -> None:
    submission = tmp_path / "submission.jsonl"  # a TravelEval run's submission: FinalTravelPlan objects
    submission.write_text(json.dumps({"query_uid": "E01-1", "itinerary": {"summary": {}, "days": []}}) + "\n")
    checked = run_cli("check-submission", str(submission), home=tmp_path)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert "benchmark traveleval has no `check-submission` command" in checked.stderr
    assert "tripbench evaluate --benchmark traveleval" in checked.stderr and "problem" not in checked.stdout


def test_reports_read_right(travelplanner_data: Path, travelplanner_index: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    spec = travelplanner_spec(tmp_path, travelplanner_data, travelplanner_index, name="o", model="offline:oracle",
                              limit=40, strategy='direct", "cot')
    assert run_cli("run", str(spec), "--quiet", home=home, cwd=tmp_path).returncode == 0
    fewer = run_cli("run", str(spec), "--quiet", "--limit", "3", home=home, cwd=tmp_path)  # a later, smaller session
    assert re.search(r"direct\s*│\s*40/40\s", fewer.stdout), fewer.stdout  # its own count: never "40/3"
    assert run_cli("report", "runs/o", home=home, cwd=tmp_path).returncode == 0
    report = (tmp_path / "runs" / "o" / "report" / "report.md").read_text()
    assert "| model | strategy | task | why |" in report  # a task failing under both strategies is told apart
    assert "No tool-agent (two-stage) rollouts: no tool calls to count." in report and "|  |  |" not in report
    assert "cache hits %" in report and "\\`" not in report
    (tmp_path / "plain").mkdir()
    empty = run_cli("report", "plain", home=home, cwd=tmp_path)
    assert empty.returncode == 2 and "`tripbench run SPEC`" in empty.stderr, empty.stderr


def test_strategies_that_call_no_model_run_without_one(travelplanner_data: Path, travelplanner_index: Path,
                                                        tmp_path: Path) -> None:
    flags = ("--benchmark", "travelplanner", "--split", "validation", "--limit", "3", "--option",
             f"data_dir={travelplanner_data}", "--option", f"index={travelplanner_index}")
    done = run_cli("run", *flags, "--strategies", "greedy", "--quiet", home=tmp_path / "home", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"no model\s*│\s*greedy\s*│\s*3/3\s", done.stdout), done.stdout
    assert 'name = "no model"' in (tmp_path / "runs" / "travelplanner-validation" / "spec.toml").read_text()
    mixed = run_cli("run", *flags, "--strategies", "greedy,direct", home=tmp_path / "home", cwd=tmp_path)
    assert mixed.returncode == 2 and "--model must be given" in mixed.stderr, mixed.stderr  # direct needs one


def test_a_dry_run_makes_no_cache_folder(natural_plan_data: Path, tmp_path: Path) -> None:
    """A dry run writes nothing: its spec's cache folder, not made yet, holds nothing to read and is not made."""
    home = tmp_path / "home"
    assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    spec = tmp_path / "np.toml"
    spec.write_text('benchmark = "natural-plan"\nsplit = "calendar"\nstrategies = ["direct"]\nlimit = 2\n'
                    'cache_dir = "cache"\n[[models]]\nmodel = "offline:oracle"\n')
    dry = run_cli("run", str(spec), "--dry-run", home=home, cwd=tmp_path)
    assert dry.returncode == 0 and "cached calls" in dry.stdout, dry.stdout + dry.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / "runs").exists()
    assert run_cli("run", str(spec), "--quiet", home=home, cwd=tmp_path).returncode == 0
    assert (tmp_path / "cache").is_dir()  # the run made it: a dry run reads it from now on
