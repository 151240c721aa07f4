"""Shared fixtures: the staged benchmark data in ../shared/data, API keys stripped from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
TRAVELPLANNER_DATA = SHARED_DATA / "travelplanner"


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may see a real key: paid-API calls are never made by the default suite."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TRIPBENCH_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def travelplanner_data() -> Path:
    """The staged TravelPlanner data folder (database/ and queries/)."""
    if not TRAVELPLANNER_DATA.is_dir():
        pytest.fail(f"staged data not found at {TRAVELPLANNER_DATA}: clone the project beside ../shared")
    return TRAVELPLANNER_DATA
