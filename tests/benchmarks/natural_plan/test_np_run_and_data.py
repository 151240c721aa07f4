"""Natural Plan through the real CLI: a run over the staged samples, its report and submission file, and the data
commands (fetch from a local HTTP server, import of a local folder, info)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.natural_plan.dataset import FILE_STEMS
from reports import build_report
from reports.html import render_html


def tripbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_run_scores_like_the_evaluator_and_reports_per_task(natural_plan_data: Path, tmp_path: Path) -> None:
    spec = tmp_path / "np.toml"
    spec.write_text(f'benchmark = "natural-plan"\nsplit = "all"\nlimit = 40\nstrategies = ["direct"]\n'
                    f'evaluate = ["official"]\ncache_dir = "cache"\n\n[options]\ndata_dir = "{natural_plan_data}"\n\n'
                    '[[models]]\nname = "noisy"\nmodel = "offline:noisy?seed=1"\n')
    done = tripbench("run", str(spec), "--quiet")
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "runs" / "np"
    assert tripbench("report", str(run_dir)).returncode == 0
    with (run_dir / "report" / "csv" / "np_accuracy.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["task"] for row in rows] == ["trip"]  # the first 40 tasks of `all` are trip tasks
    assert rows[0]["N"] == "40"
    submission = next(run_dir.glob("outputs/**/submission.jsonl"))
    scored = tripbench("evaluate", str(submission), "--benchmark", "natural-plan", "--data", str(natural_plan_data),
                       "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["tasks"]["trip"]["solved"] == int(rows[0]["solved"]) < 40
    assert (run_dir / "report" / "csv" / "np_trip_by_cities.csv").is_file()
    # the rollout index marks a solved answer ✓ and names how the others failed
    index = render_html(build_report([run_dir]))
    assert index.count('<span class="ok">✓</span>') == int(rows[0]["solved"])
    assert index.count('<span class="failed">✗</span>') == 40 - int(rows[0]["solved"])
    assert "wrong order" in index and " solved · " in index
    assert (run_dir / "report" / "csv" / "np_errors.csv").is_file()


def test_an_unknown_split_names_the_splits(natural_plan_data: Path, tmp_path: Path) -> None:
    spec = tmp_path / "np.toml"
    spec.write_text(f'benchmark = "natural-plan"\nsplit = "travel"\nstrategies = ["direct"]\n\n[options]\n'
                    f'data_dir = "{natural_plan_data}"\n\n[[models]]\nmodel = "offline:oracle"\n')
    done = tripbench("run", str(spec))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "split: expected one of trip, meeting, calendar, all (or queries = FILE), got 'travel'" in done.stderr


def test_fetch_downloads_checks_and_never_keeps_a_bad_file(natural_plan_data: Path, file_server: tuple[str, Path],
                                                           tmp_path: Path) -> None:
    url, served = file_server
    for stem in FILE_STEMS.values():
        shutil.copy(natural_plan_data / f"{stem}_100.json", served / f"{stem}.json")
    home = tmp_path / "home"
    done = tripbench("data", "fetch", "natural-plan", "--home", str(home), "--url", url + "/{stem}.json")
    assert done.returncode == 0, done.stderr
    for task, stem in FILE_STEMS.items():
        assert f"{task}: {home / 'natural_plan' / f'{stem}.json'} (100 records)" in done.stdout
    info = json.loads(tripbench("data", "info", "--home", str(home), "--json").stdout)
    assert info["benchmarks"]["natural-plan"]["files"]["meeting"]["records"] == 100
    # a damaged download fails with the file and the reason, and the good files already there stay
    (served / "meeting_planning.json").write_text('{"meeting_planning_example_1": {"num_people": 2}}')
    done = tripbench("data", "fetch", "natural-plan", "--home", str(home), "--url", url + "/{stem}.json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "meeting_planning_example_1: missing field(s) golden_plan, constraints, dist_matrix" in done.stderr
    assert json.loads((home / "natural_plan" / "meeting_planning.json").read_text()).__len__() == 100
    assert not list((home / "natural_plan").glob(".staging-*"))


def test_import_recognises_a_natural_plan_folder(natural_plan_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = tripbench("data", "import", str(natural_plan_data), "--home", str(home))
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in (home / "natural_plan").iterdir()) == sorted(
        f"{stem}.json" for stem in FILE_STEMS.values())
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    done = tripbench("data", "import", str(nothing), "--home", str(home))
    assert done.returncode == 1 and "no benchmark recognises this folder" in done.stderr


def test_an_empty_answers_file_is_named_not_scored(natural_plan_data: Path, tmp_path: Path) -> None:
    (tmp_path / "answers.jsonl").write_text(" \n")
    done = tripbench("evaluate", str(tmp_path / "answers.jsonl"), "--benchmark", "natural-plan", "--data",
                     str(natural_plan_data))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert 'answers.jsonl: empty: expected the official JSON object or one {"id", "task", "answer"} per line' \
        in done.stderr
