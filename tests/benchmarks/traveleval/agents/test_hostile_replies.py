"""Replies no plan can be read from, or none a run could store: each ends the rollout as `parse_failure` with the
reason, never as `crashed` (which a resume would try again for ever), and a crafted 3 MB reply costs no time."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.traveleval.agents.statuses import PARSE_FAILURE
from runner.store.results import load_run
from tests.benchmarks.separators import oracle_of, run_with_separators
from tests.benchmarks.traveleval.agents.hostile_replies import hostile


@pytest.mark.parametrize(("parsing", "crafted"), [("official", "not JSON"), ("lenient", "no valid JSON object")])
async def test_hostile_replies_are_parse_failures_with_a_reason(start_mock_llm, traveleval_home: Path,
                                                                tmp_path: Path, parsing: str, crafted: str) -> None:
    server = await start_mock_llm(reply=hostile(oracle_of("traveleval", "easy", traveleval_home / "traveleval")))
    run_dir, _ = await run_with_separators(server.base_url, tmp_path, 'benchmark = "traveleval"\nsplit = "easy"\n'
                                           'limit = 4\nstrategies = ["direct"]\nevaluate = ["official"]\n'
                                           f'[options]\nparsing = "{parsing}"', home=traveleval_home)
    with load_run(run_dir) as results:
        outcome = {r.key.task: (r.status, r.error) for r in results.rollouts}
    assert {status for status, _ in outcome.values()} == {PARSE_FAILURE}, outcome
    # T0001: the plan around the long integer is no JSON (lenient: an inner object is found, and is no plan)
    assert "cannot be stored" in outcome["T0002"][1] and "cannot be stored" in outcome["T0003"][1]
    assert crafted in outcome["T0004"][1]  # cut at the run's max_tokens: the bounds are test_te_plan.py's
