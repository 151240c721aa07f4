"""Shared fixtures: the staged benchmark data in ../shared/data (skipped when absent, see `staged_data`), API keys
stripped from the environment, and a watchdog for every test.

The watchdog: the engine and gateway tests wait on servers, subprocesses, semaphores and polling loops; a bug there
(a float residue read as a held reservation, a writer task that died) hangs instead of failing, and CI then sits
until its 90-minute limit with nothing to show. A timer thread names the hung test, prints every thread's stack past
pytest's output capture and exits; `faulthandler`'s own timer, a minute later, is the backstop should the GIL be
stuck.
"""

from __future__ import annotations

import faulthandler
import functools
import hashlib
import http.server
import importlib.util
import inspect
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.postgres_server import PostgresServer, server_binaries
from tests.staged_data import MISSING, require

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
TRAVELPLANNER_DATA = SHARED_DATA / "travelplanner"
NATURAL_PLAN_DATA = SHARED_DATA / "natural_plan"

HANG_S = 600.0
"""No test takes a tenth of this on a loaded 2-core machine; past it the test is hung, not slow."""


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the commands tests start as it reaches a terminal's: a suite started in a script's background
    (`pytest &`, where the shell ignores SIGINT) would hand the ignore down to every command a test interrupts, and
    each would outlive its Ctrl-C (a standalone mock server, a run)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may see a real key: paid-API calls are never made by the default suite."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TRIPBENCH_HOME"):
        monkeypatch.delenv(name, raising=False)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per thing from outside the project that tests were skipped for (see `staged_data.require`)."""
    reasons = Counter(str(report.longrepr[2]).removeprefix("Skipped: ")
                      for report in terminalreporter.stats.get("skipped", [])
                      if isinstance(report.longrepr, tuple) and MISSING in str(report.longrepr[2]))
    for reason, count in reasons.items():
        terminalreporter.write_line(f"{count} tests skipped: {reason}")


@pytest.fixture(scope="session")
def travelplanner_data() -> Path:
    """The staged TravelPlanner data folder (database/ and queries/)."""
    if not TRAVELPLANNER_DATA.is_dir():
        require(f"the staged data at {TRAVELPLANNER_DATA}", "clone the project beside ../shared")
    return TRAVELPLANNER_DATA


@pytest.fixture(scope="session")
def natural_plan_data() -> Path:
    """The staged Natural Plan samples (100 records of each task, `<stem>_100.json`)."""
    if not NATURAL_PLAN_DATA.is_dir():
        require(f"the staged data at {NATURAL_PLAN_DATA}", "clone the project beside ../shared")
    return NATURAL_PLAN_DATA


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


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        """No access log on the test output."""


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server (127.0.0.1, port 0) over a fresh folder: (base URL, folder); a test fills the folder."""
    root = tmp_path / "served"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
async def start_mock_llm():
    """Start mock LLM servers on 127.0.0.1:0 with any config: `server = await start_mock_llm(MockConfig(rpm=60))`.

    Each server has `.base_url` (Anthropic SDK), `.openai_base_url` (OpenAI SDK), `.plan` (scripted faults:
    `fail_next(429, retry_after=1)`, `malformed_next()`, `delay_next(2.0)`, `hang_next()`, `drop_next()`),
    `.received` and `.tally`; all are closed at teardown.
    """
    from runner.mock_server import serve

    started = []

    async def start(config=None, reply=None):
        server = await serve("127.0.0.1", 0, config, reply=reply)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            await server.close()


def _cluster() -> Iterator[PostgresServer]:
    binaries = server_binaries()
    if binaries is None:
        require("PostgreSQL's server programs (initdb, pg_ctl)", "apt-get install postgresql")
    if importlib.util.find_spec("psycopg") is None:
        require("the PostgreSQL client psycopg", "pip install -e '.[team]' (the dev install includes it)")
    assert binaries is not None
    server = PostgresServer(binaries)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster on a Unix socket (no TCP) for the session, stopped by its PID at the end."""
    yield from _cluster()


@pytest.fixture
def restartable() -> Iterator[PostgresServer]:
    """A throwaway cluster of one test's own, which it may restart (the session's would cut the other tests'
    connections)."""
    yield from _cluster()


@pytest.fixture
def team_db(postgres: PostgresServer, request: pytest.FixtureRequest) -> str:
    """The URL of a fresh, empty database of the session's cluster, for one test."""
    import psycopg

    name = f"t{hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]}"
    with psycopg.connect(postgres.url, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")
        connection.execute(f"CREATE DATABASE {name}")
    return postgres.url.replace("/tripbench?", f"/{name}?")


@pytest.fixture
async def mock_llm(start_mock_llm):
    """A running mock LLM server with the default config (instant, honest, unlimited); see `start_mock_llm`."""
    return await start_mock_llm()


def _abort(request: pytest.FixtureRequest) -> None:
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    sys.stderr.write(f"\n{request.node.nodeid} still running after {HANG_S:.0f} s: hung. Stacks:\n")
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    sys.stderr.flush()
    os._exit(1)


Answer = Callable[[], web.Response | Awaitable[web.Response]]


@pytest.fixture
async def props_server() -> AsyncIterator[Callable[[Answer], Awaitable[str]]]:
    """`url = await props_server(answer)`: a server whose `GET /props` (llama.cpp's route for its slots) gives what
    `answer()` returns (or awaits), as a misbehaving, foreign or stuck server might; `url` is its `/v1` base URL."""
    runners: list[web.AppRunner] = []

    async def start(answer: Answer) -> str:
        async def props(request: web.Request) -> web.Response:
            answered = answer()
            return await answered if inspect.isawaitable(answered) else answered
        app = web.Application()
        app.router.add_get("/props", props)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runners.append(runner)
        return f"http://127.0.0.1:{runner.addresses[0][1]}/v1"

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture(autouse=True)
def hang_watchdog(request: pytest.FixtureRequest) -> Iterator[None]:
    """Arms the timers for this test, disarms them when it ends."""
    timer = threading.Timer(HANG_S, _abort, args=(request,))
    timer.daemon = True
    timer.start()
    faulthandler.dump_traceback_later(HANG_S + 60, exit=True)
    try:
        yield
    finally:
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()
