"""Model labels are untrusted text: a long one, or one made of mathtext, Markdown, HTML or a spreadsheet formula, runs,
resumes and reports under the real CLI, and reaches every file as plain text."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

from tests.runner.engine_support import run_cli

HOSTILE = "=HYPERLINK(\"http://x\") $\\foo^{$ <script>alert(1)</script> [a](b) *b*"


def toy(server, name: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {"model": f"openai-compatible:toy@{server.openai_base_url}", "name": name,
            "prices": {"input": 1.0, "output": 2.0}}


async def test_a_3000_character_label_runs_resumes_and_writes_its_outputs(start_mock_llm, write_spec, tmp_path: Path,
                                                                          toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, models=[toy(server, "m" * 3000), toy(server, "m" * 2999 + "n")],
                      options={"tasks": 3, "max_calls": 1})
    run_dir = tmp_path / "run"
    for _ in range(2):  # the run, then its resume
        done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(run_dir), "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
    folders = sorted(path for path in (run_dir / "outputs").iterdir())
    assert len(folders) == 2 and all(len(path.name.encode()) <= 255 for path in folders)
    assert all((path / "scripted" / "trajectories.jsonl").is_file() for path in folders)


async def test_a_hostile_label_reaches_the_report_as_plain_text(start_mock_llm, write_spec, tmp_path: Path,
                                                                toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, models=[toy(server, HOSTILE)], options={"tasks": 3, "max_calls": 1})
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr

    report = await asyncio.to_thread(run_cli, "report", str(tmp_path / "run"), "--out", str(tmp_path / "report"))

    assert report.returncode == 0, report.stdout + report.stderr  # matplotlib did not parse the label as mathtext
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown and "&lt;script&gt;" in markdown and "\\[a\\](b)" in markdown
    cells = [cell for path in (tmp_path / "report").rglob("*.csv")
             for row in csv.reader(path.read_text(encoding="utf-8").splitlines()) for cell in row]
    assert "'" + HOSTILE in cells and HOSTILE not in cells  # a spreadsheet shows it, never runs it
