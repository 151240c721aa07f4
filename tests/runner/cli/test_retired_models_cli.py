"""`tripbench run` names a model its provider shut down (or will within 60 days) before anything is sent: the dry run
too, which needs no key."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tests.runner.engine_support import run_cli


def test_a_dry_run_names_a_retired_model(write_spec, tmp_path: Path, toy_on_path) -> None:
    models = [{"model": "openai:gpt-4-1106-preview"}, {"model": "openai:gpt-4o-mini"}, {"model": "openai:gpt-5.2"}]
    spec = write_spec("http://127.0.0.1:9", models=models, options={"tasks": 2, "max_calls": 2})
    done = run_cli("run", str(spec), "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    if date.today() >= date(2026, 10, 23):
        assert ('note: openai:gpt-4-1106-preview was shut down on 2026-10-23: only a cache or a pack can answer it; '
                'run with cache = "replay"') in done.stderr
    if date(2026, 11, 15) <= date.today() < date(2027, 1, 14):  # LiteLLM's date for it (the bundled snapshot's)
        days = (date(2027, 1, 14) - date.today()).days
        assert f"note: openai:gpt-4o-mini will be shut down on 2027-01-14 (in {days} days)" in done.stderr
    assert "gpt-5.2" not in done.stderr  # no shutdown date known
