"""The aiohttp application: both chat routes, both batch APIs, fault injection, server-side limits and the tally.

Routes: `POST /v1/chat/completions` (OpenAI), `POST /v1/messages` (Anthropic), the batch routes (`batches.py`),
`GET /_tally`, `POST /_tally/reset`, `GET /health`, `GET /v1/models`, and with `slots` llama.cpp's `GET /props`. One
request runs: parse JSON -> check the key -> draw a fault -> parse the protocol -> context window -> reply -> RPM/TPM
admission -> bill -> a free slot (`slots`) -> latency -> answer. A completion is billed when it is decided, before its
latency, as real providers bill: a client that gives up or dies while waiting has paid, and the tally is what a
provider's invoice would say.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from providers.keys import key_digest
from runner.mock_server.anthropic_messages import AnthropicMessagesWire
from runner.mock_server.batches import add_batch_routes
from runner.mock_server.config import MockConfig
from runner.mock_server.faults import Fault
from runner.mock_server.openai_chat import OpenAIChatWire
from runner.mock_server.replies import ReplyFunction
from runner.mock_server.state import MOCK_STATE, MockState, ReceivedRequest, Refused, drop_connection
from runner.mock_server.usage_lies import tell
from runner.mock_server.wire import Wire

MAX_BODY_BYTES = 256 * 1024 * 1024
"""The largest request body accepted: a batch of Anthropic's largest size (OpenAI's batch files: 200 MB)."""

# The first bytes of a completion, then nothing: what a proxy cutting a response short leaves behind.
MALFORMED_BODY = b'{"id": "chatcmpl-mock", "object": "chat.completion", "choices": [{"index": 0, "mess'


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


async def _inject(request: web.Request, state: MockState, wire: Wire, fault: Fault) -> web.StreamResponse:
    if fault.kind == "status":
        return _answer(state, fault.status, wire.error(fault.status, f"injected HTTP {fault.status}"),
                       _retry_headers(fault.retry_after_s))
    if fault.kind == "malformed":
        state.tally.statuses["200"] += 1
        return web.Response(body=MALFORMED_BODY, content_type="application/json")
    if fault.kind == "drip":
        return await _drip(request, state, fault.seconds)
    if fault.kind == "hang":
        await state.pause(fault.seconds)
    return await drop_connection(request)


async def _drip(request: web.Request, state: MockState, every_s: float) -> web.StreamResponse:
    """A 200 whose body is JSON's leading whitespace, a byte every `every_s`, until `hang_s` or shutdown."""
    state.tally.statuses["200"] += 1
    response = web.StreamResponse(headers={"content-type": "application/json"})
    await response.prepare(request)
    deadline = time.monotonic() + state.config.faults.hang_s
    while time.monotonic() < deadline and not state.closing.is_set():
        await response.write(b" ")
        await state.pause(every_s)
    return await drop_connection(request)


async def _chat(request: web.Request, wire: Wire) -> web.StreamResponse:
    state = request.app[MOCK_STATE]
    config = state.config
    state.tally.requests += 1
    try:
        body = await request.json()
    except ValueError:
        body = None
    key = wire.api_key(request.headers)
    if not isinstance(body, dict):
        return _answer(state, 400, wire.error(400, "the request body is not a JSON object"))
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
        chat, completion = state.decide(wire, body)
    except Refused as refused:
        return _answer(state, refused.status, refused.body)

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
    if state.decoding is None:
        await state.pause(state.latency_s())
    else:
        async with state.decoding:  # queued for a decoding slot, then the reply's own latency
            await state.pause(state.latency_s())
    headers = {**admission.headers, wire.request_id_header: f"req_mock_{served}"}
    return _answer(state, 200, tell(wire.success(chat, completion, served), config.usage), headers)


def _chat_handler(wire: Wire) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await _chat(request, wire)

    return handle


async def _tally(request: web.Request) -> web.Response:
    return web.json_response(request.app[MOCK_STATE].tally.to_json())


async def _reset(request: web.Request) -> web.Response:
    request.app[MOCK_STATE].reset()
    return web.json_response({"reset": True})


async def _models(request: web.Request) -> web.Response:
    """OpenAI's list of models: `MockConfig.models`."""
    names = request.app[MOCK_STATE].config.models
    return web.json_response({"object": "list", "data": [{"id": name, "object": "model", "created": 0,
                                                          "owned_by": "mock"} for name in names]})


async def _props(request: web.Request) -> web.Response:
    """llama.cpp's server properties, of which the mock has one: `total_slots`, its `--parallel` slots."""
    return web.json_response({"total_slots": request.app[MOCK_STATE].config.slots})


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _release_hung_requests(app: web.Application) -> None:
    state = app[MOCK_STATE]
    state.closing.set()
    for timer in state.batches.timers:
        timer.cancel()


def create_app(config: MockConfig | None = None, *, reply: ReplyFunction | None = None) -> web.Application:
    """The mock LLM server as an aiohttp application (serve it with `serve`, or aiohttp's test utilities); `reply`
    replaces the config's reply function."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[MOCK_STATE] = MockState(config or MockConfig(), reply)
    for wire in (OpenAIChatWire(), AnthropicMessagesWire()):
        app.router.add_post(wire.path, _chat_handler(wire))
    add_batch_routes(app)
    app.router.add_get("/_tally", _tally)
    app.router.add_post("/_tally/reset", _reset)
    app.router.add_get("/health", _health)
    app.router.add_get("/v1/models", _models)
    if app[MOCK_STATE].config.slots is not None:
        app.router.add_get("/props", _props)
    app.on_shutdown.append(_release_hung_requests)
    return app
