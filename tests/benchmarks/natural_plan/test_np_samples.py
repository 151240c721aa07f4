"""The staged samples scored with their own Gemini 1.5 Pro answers, as the official scripts score them (trip 0.33,
calendar 0.56, meeting 0.38; ../shared/data/SOURCES.md §3), through `tripbench evaluate` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.natural_plan.dataset import FILE_STEMS, read_records
from benchmarks.natural_plan.evaluation import SCORERS
from benchmarks.natural_plan.offline.models import MISTAKES, injected_mistake, noisy_answer, oracle_answer
from benchmarks.offline import NoisyConfig

OFFICIAL = {"trip": 0.33, "calendar": 0.56, "meeting": 0.38}


def evaluate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", "evaluate", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("task", list(OFFICIAL))
def test_the_cli_gives_the_official_accuracy_on_the_staged_samples(natural_plan_data: Path, task: str) -> None:
    path = natural_plan_data / f"{FILE_STEMS[task]}_100.json"
    done = evaluate(str(path), "--benchmark", "natural-plan", "--task", task, "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["accuracy"] == pytest.approx(OFFICIAL[task])
    assert found["tasks"][task]["solved"] == round(100 * OFFICIAL[task])
    groups = found["tasks"][task]["groups"]
    assert sum(group["n"] for group in groups.values()) == 100
    assert sum(group["solved"] for group in groups.values()) == found["tasks"][task]["solved"]
    records = found["records"]
    assert len(records) == 100 and {"id", "solved", "score", "parsed", "reason"} <= set(records[0])
    assert all(record["reason"] for record in records)
    assert all(record["error"] is None for record in records if record["solved"])
    table = evaluate(str(path), "--benchmark", "natural-plan")
    assert table.returncode == 0 and f"overall accuracy: {100 * OFFICIAL[task]:.1f}% of 100 records" in table.stdout


def test_every_gold_plan_is_solved_and_the_oracle_answers_with_it(natural_plan_data: Path) -> None:
    for task, stem in FILE_STEMS.items():
        for record in read_records(natural_plan_data / f"{stem}_100.json", task).values():
            verdict = SCORERS[task](record, oracle_answer(record))
            assert verdict.solved, (task, verdict.reason)


def test_noisy_answers_fail_with_the_mistake_built_into_them(natural_plan_data: Path) -> None:
    seen: set[str] = set()
    for task, stem in FILE_STEMS.items():
        for record in read_records(natural_plan_data / f"{stem}_100.json", task).values():
            config = NoisyConfig(seed=3, rate=1.0)
            mistake = injected_mistake(record, config)
            verdict = SCORERS[task](record, noisy_answer(record, config))
            assert verdict.error == mistake, (task, record["golden_plan"], verdict.reason)
            seen.add(mistake or "none")
    assert seen >= {kind for kinds in MISTAKES.values() for kind in kinds}


def test_a_one_line_file_is_told_from_a_submission_by_its_keys(natural_plan_data: Path, tmp_path: Path) -> None:
    records = json.loads((natural_plan_data / "calendar_scheduling_100.json").read_text())
    first = dict(list(records.items())[:1])
    example_id, record = next(iter(first.items()))
    record["pred_5shot_pro"] = 'Here is the proposed time: {"id": 1} ' + record["golden_plan"]
    official = tmp_path / "one_line.json"
    official.write_text(json.dumps(first))  # one line, with "id" inside an answer
    done = evaluate(str(official), "--benchmark", "natural-plan", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["records"][0]["id"] == example_id
    submission = tmp_path / "one.jsonl"
    submission.write_text(json.dumps({"id": example_id, "task": "calendar", "answer": record["golden_plan"]}))
    done = evaluate(str(submission), "--benchmark", "natural-plan", "--data", str(natural_plan_data), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["accuracy"] == 1.0


def test_a_field_other_than_the_answer_is_named(natural_plan_data: Path, tmp_path: Path) -> None:
    path = natural_plan_data / "calendar_scheduling_100.json"
    done = evaluate(str(path), "--benchmark", "natural-plan", "--field", "pred_0shot")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "field 'pred_0shot': expected the model's answer as text, found no such field" in done.stderr
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"trip_planning_example_1": {"cities": "A**B", "golden_plan": "x"}}))
    done = evaluate(str(broken), "--benchmark", "natural-plan")
    assert done.returncode == 1
    assert f"{broken}: trip_planning_example_1: missing field(s) durations, num_cities of a trip record" in done.stderr
