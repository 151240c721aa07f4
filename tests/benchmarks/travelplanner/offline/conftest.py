"""Fixtures for the offline half: a generated demo world, imported by the real importer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.travelplanner.offline.world import WorldSummary, generate_world
from sandbox_index import build_travelplanner_index


@dataclass(frozen=True)
class DemoWorld:
    summary: WorldSummary
    index: Path


@pytest.fixture(scope="session")
def demo_world(tmp_path_factory: pytest.TempPathFactory) -> DemoWorld:
    """The demo world of seed 0 (4 queries per level x days cell) and its sandbox index."""
    root = tmp_path_factory.mktemp("demo-world")
    summary = generate_world(root, seed=0, per_cell=4)
    index = root / "travelplanner.sqlite"
    build_travelplanner_index(summary.database, index)
    return DemoWorld(summary, index)
