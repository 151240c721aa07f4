"""`batch = "planner"` on TravelEval: the paper's strategies write a plan in every call, so each is the Planner's and
goes through the batch API (a round per call); the tool agents' steps go online. `tripbench run --dry-run` says so,
with no key and nothing sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.engine_support import run_cli


@pytest.mark.parametrize(("strategy", "said"), [
    ("direct", "about 1 batch rounds one after the other (1 per rollout), 100% of its new tokens at the batch price"),
    ("reflexion", "about 2 batch rounds one after the other (2 per rollout, a rollout longer than the expected calls "
                  "more), 100% of its new tokens at the batch price"),
    ("react-tools", None),
])
def test_the_dry_run_states_the_rounds_of_the_papers_strategies(traveleval_data: Path, tmp_path: Path,
                                                                strategy: str, said: str | None) -> None:
    spec = tmp_path / "night.toml"
    spec.write_text("\n".join([
        'benchmark = "traveleval"', 'split = "all"', "limit = 2", f'strategies = ["{strategy}"]', 'batch = "planner"',
        'cache_dir = "cache"', "[options]", f'data_dir = "{traveleval_data}"', 'distance = "offline"',
        "[[models]]", 'model = "openai:gpt-4o-mini"']), encoding="utf-8")
    done = run_cli("run", str(spec), "--dry-run", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    printed = " ".join(done.stdout.split())
    if said is None:
        assert "batch rounds" not in printed  # every call online: no round to wait for
    else:
        assert f"batch: openai:gpt-4o-mini: {said}" in printed
