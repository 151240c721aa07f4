"""The aiohttp application: both chat routes, fault injection, server-side limits, the tally; and `serve()`.

Routes: `POST /v1/chat/completions` (OpenAI), `POST /v1/messages` (Anthropic), `GET /_tally`,
`POST /_tally/reset`, `GET /health`. One request runs: parse JSON -> check the key -> draw a fault -> parse the
protocol -> context window -> reply -> RPM/TPM admission -> bill -> latency -> answer. A completion is billed when
it is decided, before its latency, as real providers bill: a client that gives up or dies while waiting has paid,
and the tally is what a provider's invoice would say.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from typing import Any

from aiohttp import web

from providers.keys import key_digest
from providers.mock_server.anthropic_messages import AnthropicMessagesWire
from providers.mock_server.config import Latency, MockConfig
from providers.mock_server.faults import Fault, FaultPlan
from providers.mock_server.openai_chat import OpenAIChatWire
from providers.mock_server.ratelimits import RateLimits
from providers.mock_server.replies import complete, load_reply_function
from providers.mock_server.wire import Wire, WireError
from providers.tokens import count_prompt_tokens

log = logging.getLogger(__name__)

# The first bytes of a completion, then nothing: what a proxy cutting a response short leaves behind.
MALFORMED_BODY = b'{"id": "chatcmpl-mock", "object": "chat.completion", "choices": [{"index": 0, "mess'


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


class MockState:
    """Everything one running app holds (stored in the app under `MOCK_STATE`)."""

    def __init__(self, config: MockConfig) -> None:
        self.config = config
        self.plan = FaultPlan(config.faults, config.seed)
        self.limits = RateLimits(config.rpm, config.tpm)
        self.reply = load_reply_function(config.reply)
        self.tally = Tally()
        self.received: deque[ReceivedRequest] = deque(maxlen=config.keep_requests)
        self.closing = asyncio.Event()
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

    def reset(self) -> None:
        """Zero the tally and forget received requests."""
        self.tally = Tally()
        self.received.clear()


MOCK_STATE = web.AppKey("mock_state", MockState)


def _masked(key: str) -> str:
    """How OpenAI quotes a rejected key: its first and last characters only."""
    return f"{key[:3]}{'*' * 8}{key[-4:]}" if len(key) > 8 else "*" * len(key)


def _retry_headers(seconds: float | None) -> dict[str, str]:
    if seconds is None or math.isinf(seconds):
        return {}
    return {"retry-after": str(math.ceil(seconds)), "retry-after-ms": str(math.ceil(seconds * 1000))}


def _answer(state: MockState, status: int, body: dict[str, Any], headers: dict[str, str] | None = None,
            ) -> web.Response:
    state.tally.statuses[str(status)] += 1
    return web.json_response(body, status=status, headers=headers)


async def _drop(request: web.Request) -> web.Response:
    """Close the connection without an answer (the client sees a reset / disconnect)."""
    if request.transport is not None:
        request.transport.abort()
    raise asyncio.CancelledError  # aiohttp ends the request quietly; nothing is written


async def _inject(request: web.Request, state: MockState, wire: Wire, fault: Fault) -> web.Response:
    if fault.kind == "status":
        return _answer(state, fault.status, wire.error(fault.status, f"injected HTTP {fault.status}"),
                       _retry_headers(fault.retry_after_s))
    if fault.kind == "malformed":
        state.tally.statuses["200"] += 1
        return web.Response(body=MALFORMED_BODY, content_type="application/json")
    if fault.kind == "hang":
        await state.pause(fault.seconds)
    return await _drop(request)


async def _chat(request: web.Request, wire: Wire) -> web.StreamResponse:
    state = request.app[MOCK_STATE]
    config = state.config
    state.tally.requests += 1
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return _answer(state, 400, wire.error(400, "the request body is not a JSON object"))
    key = wire.api_key(request.headers)
    state.received.append(ReceivedRequest(wire.api, body, key_digest(key) if key else None, dict(request.query)))
    if key is None or (config.api_keys is not None and key not in config.api_keys):
        message = f"Incorrect API key provided: {_masked(key)}." if key else "Missing API key."
        return _answer(state, 401, wire.error(401, message, code="invalid_api_key"))

    fault = state.plan.draw()
    if fault is not None:
        state.tally.faults[fault.kind] += 1
        if fault.kind != "delay":
            return await _inject(request, state, wire, fault)
        await state.pause(fault.seconds)

    try:
        chat = wire.parse(body)
    except WireError as exc:
        return _answer(state, 400, wire.error(400, str(exc)))
    prompt_tokens = count_prompt_tokens((m.role, m.content) for m in chat.messages)
    if prompt_tokens > config.context_window:
        return _answer(state, 400, wire.context_error(prompt_tokens, config.context_window))
    try:
        completion = complete(chat, state.reply(chat), prompt_tokens)
    except Exception:  # a broken reply function is the server's fault: a 500 the client can see
        log.exception("mock server: the reply function failed")
        return _answer(state, 500, wire.error(500, "the mock server's reply function failed"))

    admission = state.limits.admit(key, completion.input_tokens + completion.output_tokens)
    if not admission.admitted:
        state.tally.rate_limited += 1
        message = f"Rate limit reached for {chat.model} on {admission.limit} per minute. Please try again later."
        return _answer(state, 429, wire.error(429, message, code="rate_limit_exceeded"),
                       {**admission.headers, **_retry_headers(admission.retry_after_s)})

    # Billed once the answer is decided, before the latency, as real providers bill: a client that disconnects or
    # is killed while waiting has still paid.
    tally = state.tally
    tally.served += 1
    tally.input_tokens += completion.input_tokens
    tally.cached_input_tokens += completion.cached_input_tokens
    tally.output_tokens += completion.output_tokens
    served = tally.served
    await state.pause(state.latency_s())
    headers = {**admission.headers, wire.request_id_header: f"req_mock_{served}"}
    return _answer(state, 200, wire.success(chat, completion, served), headers)


def _chat_handler(wire: Wire) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await _chat(request, wire)

    return handle


async def _tally(request: web.Request) -> web.Response:
    return web.json_response(request.app[MOCK_STATE].tally.to_json())


async def _reset(request: web.Request) -> web.Response:
    request.app[MOCK_STATE].reset()
    return web.json_response({"reset": True})


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _release_hung_requests(app: web.Application) -> None:
    app[MOCK_STATE].closing.set()


def create_app(config: MockConfig | None = None) -> web.Application:
    """The mock LLM server as an aiohttp application (serve it with `serve`, or aiohttp's test utilities)."""
    app = web.Application()
    app[MOCK_STATE] = MockState(config or MockConfig())
    for wire in (OpenAIChatWire(), AnthropicMessagesWire()):
        app.router.add_post(wire.path, _chat_handler(wire))
    app.router.add_get("/_tally", _tally)
    app.router.add_post("/_tally/reset", _reset)
    app.router.add_get("/health", _health)
    app.on_shutdown.append(_release_hung_requests)
    return app
