"""The evaluation tests' TravelEval folder for the CLI: the staged data linked, with the session's index."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def data_dir(traveleval_data: Path, traveleval_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TravelEval folder: the staged queries and database (linked, not copied) and the session's index."""
    folder = tmp_path_factory.mktemp("traveleval")
    (folder / "data").symlink_to(traveleval_data / "data")
    (folder / "database").symlink_to(traveleval_data / "database")
    shutil.copy(traveleval_index, folder / "traveleval.sqlite")
    return folder
