"""A Natural Plan run whose answers hold U+2028, U+2029 and U+0085 (raw in its submission, as orjson writes them):
the files read back whole and `tripbench evaluate` scores the submission as the run did."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.base import DELIVERED
from runner.store.results import load_run
from tests.benchmarks.separators import (
    SEPARATORS,
    json_lines,
    oracle_of,
    raw_separators,
    run_with_separators,
    tripbench,
    with_separators,
)


async def test_answers_holding_line_separators_are_scored_from_the_runs_own_submission(
        start_mock_llm, natural_plan_data: Path, tmp_path: Path) -> None:
    server = await start_mock_llm(reply=with_separators(oracle_of("natural-plan", "trip", natural_plan_data)))
    run_dir, _ = await run_with_separators(server.base_url, tmp_path, f'benchmark = "natural-plan"\nsplit = "trip"\n'
                                           f'limit = 5\nstrategies = ["direct"]\nevaluate = ["official"]\n'
                                           f'[options]\ndata_dir = "{natural_plan_data}"\n')
    with load_run(run_dir) as results:
        solved = sum(all(v.passed for v in e.verdicts) for e in results.evaluations("official").values())
        assert [r.status for r in results.rollouts] == [DELIVERED] * 5
        assert all(r.answer.endswith(SEPARATORS) for r in results.rollouts)

    folder = run_dir / "outputs" / "sep" / "direct"
    submission = folder / "submission.jsonl"
    assert raw_separators(submission) and len(json_lines(submission)) == 5
    assert len(json_lines(folder / "trajectories.jsonl")) == 5
    scored = tripbench("evaluate", str(submission), "--benchmark", "natural-plan", "--data", str(natural_plan_data),
                       "--json")
    assert scored.returncode == 0, scored.stderr
    trip = json.loads(scored.stdout)["tasks"]["trip"]
    print(f"\nNatural Plan answers scored from a submission holding the separators: {trip['n']}, "
          f"{trip['solved']} solved (the run: {solved})")
    assert (trip["n"], trip["solved"]) == (5, solved) and solved > 0
