"""TravelEval's shared fixtures: the staged data in ../shared/data/traveleval (skipped when absent, failed under
`TRIPBENCH_REQUIRE_DATA=1`) and a sandbox index built from it once per session."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchmarks.traveleval.sandbox.build import build_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from tests.staged_data import require

TRAVELEVAL_DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "traveleval"


@pytest.fixture(scope="session")
def traveleval_data() -> Path:
    """The staged TravelEval folder: `data/queries/*.json` and `database/` (the official layout)."""
    if not TRAVELEVAL_DATA.is_dir():
        require(f"the staged data at {TRAVELEVAL_DATA}", "clone the project beside ../shared")
    return TRAVELEVAL_DATA


@pytest.fixture(scope="session")
def traveleval_index(traveleval_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TravelEval sandbox index built once per session from the staged database."""
    dest = tmp_path_factory.mktemp("traveleval_index") / "traveleval.sqlite"
    build_index(traveleval_data / "database", dest)
    return dest


@pytest.fixture(scope="session")
def traveleval_sandbox(traveleval_index: Path) -> Iterator[Sandbox]:
    """An open Sandbox over the session's index (shared: it is safe across threads)."""
    with Sandbox.open(traveleval_index) as opened:
        yield opened


@pytest.fixture
def open_files() -> Callable[[Path], int]:
    """How many of this process's file descriptors are open on a file (a sandbox's index: its connections)."""
    folder = Path("/proc/self/fd")
    if not folder.is_dir():
        pytest.skip("no /proc/self/fd to count open files by")

    def count(path: Path) -> int:
        target = str(path.resolve())
        found = 0
        for fd in os.listdir(folder):
            try:
                found += os.readlink(folder / fd) == target
            except OSError:  # closed meanwhile (the listing's own descriptor)
                pass
        return found
    return count
