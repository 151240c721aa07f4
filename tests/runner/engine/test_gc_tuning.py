"""The garbage-collector settings `tripbench run` applies once a run is set up (perf/gateway.py measures them)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from runner.engine.gc_tuning import YOUNG_THRESHOLD, tune_for_a_run


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_objects_alive_at_set_up_leave_the_collector_and_young_collections_are_rarer(restored_gc: None) -> None:
    loaded = [{"query": i} for i in range(1000)]  # the run's data, alive once it is set up
    older, oldest = gc.get_threshold()[1:]
    tune_for_a_run()
    assert gc.get_freeze_count() >= len(loaded)
    assert gc.get_threshold() == (YOUNG_THRESHOLD, older, oldest)
