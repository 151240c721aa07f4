"""The generated demo world, written and indexed once per session (the real importer reads it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.traveleval.offline.world import TravelEvalWorld, generate_world
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> TravelEvalWorld:
    return generate_world(tmp_path_factory.mktemp("traveleval_world"), seed=0)


@pytest.fixture(scope="session")
def world_sandbox(world: TravelEvalWorld) -> Iterator[Sandbox]:
    with Sandbox.open(ensure_index(world.folder)) as opened:
        yield opened
