"""TravelPlanner's shared fixtures: the staged train queries (the evaluator's and the dataset's tests read them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.travelplanner.dataset import Query, load_queries


@pytest.fixture(scope="session")
def train_queries(travelplanner_data: Path) -> list[Query]:
    return load_queries(travelplanner_data / "queries" / "train.jsonl")
