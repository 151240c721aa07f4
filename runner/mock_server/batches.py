"""Both batch APIs on the mock server: OpenAI's Files + Batches and Anthropic's Message Batches.

OpenAI: `POST /v1/files` (multipart, `purpose=batch`), `GET /v1/files/{id}/content`, `POST /v1/batches`,
`GET /v1/batches[/{id}]`, `POST /v1/batches/{id}/cancel`. Anthropic: `POST /v1/messages/batches`,
`GET /v1/messages/batches[/{id}]`, `GET /v1/messages/batches/{id}/results`, `POST /v1/messages/batches/{id}/cancel`.

A batch ends `batches.delay_s` after it is created. Its requests are then answered one by one as the online route
would answer them (same reply function and context window; no transport faults, rate limits or latency), except
that every `error_every`-th errors with a 500 and every `expire_every`-th expires; every `lose_created_every`-th
batch is created but its creation's connection drops before the answer; every `cut_results_every`-th read of
results drops half-way through. Answered requests are billed in
the tally's batch counters, apart from online ones, so a test can price each at its own rate; expired, cancelled and
errored ones are not billed. The tally also counts how often each custom_id was submitted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from runner.mock_server.anthropic_messages import AnthropicMessagesWire
from runner.mock_server.batch_book import MockBatch, Outcome, RequestResult
from runner.mock_server.openai_chat import OpenAIChatWire
from runner.mock_server.state import MOCK_STATE, MockState, Refused, drop_connection
from runner.mock_server.usage_lies import tell
from runner.mock_server.wire import Wire

_OPENAI, _ANTHROPIC = OpenAIChatWire(), AnthropicMessagesWire()
_CHAT_URL = "/v1/chat/completions"
_WINDOW_S = 24 * 3600
"""Both APIs' completion window."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def add_batch_routes(app: web.Application) -> None:
    """Serve both batch APIs from `app` (whose `MOCK_STATE` holds the batches)."""
    routes = [
        ("POST", "/v1/files", _upload),
        ("GET", "/v1/files/{id}/content", _file_content),
        ("POST", "/v1/batches", _openai_create),
        ("GET", "/v1/batches", _listing(_OPENAI, _openai_batch)),
        ("GET", "/v1/batches/{id}", _retrieving(_OPENAI, _openai_batch)),
        ("POST", "/v1/batches/{id}/cancel", _retrieving(_OPENAI, _openai_batch, cancel=True)),
        ("POST", "/v1/messages/batches", _anthropic_create),
        ("GET", "/v1/messages/batches", _listing(_ANTHROPIC, _anthropic_batch)),
        ("GET", "/v1/messages/batches/{id}", _retrieving(_ANTHROPIC, _anthropic_batch)),
        ("GET", "/v1/messages/batches/{id}/results", _anthropic_results),
        ("POST", "/v1/messages/batches/{id}/cancel", _retrieving(_ANTHROPIC, _anthropic_batch, cancel=True)),
    ]
    for method, path, handler in routes:
        app.router.add_route(method, path, _authorised(handler, _ANTHROPIC if "/messages/" in path else _OPENAI))


def _authorised(handler: Handler, wire: Wire) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        state = request.app[MOCK_STATE]
        key = wire.api_key(request.headers)
        if key is None or (state.config.api_keys is not None and key not in state.config.api_keys):
            return web.json_response(wire.error(401, "invalid API key"), status=401)
        return await handler(request)
    return handle


def _find(request: web.Request, wire: Wire) -> MockBatch | None:
    """The batch named in the URL, if it exists and belongs to `wire`'s API."""
    batch = request.app[MOCK_STATE].batches.batches.get(request.match_info["id"])
    return batch if batch is not None and batch.api == wire.api else None


