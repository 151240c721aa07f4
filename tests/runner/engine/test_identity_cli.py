"""A run directory is bound to its identity (`runner.engine.identity`): another spec is refused by name before anything
is written, `--extend` grows the run on purpose, and each (model, strategy) group keeps its own N."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from tests.runner.engine_support import run_cli


def _files(run_dir: Path) -> dict[str, bytes]:
    """The run's data: its results store (with any write-ahead log holding pages) and identity; not the lock, which
    names the process holding it."""
    return {path.name: path.read_bytes() for path in sorted(run_dir.iterdir())
            if path.name in ("identity.json", "results.sqlite", "results.sqlite-wal") and path.stat().st_size}


async def test_another_spec_is_refused_by_name_and_extend_keeps_each_groups_n(start_mock_llm, write_spec,
                                                                               tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm()
    url = f"openai-compatible:toy@{server.base_url}/v1"
    a = write_spec(server.base_url, "a.toml", options={"tasks": 5, "max_calls": 3})
    b = write_spec(server.base_url, "b.toml", strategies=["silent"], options={"tasks": 5, "max_calls": 3},
                   models=[{"model": url, "name": "other", "temperature": 0.5}], limit=3)
    run_dir = tmp_path / "runs" / "x"
    done = await asyncio.to_thread(run_cli, "run", str(a), "--run-dir", str(run_dir), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    before = _files(run_dir)
    assert json.loads(before["identity.json"])["parts"][0]["tasks"] == ["0", "1", "2", "3", "4"]

    refused = await asyncio.to_thread(run_cli, "run", str(b), "--run-dir", str(run_dir), "--quiet")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    message = refused.stderr
    assert "Traceback" not in message and "nothing was written" in message
    for named in ("models: other not in the run", "models: the run's toy not in this spec",
                  "strategies: silent not in the run", "strategies: the run's scripted not in this spec",
                  "tasks: the run's 3, 4 not in this spec", "--extend"):
        assert named in message, (named, message)
    assert _files(run_dir) == before  # nothing written: no session, no rollout, the same identity
    assert (await asyncio.to_thread(run_cli, "run", str(b), "--run-dir", str(run_dir), "--quiet", "--force")
            ).returncode == 2  # --force is for settings that change no rollout's key, never another run

    grown = await asyncio.to_thread(run_cli, "run", str(b), "--run-dir", str(run_dir), "--quiet", "--extend")
    assert grown.returncode == 0, grown.stdout + grown.stderr
    status = json.loads(run_cli("status", str(run_dir), "--json").stdout)
    groups = {(g["model"], g["strategy"]): (g["planned"], g["done"]) for g in status["groups"]}
    assert groups == {("toy", "scripted"): (5, 5), ("other", "silent"): (3, 3)}
    again = await asyncio.to_thread(run_cli, "run", str(a), "--run-dir", str(run_dir), "--quiet")
    assert again.returncode == 0, again.stdout + again.stderr  # either spec resumes the run it is part of
    status = json.loads(run_cli("status", str(run_dir), "--json").stdout)
    assert {(g["model"], g["strategy"]): g["planned"] for g in status["groups"]} == {
        ("toy", "scripted"): 5, ("other", "silent"): 3}



async def test_extend_never_changes_a_model_the_run_has(start_mock_llm, write_spec, tmp_path: Path,
                                                        toy_on_path) -> None:
    server = await start_mock_llm()
    a = write_spec(server.base_url, "a.toml", options={"tasks": 3, "max_calls": 3})
    hotter = write_spec(server.base_url, "hot.toml", options={"tasks": 3, "max_calls": 3},
                        sampling={"temperature": 0.7}, strategies=["scripted", "silent"])
    run_dir = tmp_path / "run"
    assert (await asyncio.to_thread(run_cli, "run", str(a), "--run-dir", str(run_dir), "--quiet")).returncode == 0
    refused = await asyncio.to_thread(run_cli, "run", str(hotter), "--run-dir", str(run_dir), "--quiet", "--extend",
                                      "--force")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "models.toy.temperature: unset then, 0.7 now" in refused.stderr
    assert "never changes what the run has" in refused.stderr


NATURAL_PLAN = """benchmark = "natural-plan"
split = "calendar"
strategies = ["direct"]
limit = {limit}

[[models]]
model = "{model}"
"""


def test_an_extended_runs_report_divides_each_group_by_its_own_n(natural_plan_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    oracle, noisy = tmp_path / "oracle.toml", tmp_path / "noisy.toml"
    oracle.write_text(NATURAL_PLAN.format(limit=5, model="offline:oracle"))
    noisy.write_text(NATURAL_PLAN.format(limit=3, model="offline:noisy"))
    run_dir = tmp_path / "run"
    assert run_cli("run", str(oracle), "--run-dir", str(run_dir), "--quiet", home=home).returncode == 0
    assert run_cli("run", str(noisy), "--run-dir", str(run_dir), "--quiet", home=home).returncode == 2
    grown = run_cli("run", str(noisy), "--run-dir", str(run_dir), "--quiet", "--extend", home=home)
    assert grown.returncode == 0, grown.stdout + grown.stderr
    status = json.loads(run_cli("status", str(run_dir), "--json", home=home).stdout)
    assert {g["model"]: (g["planned"], g["done"]) for g in status["groups"]} == {
        "offline:oracle": (5, 5), "offline:noisy": (3, 3)}
    assert run_cli("report", str(run_dir), "--out", str(tmp_path / "report"), home=home).returncode == 0
    text = (tmp_path / "report" / "report.md").read_text()
    accuracy = dict(re.findall(r"^\| offline:(oracle|noisy) \| direct \| calendar \| (\d+) \| \d+ \|", text, re.M))
    assert accuracy == {"oracle": "5", "noisy": "3"}  # N: each group's own tasks, not the run's 5
