"""Plans files made elsewhere, as a hostile user would give them, through the real CLI (`evaluate --benchmark
traveleval`, `import-plans`): the official CSV rows never run as spreadsheet formulas, never overwrite each other or
a file a link points to; a line nested too deeply is a counted bad line, a device or an oversized file refused at
once, too many answers to one query a usage error, a file given twice refused. Never a traceback."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from datahome.input_files import MAX_ENTRY_BYTES
from runner.engine.spec import MAX_SAMPLES
from runner.store.results import load_run
from tests.benchmarks.traveleval.evaluation import plans
from tests.runner.engine_support import run_cli

FORMULAS = ("=HYPERLINK(\"http://evil.example\",\"open\")", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1")
"""What OWASP lists as the start of a cell a spreadsheet runs as a formula."""


def _write(path: Path, entries: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)) + "\n"
                            for entry in entries), encoding="utf-8")
    return path


def _scored(uid: str = "T0201") -> dict[str, Any]:
    return {**plans.plan(), "query_uid": uid}


def _evaluate(*args: str, data_dir: Path) -> Any:
    return run_cli("evaluate", *args, "--benchmark", "traveleval", "--data-dir", str(data_dir), "--distance",
                   "offline")


def _import(*args: str, data_dir: Path, run_dir: Path) -> Any:
    return run_cli("import-plans", *args, "--benchmark", "traveleval", "--run-dir", str(run_dir), "--option",
                   f"data_dir={data_dir}", "--option", "distance=offline")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_official_csv_cells_never_run_as_formulas(data_dir: Path, tmp_path: Path) -> None:
    path = _write(tmp_path / "plans.jsonl", [_scored(), *({**_scored(), "query_uid": uid} for uid in FORMULAS)])
    done = _evaluate(str(path), "--official-csv", str(tmp_path / "rows"), data_dir=data_dir)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = _rows(tmp_path / "rows" / "plans.csv")
    assert [row["query_id"] for row in rows] == ["T0201", *("'" + uid for uid in FORMULAS)]
    assert rows[0]["status"] == "success" and float(rows[0]["detailed_metrics_accuracy_cost_deviation_rate"]) >= 0
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row.values())


def test_two_files_of_one_name_are_refused_before_anything_is_written(data_dir: Path, tmp_path: Path) -> None:
    first = _write(tmp_path / "model-a" / "plans.jsonl", [_scored()])
    second = _write(tmp_path / "model-b" / "Plans.jsonl", [_scored("T0202")])  # one name where case is ignored
    rows = tmp_path / "rows"
    done = _evaluate(str(first), str(second), "--official-csv", str(rows), data_dir=data_dir)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{first} and {second}: both would write --official-csv Plans.csv" in done.stderr
    assert not rows.exists() and not done.stdout  # nothing scored, nothing written
    assert _evaluate(str(first), str(second), data_dir=data_dir).returncode == 0  # without the CSV files: fine


def test_a_link_at_a_csv_path_is_replaced_and_its_target_kept(data_dir: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    rows = tmp_path / "rows"
    rows.mkdir()
    (rows / "plans.csv").symlink_to(victim)
    path = _write(tmp_path / "plans.jsonl", [_scored()])
    done = _evaluate(str(path), "--official-csv", str(rows), data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not (rows / "plans.csv").is_symlink() and _rows(rows / "plans.csv")[0]["query_id"] == "T0201"
    assert [child.name for child in rows.iterdir()] == ["plans.csv"]  # no temporary file left


def test_a_line_nested_too_deeply_is_a_counted_bad_line(data_dir: Path, tmp_path: Path) -> None:
    """A first line of 100,000 "[" made the file look like an official array (a RecursionError traceback); a plan
    nested 300 deep parsed, and stored by import-plans crashed orjson (255 levels at most)."""
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    path = _write(tmp_path / "plans.jsonl", ["[" * 100_000, {**_scored("T0202"), "notes": deep}, _scored()])
    done = _evaluate(str(path), "--json", data_dir=data_dir)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    reason = "JSON nested too deeply (more than 64 levels)"
    assert [result.get("error") for result in results] == [f"{path}:1: {reason}", f"{path}:2: {reason}", None]
    run_dir = tmp_path / "run"
    done = _import(str(path), "--model", "m", "--strategy", "direct", data_dir=data_dir, run_dir=run_dir)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"skipped: {path}:1: {reason}" in done.stderr and f"skipped: {path}:2: {reason}" in done.stderr
    assert "imported 1 answers" in done.stdout and "skipped 2" in done.stdout
    official = tmp_path / "plans_m_direct.json"  # the official array format: the deep entry alone is bad
    official.write_text(json.dumps([_scored(), {**_scored("T0202"), "notes": deep}], indent=2), encoding="utf-8")
    done = _evaluate(str(official), "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line).get("error") for line in done.stdout.splitlines()] == [None, f"{official}[1]: {reason}"]


def test_a_device_or_an_oversized_entry_is_refused(data_dir: Path, tmp_path: Path) -> None:
    """A link to /dev/zero was read until memory ran out. A plan file of any size is read a plan at a time (the
    official arrays of a large run pass 256 MiB), so it is one line or plan past `MAX_ENTRY_BYTES` that is refused,
    not held whole."""
    zero = tmp_path / "plans_m_direct.json"
    zero.symlink_to("/dev/zero")
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as handle:
        handle.truncate(MAX_ENTRY_BYTES + 1)  # sparse: no disk used
    for path, why in ((zero, "a character device, not a file: not read"),
                      (huge, "line 1 longer than 16 MiB, the most one entry may hold")):
        done = _evaluate(str(path), data_dir=data_dir)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"{path}: {why}" in done.stderr
        done = _import(str(path), "--model", "m", "--strategy", "direct", data_dir=data_dir,
                       run_dir=tmp_path / "run")
        assert done.returncode == 1 and f"{path}: {why}" in done.stderr and "Traceback" not in done.stderr


def test_more_answers_to_one_query_than_a_run_holds_is_a_usage_error(data_dir: Path, tmp_path: Path) -> None:
    path = _write(tmp_path / "plans.jsonl", ['{"query_uid": "T0201", "itinerary": {}}'] * (MAX_SAMPLES + 1))
    run_dir = tmp_path / "run"
    done = _import(str(path), "--model", "m", "--strategy", "direct", data_dir=data_dir, run_dir=run_dir)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert (f"{MAX_SAMPLES + 1} answers to query T0201 (m / direct): a run holds at most {MAX_SAMPLES} samples of a "
            "query") in done.stderr
    assert not run_dir.exists()


def test_a_file_given_twice_is_refused_naming_both(data_dir: Path, tmp_path: Path) -> None:
    """The same file three times became three samples of each answer, without a word."""
    path = _write(tmp_path / "plans.jsonl", [_scored()])
    copy = _write(tmp_path / "again" / "mine.jsonl", [_scored()])
    run_dir = tmp_path / "run"
    for files, why in (((path, path, path), "the same file given twice"),
                       ((path, copy), "the same content in two files")):
        done = _import(*map(str, files), "--model", "m", "--strategy", "direct", data_dir=data_dir, run_dir=run_dir)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"{files[0]} and {files[1]}: {why}" in done.stderr
        assert not run_dir.exists()
        done = _evaluate(*map(str, files), data_dir=data_dir)
        assert done.returncode == 2 and f"{files[0]} and {files[1]}: {why}" in done.stderr
    done = _import(str(path), "--model", "m", "--strategy", "direct", data_dir=data_dir, run_dir=run_dir)
    assert done.returncode == 0, done.stderr
    with load_run(run_dir) as results:
        assert [(r.key.task, r.key.sample) for r in results.rollouts] == [("T0201", 0)]