def _retrieving(wire: Wire, render: Callable[[web.Request, MockBatch], dict[str, Any]], *,
                cancel: bool = False) -> Handler:
    """The handler answering with the batch named in the URL (cancelled first with `cancel`), or a 404."""
    async def handle(request: web.Request) -> web.Response:
        batch = _find(request, wire)
        if batch is None:
            return _not_found(wire, "batch")
        if cancel:
            _cancel(request.app[MOCK_STATE], batch)
        return web.json_response(render(request, batch))
    return handle


def _listing(wire: Wire, render: Callable[[web.Request, MockBatch], dict[str, Any]]) -> Handler:
    """The handler listing `wire`'s batches, newest first, a page of `limit` (default 20) after the id `after`."""
    async def handle(request: web.Request) -> web.Response:
        book = request.app[MOCK_STATE].batches.batches
        ids = [b.id for b in reversed(book.values()) if b.api == wire.api]
        after = request.query.get("after") or request.query.get("after_id")
        start = ids.index(after) + 1 if after in ids else 0
        try:
            limit = max(1, min(100, int(request.query.get("limit", "20"))))
        except ValueError:
            return _bad(wire, "limit: expected an integer")
        batches = [render(request, book[i]) for i in ids[start:start + limit]]
        page = {"data": batches, "has_more": start + limit < len(ids),
                "first_id": batches[0]["id"] if batches else None, "last_id": batches[-1]["id"] if batches else None}
        return web.json_response({"object": "list", **page} if wire is _OPENAI else page)
    return handle


def _not_found(wire: Wire, what: str) -> web.Response:
    return web.json_response(wire.error(404, f"no such {what}"), status=404)


def _bad(wire: Wire, message: str) -> web.Response:
    return web.json_response(wire.error(400, message), status=400)


# -- processing, shared --------------------------------------------------------------------------------------------

def _start(state: MockState, batch: MockBatch) -> None:
    """Record a new batch and schedule its processing."""
    book = state.batches
    book.batches[batch.id] = batch
    state.tally.batches += 1
    for custom_id, _ in batch.requests:
        state.tally.batch_requests[custom_id] += 1
    loop = asyncio.get_running_loop()
    book.timers.append(loop.call_later(book.config.delay_s, _process, state, batch))


async def _created(request: web.Request, state: MockState, batch: MockBatch,
                   render: Callable[[web.Request, MockBatch], dict[str, Any]]) -> web.Response:
    """Record and schedule a new batch, then answer with it (or, per `lose_created_every`, drop the connection)."""
    _start(state, batch)
    if state.batches.loses_creation_answer():
        return await drop_connection(request)
    return web.json_response(render(request, batch))


def _process(state: MockState, batch: MockBatch) -> None:
    """Answer (and bill) every request of a batch that was not cancelled, then end it."""
    if batch.ended:
        return
    wire = _OPENAI if batch.api == "openai" else _ANTHROPIC
    tally = state.tally
    for custom_id, body in batch.requests:
        outcome = state.batches.draw()
        if outcome == "expired":
            result = RequestResult("expired")
        elif outcome == "errored":
            result = RequestResult("errored", 500, wire.error(500, "injected batch request error"))
        else:
            try:
                chat, completion = state.decide(wire, body)
            except Refused as refused:
                result = RequestResult("errored", refused.status, refused.body)
            else:
                tally.batch_served += 1
                tally.batch_input_tokens += completion.input_tokens
                tally.batch_cached_input_tokens += completion.cached_input_tokens
                tally.batch_output_tokens += completion.output_tokens
                result = RequestResult("succeeded", 200, tell(wire.success(chat, completion, tally.batch_served),
                                                              state.config.usage))
        batch.results[custom_id] = result
        tally.batch_outcomes[result.outcome] += 1
    _end(state, batch)


def _cancel(state: MockState, batch: MockBatch) -> None:
    if batch.ended:
        return
    batch.cancelled_at = time.time()
    for custom_id, _ in batch.requests:
        batch.results[custom_id] = RequestResult("canceled")
        state.tally.batch_outcomes["canceled"] += 1
    _end(state, batch)


