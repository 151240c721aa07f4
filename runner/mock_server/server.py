"""Run the mock server inside a live event loop (AppRunner + TCPSite), for the CLI, tests and benchmarks."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from aiohttp import web

from runner.mock_server.app import create_app
from runner.mock_server.config import MockConfig
from runner.mock_server.faults import FaultPlan
from runner.mock_server.replies import ReplyFunction
from runner.mock_server.state import MOCK_STATE, ReceivedRequest, Tally


class RunningServer:
    """A started mock server: its URLs, its fault plan, what it received and billed. Close it when done."""

    def __init__(self, runner: web.AppRunner, base_url: str) -> None:
        self._runner = runner
        self._state = runner.app[MOCK_STATE]
        self.base_url = base_url
        """`http://HOST:PORT`: the Anthropic SDK's base URL."""

    @property
    def openai_base_url(self) -> str:
        """`http://HOST:PORT/v1`: the OpenAI SDK's base URL."""
        return f"{self.base_url}/v1"

    @property
    def plan(self) -> FaultPlan:
        """Script faults here: `plan.fail_next(429, retry_after=1)`, `plan.malformed_next()`, …"""
        return self._state.plan

    @property
    def received(self) -> Sequence[ReceivedRequest]:
        """Requests received on the chat routes, oldest first (the newest `keep_requests`)."""
        return self._state.received

    @property
    def tally(self) -> Tally:
        """The live tally (also served at `GET /_tally`)."""
        return self._state.tally

    def forget_batches(self) -> int:
        """Answer 404 for every batch made so far, as a provider does for another project's or a deleted batch.
        They still run and are billed. Returns how many there were."""
        book = self._state.batches
        forgotten = len(book.batches)
        book.batches.clear()
        return forgotten

    async def close(self) -> None:
        """Stop serving; hung requests are released and their connections dropped."""
        await self._runner.cleanup()

    async def __aenter__(self) -> RunningServer:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()


async def serve(host: str = "127.0.0.1", port: int = 0, config: MockConfig | None = None, *,
                reply: ReplyFunction | None = None) -> RunningServer:
    """Start the mock server on `host:port` (port 0 picks a free one) and return it running.

    Args:
        host: interface to bind.
        port: TCP port; 0 lets the OS choose (read it from `base_url`).
        config: the server's knobs; defaults to an honest, instant, unlimited server.
        reply: the reply function, instead of the one the config names (a value of this process, such as the offline
            models of the runs it prepares).

    Returns:
        The running server; `await server.close()` (or `async with`) stops it.
    """
    runner = web.AppRunner(create_app(config, reply=reply), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound_host, bound_port = runner.addresses[0][:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    return RunningServer(runner, f"http://{shown}:{bound_port}")
