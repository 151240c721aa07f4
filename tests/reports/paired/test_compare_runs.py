"""`tripbench compare` on real runs of the toy benchmark (the engine, the mock server's echo model): a run against
its rerun, and against a run with a prompt changed at step 3 and one task crashing."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from reports.paired.analysis import _per_task, compare, to_json
from reports.paired.pairing import pairings
from runner.engine.shard import shard_of
from runner.store.records import RolloutKey
from runner.store.results import load_run
from runner.store.shards import shard_dir_name
from tests.reports.paired.conftest import TASKS
from tests.runner.engine_support import run_cli


def _calls(run_dir: Path) -> dict[str, int]:
    with load_run(run_dir) as results:
        return {r.key.task: r.calls for r in results.rollouts}


def test_a_run_against_its_rerun_has_no_discordant_pair(toy_runs: dict[str, Path]) -> None:
    found = to_json(compare(pairings(str(toy_runs["a"]), str(toy_runs["again"]))))
    binary = [c for c in found["comparisons"] if c["kind"] == "binary"]
    assert {c["metric"] for c in binary} == {"passed", "delivered"}
    assert all(c["n"] == TASKS and c["a_only"] == c["b_only"] == 0 and c["p_value"] == 1.0 for c in binary)
    assert found["regressed"] == found["improved"] == []
    assert found["unmatched"] == {"a": [], "b": []}
    (divergence,) = found["divergence"]
    assert divergence["first_difference"] == {"same": TASKS}
    assert divergence["reusable_share"] == 1.0 and divergence["rerun_b_usd"] == 0.0


def test_a_prompt_change_at_step_three_parts_the_runs_at_call_two(toy_runs: dict[str, Path]) -> None:
    calls = _calls(toy_runs["a"])
    found = to_json(compare(pairings(str(toy_runs["a"]), str(toy_runs["b"]))))

    (regressed,) = found["regressed"]
    assert (regressed["task"], regressed["metric"], found["improved"]) == ("3", "passed", [])
    assert regressed["a"] == {"run": "a", "model": "toy", "strategy": "scripted"}
    assert {"group": "toy", "constraint": "all_calls_made", "a": True, "b": False} in regressed["changed"]
    assert regressed["pages"]["a"].endswith(f"report/rollouts/0/{regressed['rollouts']['a']}.html")
    passed = next(c for c in found["comparisons"] if c["metric"] == "passed")
    assert (passed["a_only"], passed["b_only"], passed["rate_a"]) == (1, 0, 100.0)
    assert passed["rate_b"] == pytest.approx(100 * (TASKS - 1) / TASKS) and passed["p_value"] == 1.0
    low, high = passed["ci95"]
    assert low < passed["difference"] < high and passed["difference"] == pytest.approx(-100 / TASKS)

    (divergence,) = found["divergence"]
    long_ones = sum(n >= 3 for task, n in calls.items() if task != "3")
    short_ones = sum(n < 3 for task, n in calls.items() if task != "3")
    assert long_ones and short_ones  # both kinds are there to be told apart
    expected = {"2": long_ones, "same": short_ones}
    crash_at = "same" if calls["3"] == 1 else "1"  # B's task 3 made one call before it crashed
    expected[crash_at] = expected.get(crash_at, 0) + 1
    assert divergence["first_difference"] == expected
    b_calls = sum(min(n, 2) + max(0, n - 2) for task, n in calls.items() if task != "3") + 1
    reused = sum(min(n, 2) for task, n in calls.items() if task != "3") + 1
    assert (divergence["b_calls"], divergence["reusable_calls"]) == (b_calls, reused)
    assert divergence["rerun_b_usd"] > 0


def test_the_cli_writes_every_output_and_prints_json(toy_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    done = run_cli("compare", str(toy_runs["a"]), f"{toy_runs['b']}:toy/scripted", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "passed" in done.stdout and "1 regressed, 0 improved" in done.stdout
    assert "seed" in done.stdout
    for name in ("compare.md", "compare.html", "compare.json", "csv/compare_binary.csv", "csv/compare_divergence.csv",
                 "pairs/0.html"):
        assert (out / name).is_file(), name
    assert "first-difference" in (out / "pairs/0.html").read_text()
    assert "| passed |" in (out / "compare.md").read_text()

    printed = run_cli("compare", str(toy_runs["a"]), str(toy_runs["b"]), "--out", str(out), "--json")
    assert printed.returncode == 0, printed.stderr
    found = json.loads(printed.stdout)
    assert set(found) >= {"comparisons", "regressed", "improved", "unmatched"}
    assert found == json.loads((out / "compare.json").read_text())


def test_unmatched_rollouts_are_counted_and_named(toy_runs: dict[str, Path], tmp_path: Path) -> None:
    fewer = tmp_path / "fewer"
    shutil.copytree(toy_runs["again"], fewer)
    with sqlite3.connect(fewer / "results.sqlite") as conn:
        conn.execute("DELETE FROM rollout WHERE task = '5'")
    conn.close()
    found = to_json(compare(pairings(str(toy_runs["a"]), str(fewer))))
    assert found["unmatched"]["a"] == [{"run": "a", "model": "toy", "strategy": "scripted", "split": "train",
                                       "task": "5", "sample": 0}]
    assert next(c for c in found["comparisons"] if c["metric"] == "passed")["n"] == TASKS - 1


@pytest.mark.parametrize(("args", "message"), [
    (("no/such/run", "no/such/other"), "no/such/run: no such run directory"),
    (("{a}:toy/nothing", "{b}"), "the run has no group toy/nothing (it has: toy/scripted)"),
    (("{a}", "{a}"), "both sides are the same"),
    (("{a}:toy", "{b}"), "name a group as RUN:MODEL/STRATEGY"),
])
def test_bad_sides_are_usage_errors_without_a_traceback(toy_runs: dict[str, Path], args: tuple[str, str],
                                                        message: str) -> None:
    done = run_cli("compare", *(arg.format(a=toy_runs["a"], b=toy_runs["b"]) for arg in args))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_folder_that_is_not_a_run_is_refused(tmp_path: Path, toy_runs: dict[str, Path]) -> None:
    done = run_cli("compare", str(tmp_path), str(toy_runs["a"]))
    assert done.returncode == 2 and "not a tripbench run directory" in done.stderr


def test_with_two_samples_pairs_are_per_sample_and_per_task(toy_runs: dict[str, Path]) -> None:
    run = toy_runs["groups"]  # scripted and silent (no call, fails every task), two samples each
    found = to_json(compare(pairings(f"{run}:toy/scripted", f"{run}:toy/silent")))
    passed = next(c for c in found["comparisons"] if c["metric"] == "passed")
    assert (passed["n"], passed["a_only"], passed["b_only"]) == (2 * TASKS, 2 * TASKS, 0)
    assert passed["per_task"] == {"tasks": TASKS, "difference": -100.0, "ci95": [-100.0, -100.0],
                                  "between_samples_share": None}  # no variance at all
    calls = next(c for c in found["comparisons"] if c["metric"] == "LLM calls")
    per_task = calls["per_task"]
    assert per_task["tasks"] == TASKS and per_task["difference"] == pytest.approx(calls["difference"])
    assert per_task["between_samples_share"] == 0.0  # both samples of a task made the same calls
    assert len(found["regressed"]) == 2 * TASKS and {r["sample"] for r in found["regressed"]} == {0, 1}


def test_the_per_task_difference_and_the_variance_between_samples() -> None:
    keys = [("s", "1", 0), ("s", "1", 1), ("s", "2", 0), ("s", "2", 1)]
    found = _per_task(keys, [1.0, 0.0, 1.0, 1.0])
    assert (found.tasks, found.difference) == (2, 0.75)  # the task means 0.5 and 1.0, averaged
    # variance of the four differences 3/16; within task 1 (1, 0): 1/4, within task 2: 0; their mean 1/8
    assert found.within_share == pytest.approx((1 / 8) / (3 / 16))


def test_a_sharded_run_directory_compares_as_one_run(toy_runs: dict[str, Path], tmp_path: Path) -> None:
    """The shards of a team run (`--shard I/N`, copied into one folder) read as one run: against the unsharded run
    of the same spec, every rollout is paired and nothing differs."""
    sharded = tmp_path / "sharded"
    for index in (1, 2):
        folder = sharded / shard_dir_name(index, 2)
        shutil.copytree(toy_runs["again"], folder)
        with sqlite3.connect(folder / "results.sqlite") as conn:
            rows = conn.execute("SELECT id, benchmark, split, task, model, strategy, sample FROM rollout").fetchall()
            others = [(rollout_id,) for rollout_id, *key in rows if shard_of(RolloutKey(*key), 2) != index]
            for table, column in (("verdict", "rollout_id"), ("evaluation", "rollout_id"), ("step", "rollout_id"),
                                  ("llm_call", "rollout_id"), ("rollout", "id")):
                conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", others)
        conn.close()
        assert 0 < len(others) < TASKS  # each shard holds some of the rollouts
    found = to_json(compare(pairings(str(toy_runs["a"]), str(sharded))))
    passed = next(c for c in found["comparisons"] if c["metric"] == "passed")
    assert (passed["n"], passed["a_only"], passed["b_only"], passed["p_value"]) == (TASKS, 0, 0, 1.0)
    assert found["unmatched"] == {"a": [], "b": []}
    assert found["divergence"][0]["first_difference"] == {"same": TASKS}
    done = run_cli("compare", str(toy_runs["a"]), str(sharded), "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0 and f"{TASKS:,} pairs" in done.stdout, done.stderr