def _end(state: MockState, batch: MockBatch) -> None:
    batch.ended_at = time.time()
    if batch.api == "openai":
        output, errors = bytearray(), bytearray()
        for n, (custom_id, result) in enumerate(batch.results.items()):
            line = _openai_result_line(batch, n, custom_id, result)
            (output if result.outcome == "succeeded" else errors).extend(orjson.dumps(line) + b"\n")
        book = state.batches
        if output:
            batch.output_file_id = book.new_id("file-mock-")
            book.files[batch.output_file_id] = bytes(output)
        if errors:
            batch.error_file_id = book.new_id("file-mock-")
            book.files[batch.error_file_id] = bytes(errors)


# -- OpenAI --------------------------------------------------------------------------------------------------------

async def _upload(request: web.Request) -> web.Response:
    state = request.app[MOCK_STATE]
    form = await request.post()
    upload = form.get("file")
    if not isinstance(upload, web.FileField):
        return _bad(_OPENAI, "file: expected a file upload")
    data = upload.file.read()
    file_id = state.batches.new_id("file-mock-")
    state.batches.files[file_id] = data
    return web.json_response({"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                              "filename": upload.filename, "purpose": str(form.get("purpose", "batch")),
                              "status": "processed"})


async def _file_content(request: web.Request) -> web.StreamResponse:
    data = request.app[MOCK_STATE].batches.files.get(request.match_info["id"])
    if data is None:
        return _not_found(_OPENAI, "file")
    return await _results_body(request, data, "application/octet-stream")


