"""What one running mock server holds: its config, fault plan, limits, batches and the tally of what it billed."""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections import Counter, deque
from dataclasses import dataclass, field, fields
from typing import Any

from aiohttp import web

from providers.scripted_replies import Completion, MockRequest, NoReply, complete
from providers.tokens import count_prompt_tokens
from runner.mock_server.batch_book import BatchBook
from runner.mock_server.config import Latency, MockConfig
from runner.mock_server.faults import FaultPlan
from runner.mock_server.ratelimits import RateLimits
from runner.mock_server.replies import ReplyFunction, load_reply_function
from runner.mock_server.wire import Wire, WireError

log = logging.getLogger(__name__)


class Refused(Exception):
    """A request answered with an error status instead of a completion."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


@dataclass
class Tally:
    """What the server saw and billed since start (or the last reset)."""

    requests: int = 0
    """Requests received on the two chat routes."""
    served: int = 0
    """Completions billed (decided; answered with HTTP 200 and usage unless the client left first)."""
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    """Answers by HTTP status; hung and dropped requests have none."""
    faults: Counter[str] = field(default_factory=Counter)
    """Injected faults by kind (`status`, `malformed`, `hang`, `dropped`, `delay`)."""
    rate_limited: int = 0
    """429s from the server-side RPM/TPM limits (not injected ones)."""
    batches: int = 0
    """Batches created (either API)."""
    batch_requests: Counter[str] = field(default_factory=Counter)
    """custom_id -> how many times it was submitted in a batch."""
    batch_served: int = 0
    """Batch requests answered and billed (at the batch rate): the tokens below are theirs alone."""
    batch_input_tokens: int = 0
    batch_cached_input_tokens: int = 0
    batch_output_tokens: int = 0
    batch_outcomes: Counter[str] = field(default_factory=Counter)
    """Batch requests by how they ended: `succeeded`, `errored`, `expired`, `canceled`."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready copy (`asdict` would rebuild the Counters from their items, miscounting them)."""
        return {f.name: dict(value) if isinstance(value := getattr(self, f.name), Counter) else value
                for f in fields(self)}


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One request as received; the key is kept only as a short digest."""

    api: str
    body: dict[str, Any]
    key_digest: str | None
    query: dict[str, str] = field(default_factory=dict)
    """The URL's query parameters (a key some servers take there)."""
    at: float = field(default_factory=time.monotonic)
    """When it arrived (`time.monotonic`)."""


class MockState:
    """Everything one running app holds (stored in the app under `MOCK_STATE`)."""

    def __init__(self, config: MockConfig, reply: ReplyFunction | None = None) -> None:
        self.config = config
        self.plan = FaultPlan(config.faults, config.seed)
        self.limits = RateLimits(config.rpm, config.tpm)
        self.reply = reply or load_reply_function(config.reply)
        self.tally = Tally()
        self.received: deque[ReceivedRequest] = deque(maxlen=config.keep_requests)
        self.batches = BatchBook(config.batches)
        self.closing = asyncio.Event()
        self.decoding = asyncio.Semaphore(config.slots) if config.slots is not None else None
        """The server's decoding slots (`MockConfig.slots`); None when unbounded."""
        self._latency_random = random.Random(f"{config.seed}/latency")

    def latency_s(self) -> float:
        """One draw from the configured latency distribution."""
        latency: Latency = self.config.latency
        if latency.kind == "uniform":
            return self._latency_random.uniform(latency.low_s, latency.high_s)
        if latency.kind == "lognormal" and latency.median_s > 0:
            return self._latency_random.lognormvariate(math.log(latency.median_s), latency.sigma)
        return latency.seconds

    async def pause(self, seconds: float) -> None:
        """Sleep `seconds`, or less if the server is shutting down (so shutdown never waits on a slow reply)."""
        if seconds <= 0:
            return
        try:
            await asyncio.wait_for(self.closing.wait(), seconds)
        except TimeoutError:
            pass

    def decide(self, wire: Wire, body: Any) -> tuple[MockRequest, Completion]:
        """The completion a request body gets, before faults of transport, limits and latency.

        Raises:
            Refused: the body is malformed, over the context window, or the reply function failed.
        """
        if not isinstance(body, dict):
            raise Refused(400, wire.error(400, "the request body is not a JSON object"))
        try:
            chat = wire.parse(body)
        except WireError as exc:
            raise Refused(400, wire.error(400, str(exc))) from None
        prompt_tokens = count_prompt_tokens((m.role, m.content) for m in chat.messages)
        if prompt_tokens > self.config.context_window:
            raise Refused(400, wire.context_error(prompt_tokens, self.config.context_window,
                                                  self.config.context_wording))
        try:
            return chat, complete(chat, self.reply(chat), prompt_tokens)
        except NoReply as exc:  # a request the reply function cannot answer: the client's to fix, never retried
            raise Refused(400, wire.error(400, str(exc))) from None
        except Exception:  # a broken reply function is the server's fault: a 500 the client can see
            log.exception("mock server: the reply function failed")
            raise Refused(500, wire.error(500, "the mock server's reply function failed")) from None

    def reset(self) -> None:
        """Zero the tally and forget received requests."""
        self.tally = Tally()
        self.received.clear()


MOCK_STATE = web.AppKey("mock_state", MockState)


async def drop_connection(request: web.Request) -> web.Response:
    """Close the connection without an answer (the client sees a reset / disconnect)."""
    if request.transport is not None:
        request.transport.abort()
    raise asyncio.CancelledError  # aiohttp ends the request quietly; nothing is written
