"""`tripbench compare` on real runs of the toy benchmark (the engine, the mock server's echo model): a run against
its rerun, and against a run with a prompt changed at step 3 and one task crashing."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from reports.paired.analysis import compare, to_json
from reports.paired.pairing import pairings
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.store.results import load_run
from tests.runner.engine_support import TOY, run_cli

TASKS = 12


def _spec(folder: Path, name: str, base_url: str, **options: object) -> Path:
    settings = {"tasks": TASKS, "max_calls": 6, **options}
    lines = [f'benchmark = "{TOY}"', 'split = "train"', 'strategies = ["scripted"]', 'cache_dir = "cache"',
             'evaluate = ["official"]', "", "[[models]]", 'name = "toy"',
             f'model = "openai-compatible:toy@{base_url}/v1"', "prices = { input = 1.0, output = 2.0 }", "",
             "[options]", *(f"{key} = {json.dumps(value)}" for key, value in settings.items()), ""]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`a`; `again` (a's spec run again, from the cache); `b` (prompts reworded from step 2, task 3 crashing)."""
    from runner.mock_server import serve

    folder = tmp_path_factory.mktemp("toy-compare")

    async def make() -> dict[str, Path]:
        server = await serve("127.0.0.1", 0)
        try:
            runs = {"a": _spec(folder, "a", server.base_url), "again": _spec(folder, "a", server.base_url),
                    "b": _spec(folder, "b", server.base_url, reword_from=2, crash_task="3")}
            for name, spec in runs.items():
                await execute(prepare(spec), folder / name, show_progress=False)
            return {name: folder / name for name in runs}
        finally:
            await server.close()
    return asyncio.run(make())


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
    import sqlite3
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