async def _results_body(request: web.Request, data: bytes, content_type: str) -> web.StreamResponse:
    """`data` as the answer, or (per `cut_results_every`) its first half, then a dropped connection."""
    if not request.app[MOCK_STATE].batches.cuts_results():
        return web.Response(body=data, content_type=content_type)
    response = web.StreamResponse(headers={"Content-Type": content_type, "Content-Length": str(len(data))})
    await response.prepare(request)
    await response.write(data[:len(data) // 2])
    return await drop_connection(request)


async def _openai_create(request: web.Request) -> web.Response:
    state = request.app[MOCK_STATE]
    body = await request.json()
    file_id = body.get("input_file_id")
    data = state.batches.files.get(file_id) if isinstance(file_id, str) else None
    if data is None:
        return _bad(_OPENAI, f"input_file_id: no such file {file_id!r}")
    if body.get("endpoint") != _CHAT_URL or body.get("completion_window") != "24h":
        return _bad(_OPENAI, f"endpoint and completion_window: expected {_CHAT_URL!r} and '24h'")
    requests = []
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            item = orjson.loads(line)
        except orjson.JSONDecodeError:
            return _bad(_OPENAI, f"input file line {number}: not JSON")
        if (not isinstance(item, dict) or not isinstance(item.get("custom_id"), str) or item.get("method") != "POST"
                or item.get("url") != _CHAT_URL or not isinstance(item.get("body"), dict)):
            return _bad(_OPENAI, f"input file line {number}: expected custom_id, method POST, url {_CHAT_URL}, body")
        requests.append((item["custom_id"], item["body"]))
    if len({custom_id for custom_id, _ in requests}) != len(requests):
        return _bad(_OPENAI, "input file: custom_id values must be unique")
    batch = MockBatch(state.batches.new_id("batch_mock_"), "openai", requests, time.time(),
                      metadata=dict(body.get("metadata") or {}), input_file_id=file_id)
    return await _created(request, state, batch, _openai_batch)


def _openai_batch(request: web.Request, batch: MockBatch) -> dict[str, Any]:
    """An OpenAI `batch` object (`request` unused: the signature is `_anthropic_batch`'s, which needs the URL)."""
    if batch.cancelled_at is not None:
        status = "cancelled"
    else:
        status = "completed" if batch.ended else "in_progress"
    done = batch.count("succeeded")
    return {
        "id": batch.id, "object": "batch", "endpoint": _CHAT_URL, "errors": None,
        "input_file_id": batch.input_file_id, "completion_window": "24h", "status": status,
        "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
        "created_at": int(batch.created_at), "in_progress_at": int(batch.created_at),
        "expires_at": int(batch.created_at) + _WINDOW_S,
        "completed_at": int(batch.ended_at) if batch.ended_at and batch.cancelled_at is None else None,
        "cancelled_at": int(batch.cancelled_at) if batch.cancelled_at else None,
        "request_counts": {"total": len(batch.requests), "completed": done,
                           "failed": len(batch.results) - done},
        "metadata": batch.metadata,
    }


_OPENAI_CODES: dict[Outcome, str] = {"expired": "batch_expired", "canceled": "batch_cancelled"}


def _openai_result_line(batch: MockBatch, n: int, custom_id: str, result: RequestResult) -> dict[str, Any]:
    line: dict[str, Any] = {"id": f"batch_req_{batch.id}_{n}", "custom_id": custom_id, "response": None,
                            "error": None}
    if result.status is not None:
        line["response"] = {"status_code": result.status, "request_id": f"req_{batch.id}_{n}", "body": result.body}
    else:
        line["error"] = {"code": _OPENAI_CODES[result.outcome], "message": f"the request was {result.outcome}"}
    return line


# -- Anthropic -----------------------------------------------------------------------------------------------------

async def _anthropic_create(request: web.Request) -> web.Response:
    state = request.app[MOCK_STATE]
    body = await request.json()
    items = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        return _bad(_ANTHROPIC, "requests: expected a non-empty list")
    requests = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str) or not isinstance(
                item.get("params"), dict):
            return _bad(_ANTHROPIC, f"requests.{i}: expected custom_id and params")
        requests.append((item["custom_id"], item["params"]))
    if len({custom_id for custom_id, _ in requests}) != len(requests):
        return _bad(_ANTHROPIC, "requests: custom_id values must be unique within a batch")
    batch = MockBatch(state.batches.new_id("msgbatch_mock_"), "anthropic", requests, time.time())
    return await _created(request, state, batch, _anthropic_batch)


async def _anthropic_results(request: web.Request) -> web.StreamResponse:
    batch = _find(request, _ANTHROPIC)
    if batch is None:
        return _not_found(_ANTHROPIC, "message batch")
    if not batch.ended:
        return _bad(_ANTHROPIC, f"message batch {batch.id} has not ended: no results yet")
    lines = b"".join(orjson.dumps({"custom_id": custom_id, "result": _anthropic_result(result)}) + b"\n"
                     for custom_id, result in batch.results.items())
    return await _results_body(request, lines, "application/binary")


def _anthropic_result(result: RequestResult) -> dict[str, Any]:
    if result.outcome == "succeeded":
        return {"type": "succeeded", "message": result.body}
    if result.outcome == "errored":
        return {"type": "errored", "error": result.body}
    return {"type": result.outcome}


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _anthropic_batch(request: web.Request, batch: MockBatch) -> dict[str, Any]:
    counts = {outcome: batch.count(outcome) for outcome in ("succeeded", "errored", "canceled", "expired")}
    results_url = f"{request.url.origin()}/v1/messages/batches/{batch.id}/results" if batch.ended else None
    return {
        "id": batch.id, "type": "message_batch",
        "processing_status": "ended" if batch.ended else "in_progress",
        "request_counts": {"processing": len(batch.requests) - len(batch.results), **counts},
        "created_at": _iso(batch.created_at), "expires_at": _iso(batch.created_at + _WINDOW_S),
        "ended_at": _iso(batch.ended_at), "cancel_initiated_at": _iso(batch.cancelled_at), "archived_at": None,
        "results_url": results_url,
    }
