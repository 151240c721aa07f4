"""TravelEval's evaluator (`TravelEvalBenchmark.open_evaluator`) is a value that owns what scoring opens: one scorer
(sandbox, distances, name matcher) for every batch it scores, closed by its `close`, after which nothing of the
process keeps the sandbox (no cache keyed by a sandbox outlives it)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

from benchmarks.base import DELIVERED, RolloutResult
from benchmarks.traveleval import dataset
from benchmarks.traveleval.benchmark import TravelEvalBenchmark, TravelEvalOptions
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.sandbox.sandbox import Sandbox


def test_one_scorer_for_every_batch_closed_with_the_evaluator(data_dir: Path, traveleval_sandbox: Sandbox,
                                                              open_files: Callable[[Path], int]) -> None:
    tasks = [task for task in dataset.load_tasks(data_dir, dataset.ALL)[::40]
             if build_plan(traveleval_sandbox, task.input) is not None][:6]
    results = [RolloutResult(DELIVERED, plan=build_plan(traveleval_sandbox, task.input)) for task in tasks]
    index = data_dir / "traveleval.sqlite"
    before = open_files(index)
    evaluator = TravelEvalBenchmark().open_evaluator(TravelEvalOptions(data_dir=data_dir, distance="offline"))
    first = evaluator.evaluate(tasks[:3], results[:3], "official")
    scorer = evaluator.scorer
    assert scorer is not None and open_files(index) == before + 1
    second = evaluator.evaluate(tasks[3:], results[3:], "corrected")
    assert evaluator.scorer is scorer and open_files(index) == before + 1  # the same sandbox, not a second one
    assert len(first) == len(second) == 3 and all(e is not None and e.verdicts for e in [*first, *second])
    sandbox = weakref.ref(scorer.sandbox)
    del scorer
    evaluator.close()
    assert evaluator.scorer is None and open_files(index) == before
    gc.collect()
    assert sandbox() is None  # nothing of the process (a city's lookups, the intercity options) keeps it
