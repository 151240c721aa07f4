"""What a report holds per rollout (`reports.collect`): its row and its place, not its decoded evaluation, which each
`view.evaluation` reads from the open store (the last few read kept), as `view.plan` reads the plan: a report of a
gigabyte of plans holds a constant plus a few hundred bytes a rollout (perf/import_memory.py measures it)."""

from __future__ import annotations

import sys
from pathlib import Path

from reports.collect import collect_run
from runner.store.results import RECENT_EVALUATIONS, load_run


def test_a_views_evaluation_is_the_stored_one_read_when_asked_and_not_kept(train_runs: dict[str, Path]) -> None:
    run = collect_run(train_runs["agents"])
    views = [view for group in run.groups for view in group.rollouts]
    with load_run(train_runs["agents"]) as results:
        stored = results.evaluations("official")
    assert len(views) > RECENT_EVALUATIONS and len(stored) == len(views)
    first = views[0].evaluation
    assert first is not None and first == stored[views[0].stored.id]
    assert [view.evaluation for view in views] == [stored[view.stored.id] for view in views]  # the rest, read after
    again = views[0].evaluation
    assert again == first and again is not first  # read again from the store
    del again
    assert sys.getrefcount(first) == 2  # held by this test alone (and getrefcount's argument): no view keeps it


def test_a_mode_not_evaluated_reads_no_evaluation(train_runs: dict[str, Path]) -> None:
    run = collect_run(train_runs["agents"], mode="corrected")  # a mode TravelPlanner does not have
    assert not run.evaluated
    assert all(view.evaluation is None for group in run.groups for view in group.rollouts)
