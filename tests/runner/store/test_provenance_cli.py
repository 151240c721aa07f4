"""Every report says what made its numbers (`runner.store.provenance`): a "Provenance" section in report.md and
report.html, and provenance.json beside them."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest

from tests.runner.engine_support import run_cli

SPEC = """benchmark = "natural-plan"
split = "calendar"
strategies = ["direct"]
limit = 2

[[models]]
model = "offline:oracle"
temperature = 0.3
max_tokens = 900
extra_body = { enable_thinking = false }
"""


def test_a_report_carries_the_runs_provenance(natural_plan_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    spec = tmp_path / "run.toml"
    spec.write_text(SPEC)
    done = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet", home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert run_cli("report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), home=home).returncode == 0

    facts = json.loads((tmp_path / "report" / "provenance.json").read_text())
    data = home / "natural_plan" / "calendar_scheduling.json"
    assert facts["data_sha256"] == {data.name: hashlib.sha256(data.read_bytes()).hexdigest()}
    assert facts["models"]["offline:oracle"] == {
        "model": "offline:oracle", "temperature": 0.3, "top_p": None, "max_tokens": 900, "seed": None,
        "extra_body": {"enable_thinking": False}, "shut_down_on": None}
    assert facts["tripbench"] and len(facts["spec_sha256"]) == 64 and facts["cache"] == "readwrite"
    assert facts["price_table"].startswith("LiteLLM") and facts["replayed"] is False
    (session,) = facts["sessions"]
    assert session["host"] == socket.gethostname() and session["outcome"] == "completed"
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "## Provenance" in markdown and f"sha256 {facts['data_sha256'][data.name]}" in markdown
    assert 'extra\\_body {"enable\\_thinking": false}' in markdown  # as sent, Markdown-escaped
    assert "Provenance" in (tmp_path / "report" / "report.html").read_text()


def test_the_report_of_a_sharded_run_carries_the_provenance_of_its_shards(
        natural_plan_data: Path, tmp_path: Path, team_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIPBENCH_TEAM_URL_PROVENANCE", team_db)  # shards share their cache through a team database
    home = tmp_path / "home"
    assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    spec = tmp_path / "run.toml"
    spec.write_text(SPEC.replace("limit = 2", "limit = 4") + '\n[team]\nurl_env = "TRIPBENCH_TEAM_URL_PROVENANCE"\n')
    for shard in ("1/2", "2/2"):
        done = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--shard", shard, "--quiet", home=home)
        assert done.returncode == 0, done.stdout + done.stderr
    done = run_cli("report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), home=home)
    assert done.returncode == 0, done.stdout + done.stderr

    facts = json.loads((tmp_path / "report" / "provenance.json").read_text())
    data = home / "natural_plan" / "calendar_scheduling.json"
    assert facts["data_sha256"] == {data.name: hashlib.sha256(data.read_bytes()).hexdigest()}  # one for all shards
    assert facts["data_differs_between_shards"] == []
    assert facts["models"]["offline:oracle"]["temperature"] == 0.3
    assert facts["models"]["offline:oracle"]["extra_body"] == {"enable_thinking": False}
    assert [(s["shard"], s["session"], s["host"]) for s in facts["sessions"]] == [
        ("shard-1-of-2", 1, socket.gethostname()), ("shard-2-of-2", 1, socket.gethostname())]
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert f"sha256 {facts['data_sha256'][data.name]}" in markdown and "temperature 0.3" in markdown
    assert "session 1 of shard-1-of-2" in markdown and "session 1 of shard-2-of-2" in markdown
