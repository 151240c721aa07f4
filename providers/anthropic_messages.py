"""Anthropic Messages, sent through the official `anthropic` SDK or aiohttp.

System messages become the `system` field (the Messages API has no system role). The API refuses stop sequences
that are only whitespace (HTTP 400), which the TravelPlanner agents stop at (`"\n"`): those are not sent but
applied here, cutting the reply at the first one and reporting the finish as `stop_sequence`; the usage stays what
was billed. This module knows the protocol
(the JSON body of a request, the JSON of an answer and of an error); what every SDK provider shares (the client,
`complete`) is `providers.sdk_model`'s, and the transport (`providers.transport`) moves the JSON and raises our error
classes, so nothing above this module sees an `anthropic` or `aiohttp` type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

import anthropic
from anthropic.types.messages import MessageBatchRequestCounts

from providers.batching import (
    ANTHROPIC_MAX_BYTES,
    ANTHROPIC_MAX_REQUESTS,
    CLOCK_SKEW_S,
    BatchResult,
    BatchState,
    lost,
)
from providers.errors import BadRequest, ProviderError
from providers.http_errors import error_for_status
from providers.interface import DEFAULT_TIMEOUT_S, ChatRequest, ChatResponse, Usage
from providers.sdk_model import SdkApi, SdkChatModel
from providers.usage import token_count

PATH = "/v1/messages"
_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                 "permission_error": 403, "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
                 "api_error": 500, "overloaded_error": 529}
"""The HTTP status of each Anthropic error type: a batch result carries the type, not the status."""
API_VERSION = "2023-06-01"
"""The `anthropic-version` header the aiohttp transport sends (the SDK sends its own, the same today)."""


def error_details(body: Any) -> tuple[str, bool]:
    """The message of an Anthropic error body (`{"type": "error", "error": {"type", "message"}}`), and whether it
    is a context-window error."""
    error = body.get("error") if isinstance(body, dict) else None
    message = str(error.get("message") or "") if isinstance(error, dict) else ""
    # Anthropic reports an over-long prompt as a 400 invalid_request_error "prompt is too long: N tokens > M"
    return message, "prompt is too long" in message


class AnthropicMessages(SdkChatModel[anthropic.AsyncAnthropic]):
    """A `ChatModel` speaking the Anthropic Messages API (see `SdkChatModel` for the arguments they share).

    Args:
        base_url: another endpoint (a proxy, the mock server); None for api.anthropic.com.
        default_max_tokens: sent when the request leaves `max_tokens` unset (the Messages API requires one).
    """

    api = SdkApi(anthropic, anthropic.AsyncAnthropic, PATH, "request-id", ("model", "messages", "max_tokens"),
                 error_details)

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, provider: str = "anthropic",
                 timeout_s: float = DEFAULT_TIMEOUT_S, default_max_tokens: int = 4096, transport: str = "sdk",
                 pool_size: int = 100) -> None:
        super().__init__(model, provider=provider, api_key=api_key, base_url=base_url, timeout_s=timeout_s,
                         transport=transport, pool_size=pool_size)
        self._default_max_tokens = default_max_tokens

    def _create(self, client: anthropic.AsyncAnthropic) -> Callable[..., Awaitable[Any]]:
        return client.messages.with_raw_response.create

    def _headers(self, api_key: str, basic_auth: str | None) -> dict[str, str]:
        basic = {"Authorization": basic_auth} if basic_auth else {}  # URL credentials: a proxy's
        return {"x-api-key": api_key, "anthropic-version": API_VERSION, **basic}

    # -- Message Batches (providers.batching.BatchModel) -----------------------------------------------------------
    max_batch_requests = ANTHROPIC_MAX_REQUESTS
    max_batch_bytes = ANTHROPIC_MAX_BYTES
    finds_batches = False

    async def submit_batch(self, requests: Sequence[tuple[str, ChatRequest]], *, tag: str) -> str:
        """Creates a message batch of the requests (`tag` is not sent: the API keeps no metadata)."""
        with self._sdk_errors():
            batch = await self._client.messages.batches.create(requests=[
                {"custom_id": custom_id, "params": self._body(request)}  # type: ignore[typeddict-item]  # our dict
                for custom_id, request in requests])
        return batch.id

    async def find_batch(self, tag: str, *, since: float, custom_ids: Collection[str] = ()) -> str | None:
        """The message batch made since `since` (less a minute of clock skew) with exactly the requests `custom_ids`:
        a message batch keeps no metadata (`tag`) to find it by. An ended batch is matched by its results' custom_ids;
        one still running (its requests cannot be read yet) by its number of requests, when no other running batch
        of the window has as many. Were that one another's, none of ours would be among its results: they would be
        lost, unbilled, and sent again."""
        wanted = set(custom_ids)
        running: list[str] = []
        with self._sdk_errors():
            async for batch in self._client.messages.batches.list(limit=100):  # the newest first
                if batch.created_at.timestamp() < since - CLOCK_SKEW_S:
                    break
                if _total(batch.request_counts) != len(wanted):
                    continue
                if batch.processing_status != "ended":
                    running.append(batch.id)
                elif {entry.custom_id async for entry in await self._client.messages.batches.results(batch.id)} \
                        == wanted:
                    return batch.id
        return running[0] if len(running) == 1 else None

    async def batch_state(self, batch_id: str) -> BatchState:
        with self._sdk_errors():
            batch = await self._client.messages.batches.retrieve(batch_id)
        counts, total = batch.request_counts, _total(batch.request_counts)
        return BatchState(batch.processing_status == "ended", total - counts.processing, total)

    async def batch_results(self, batch_id: str, custom_ids: Collection[str]) -> dict[str, BatchResult]:
        """Streams the results file; each `succeeded` message is read as `complete` reads one (see `finish`)."""
        where = self._where
        found: dict[str, BatchResult] = {}
        with self._sdk_errors():
            async for entry in await self._client.messages.batches.results(batch_id):
                result, custom_id = entry.result, entry.custom_id
                if result.type == "succeeded":
                    try:
                        found[custom_id] = BatchResult(self._response(result.message.model_dump(), 0.0, None))
                    except ProviderError as exc:
                        found[custom_id] = BatchResult(error=exc)
                elif result.type == "errored":
                    body = result.error.model_dump()
                    message, too_long = error_details(body)
                    status = _ERROR_STATUS.get(str((body.get("error") or {}).get("type")), 500)
                    found[custom_id] = BatchResult(error=error_for_status(
                        status, message, headers={}, context_too_long=too_long, secret=self._wire.secret, **where))
        return lost(custom_ids, found, **where, why=f"expired, was cancelled or was not answered (batch {batch_id})")

    def finish(self, response: ChatResponse, request: ChatRequest) -> ChatResponse:
        """The answer cut at the whitespace-only stop sequences the API refuses, as `complete` cuts it."""
        return cut_at_stop(response, [stop for stop in request.stop if not stop.strip()])

    async def cancel_batch(self, batch_id: str) -> None:
        with self._sdk_errors():
            await self._client.messages.batches.cancel(batch_id)

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        turns = [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"]
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens if request.max_tokens is not None else self._default_max_tokens,
            # the Messages API refuses a request without a turn: system messages alone are sent as the user's
            "messages": turns or [{"role": "user", "content": system}],
        }
        if system and turns:
            body["system"] = system
        if sent := [stop for stop in request.stop if stop.strip()]:  # whitespace-only ones: `cut_at_stop`
            body["stop_sequences"] = sent
        # Sent only when set: Claude 5 models reject non-default sampling values. The Messages API has no `seed`;
        # it still keys the cache.
        body.update({name: value for name in ("temperature", "top_p") if (value := getattr(request, name)) is not None})
        body.update(request.extras)
        return body

    def _response(self, data: Any, latency_s: float, request_id: str | None) -> ChatResponse:
        try:
            content = data["content"]
            stop_reason = data.get("stop_reason")
            text = "".join(block["text"] for block in content if block.get("type") == "text")
            tokens, problem = self._usage(data)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise self._off_schema(f"{type(exc).__name__}: {exc}") from exc
        if stop_reason == "refusal":
            raise BadRequest(f"{self.provider}:{self.model}: the model refused (stop_reason 'refusal')", **self._where)
        return ChatResponse(text=text, finish_reason=stop_reason, usage=tokens, latency_s=latency_s,
                            request_id=request_id, usage_problem=problem)

    def _tokens(self, usage: Mapping[str, Any]) -> Usage:
        cache_read = token_count(usage, "cache_read_input_tokens", optional=True)
        cache_write = token_count(usage, "cache_creation_input_tokens", optional=True)
        # Usage.input_tokens counts every prompt token; Anthropic reports cache reads and writes apart.
        return Usage(input_tokens=token_count(usage, "input_tokens") + cache_read + cache_write,
                     cached_input_tokens=cache_read, output_tokens=token_count(usage, "output_tokens"))


def _total(counts: MessageBatchRequestCounts) -> int:
    """Requests in a message batch, whatever became of them."""
    return counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired


def cut_at_stop(response: ChatResponse, stops: list[str]) -> ChatResponse:
    """The reply cut before the first of `stops` it contains, finishing as `stop_sequence` (a stop the API would
    not take); unchanged when it contains none."""
    found = [position for stop in stops if (position := response.text.find(stop)) >= 0]
    if not found:
        return response
    return dataclasses.replace(response, text=response.text[:min(found)], finish_reason="stop_sequence")
