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


@pytest.fixture(scope="session")
def travelplanner_index(travelplanner_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TravelPlanner index built once per session from the staged database (no synthetic flights)."""
    from sandbox_index import build_travelplanner_index

    dest = tmp_path_factory.mktemp("travelplanner_index") / "travelplanner.sqlite"
    build_travelplanner_index(travelplanner_data / "database", dest)
    return dest


@pytest.fixture(scope="session")
def sandbox(travelplanner_index: Path):  # type: ignore[no-untyped-def]
    """An open, read-only Sandbox over the session's index (shared: it is safe across threads)."""
    from sandbox_index import open_sandbox

    with open_sandbox(travelplanner_index) as opened:
        yield opened


@pytest.fixture
async def start_mock_llm():
    """Start mock LLM servers on 127.0.0.1:0 with any config: `server = await start_mock_llm(MockConfig(rpm=60))`.

    Each server has `.base_url` (Anthropic SDK), `.openai_base_url` (OpenAI SDK), `.plan` (scripted faults:
    `fail_next(429, retry_after=1)`, `malformed_next()`, `delay_next(2.0)`, `hang_next()`, `drop_next()`),
    `.received` and `.tally`; all are closed at teardown.
    """
    from providers.mock_server import serve

    started = []

    async def start(config=None):
        server = await serve("127.0.0.1", 0, config)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            await server.close()


@pytest.fixture
async def mock_llm(start_mock_llm):
    """A running mock LLM server with the default config (instant, honest, unlimited); see `start_mock_llm`."""
    return await start_mock_llm()
