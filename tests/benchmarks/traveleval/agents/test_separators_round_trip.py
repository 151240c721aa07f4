"""A run whose plans hold U+2028, U+2029 and U+0085 (raw in its JSON-lines files, as orjson writes them): every output
file reads back whole, and `tripbench evaluate` scores its own submission exactly as the run did."""

from __future__ import annotations

import csv
import json
from pathlib import Path

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


async def test_plans_holding_line_separators_round_trip_through_every_output_file(
        start_mock_llm, traveleval_home: Path, tmp_path: Path) -> None:
    oracle = oracle_of("traveleval", "easy", traveleval_home / "traveleval")
    server = await start_mock_llm(reply=with_separators(oracle))
    run_dir, _ = await run_with_separators(server.base_url, tmp_path, 'benchmark = "traveleval"\nsplit = "easy"\n'
                                           'limit = 3\nstrategies = ["direct"]\nevaluate = ["official"]',
                                           home=traveleval_home)
    with load_run(run_dir) as results:
        rollouts = results.rollouts
        stored = results.evaluations("official")
    assert len(rollouts) == 3 and all(SEPARATORS in json.dumps(r.plan, ensure_ascii=False) for r in rollouts)

    folder = run_dir / "outputs" / "sep" / "direct"
    submission = folder / "submission.jsonl"
    assert raw_separators(submission)
    assert [plan["query_uid"] for plan in json_lines(submission)] == ["T0001", "T0002", "T0003"]
    assert len(json_lines(folder / "trajectories.jsonl")) == 3

    scored = tripbench("evaluate", str(submission), "--benchmark", "traveleval", "--json", home=traveleval_home)
    assert scored.returncode == 0, scored.stderr
    by_uid = {line["query_uid"]: line for line in map(json.loads, scored.stdout.rstrip("\n").split("\n"))}
    print(f"\nplans scored from a submission holding U+2028/U+2029/U+0085: {len(by_uid)} of 3")
    assert sorted(by_uid) == ["T0001", "T0002", "T0003"]
    for rollout in rollouts:  # what the run stored, beside the file each line names
        assert stored[rollout.id].details == {k: v for k, v in by_uid[rollout.key.task].items() if k != "file"}

    report = tripbench("report", str(run_dir), home=traveleval_home)
    assert report.returncode == 0, report.stderr
    for table in (run_dir / "report" / "csv").glob("*.csv"):
        with table.open(newline="", encoding="utf-8") as handle:
            assert len(list(csv.reader(handle))) > 1, table
