"""OpenAI Chat Completions through the official `openai` SDK or aiohttp; a base URL makes it any compatible server.

This module knows the protocol (the JSON body of a request, the JSON of an answer and of an error); what every SDK
provider shares (the client, `complete`) is `providers.sdk_model`'s, and the transport (`providers.transport`) moves
the JSON and raises our error classes, so nothing above this module sees an `openai` or `aiohttp` type.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Literal

import openai
import orjson

from errors import UserError
from providers.batching import CLOCK_SKEW_S, OPENAI_MAX_BYTES, OPENAI_MAX_REQUESTS, BatchResult, BatchState, lost
from providers.errors import BadRequest, ProviderError
from providers.http_errors import error_for_status, map_sdk_errors
from providers.interface import DEFAULT_TIMEOUT_S, ChatRequest, ChatResponse, Usage
from providers.sdk_model import SdkApi, SdkChatModel
from providers.transport import json_or_none
from providers.urls import Endpoint, public_url
from providers.usage import UntrustedUsage, token_count

log = logging.getLogger(__name__)

PATH = "/chat/completions"
BATCH_URL: Literal["/v1/chat/completions"] = "/v1/chat/completions"
"""The `url` of every line of a batch input file (OpenAI's path, whatever the base URL)."""
_BATCH_ENDED = ("completed", "failed", "expired", "cancelled")
SLOTS_TIMEOUT_S = 2.0
"""How long a server is given to say its slots (`OpenAIChat.declared_slots`): a local server answers at once."""


_CONTEXT_WORDING = re.compile(r"maximum context length|context_length_exceeded|exceeds? the available context size|"
                              r"exceed_context_size_error|greater than the context length", re.IGNORECASE)
"""How servers say a prompt does not fit: OpenAI, vLLM and llama-cpp-python ("This model's maximum context length is
N tokens..."), llama.cpp's llama-server ("the request exceeds the available context size", type
`exceed_context_size_error`), LM Studio ("... is greater than the context length")."""


def error_details(body: Any) -> tuple[str, bool]:
    """The message of an OpenAI error body (`{"error": {"message", "code", "type"}}`, or those fields at the top as
    older vLLM sends them), and whether it is a context-window error."""
    error = body.get("error", body) if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or "")
    said = f"{message} {error.get('code')} {error.get('type')}"
    return message, bool(_CONTEXT_WORDING.search(said))


def served_model(base_url: str, *, api_key: str, timeout_s: float) -> str:
    """The one model an OpenAI-compatible server serves (`GET /models`), for a model string that names none
    (`openai-compatible:@http://HOST:PORT/v1`).

    Raises:
        UserError: the server cannot be asked, or serves no model or several (they are listed).
    """
    target = Endpoint.parse(base_url)
    where = f"openai-compatible:@{public_url(base_url)}"
    client = openai.OpenAI(api_key=api_key, base_url=target.url, max_retries=0, timeout=timeout_s,
                           default_query=target.query or None,
                           default_headers={"Authorization": target.basic_auth} if target.basic_auth else None)
    try:
        with client, map_sdk_errors(openai, provider="openai-compatible", model="", secret=api_key,
                                    status_details=lambda exc: error_details(json_or_none(exc.response.content))):
            names = [model.id for model in client.models.list()]
    except ProviderError as exc:
        raise UserError(f"{where}: no model named, and the server's list of models could not be read ({exc}); "
                        "name one: openai-compatible:NAME@URL") from None
    if len(names) != 1:
        listed = ", ".join(names) if names else "none"
        raise UserError(f"{where}: no model named, and the server serves {len(names)} ({listed}); "
                        "name one: openai-compatible:NAME@URL")
    return names[0]


class OpenAIChat(SdkChatModel[openai.AsyncOpenAI]):
    """A `ChatModel` speaking OpenAI Chat Completions (see `SdkChatModel` for the arguments they share).

    Args:
        base_url: an OpenAI-compatible server (vLLM, Ollama, the mock server); None for api.openai.com.
        provider: name used in errors and logs (`openai` or `openai-compatible`).
        max_tokens_field: `max_completion_tokens` (OpenAI's current name, required by reasoning models) or
            `max_tokens` (what vLLM and Ollama read).
    """

    api = SdkApi(openai, openai.AsyncOpenAI, PATH, "x-request-id", ("model", "messages"), error_details)

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, provider: str = "openai",
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_tokens_field: str = "max_completion_tokens",
                 transport: str = "sdk", pool_size: int = 100) -> None:
        super().__init__(model, provider=provider, api_key=api_key, base_url=base_url, timeout_s=timeout_s,
                         transport=transport, pool_size=pool_size)
        self._max_tokens_field = max_tokens_field

    async def declared_slots(self) -> int | None:
        """Requests a compatible server says it works on at once: llama.cpp's `llama-server` gives its `--parallel`
        slots as `total_slots` in `GET /props` (at the root, beside `/v1`), asked as the chat requests are sent (the
        same transport, credentials and proxies). None when it says nothing (vLLM, Ollama; api.openai.com is not
        asked) or cannot be asked within `SLOTS_TIMEOUT_S`: the question is never an error."""
        if self.provider != "openai-compatible":
            return None
        root = re.sub(r"/v1$", "", str(self._client.base_url).rstrip("/"), flags=re.IGNORECASE)
        try:
            async with asyncio.timeout(SLOTS_TIMEOUT_S):
                slots = orjson.loads(await self._transport.fetch(f"{root}/props")).get("total_slots")
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the server said nothing
            log.debug("%s: no slots said (%s)", self.endpoint, type(exc).__name__)
            return None
        return slots if type(slots) is int and slots > 0 else None  # untrusted: a bool or a float is no count

    def _create(self, client: openai.AsyncOpenAI) -> Callable[..., Awaitable[Any]]:
        return client.chat.completions.with_raw_response.create

    def _headers(self, api_key: str, basic_auth: str | None) -> dict[str, str]:
        # Credentials in the URL are HTTP Basic auth (a proxy in front of a local server), sent instead of the key.
        return {"authorization": basic_auth or f"Bearer {api_key}"}

    # -- the Batch API (providers.batching.BatchModel) ---------------------------------------------------------------
    max_batch_requests = OPENAI_MAX_REQUESTS
    max_batch_bytes = OPENAI_MAX_BYTES
    finds_batches = True

    async def submit_batch(self, requests: Sequence[tuple[str, ChatRequest]], *, tag: str) -> str:
        """Uploads the requests as a JSONL file (`purpose="batch"`) and creates a 24 h batch of it."""
        lines = b"".join(orjson.dumps({"custom_id": custom_id, "method": "POST", "url": BATCH_URL,
                                       "body": self._body(request)}) + b"\n" for custom_id, request in requests)
        with self._sdk_errors():
            upload = await self._client.files.create(file=(f"{tag}.jsonl", lines), purpose="batch")
            batch = await self._client.batches.create(input_file_id=upload.id, endpoint=BATCH_URL,
                                                      completion_window="24h", metadata={"tripbench": tag})
        return batch.id

    async def find_batch(self, tag: str, *, since: float, custom_ids: Collection[str] = ()) -> str | None:
        """The batch whose metadata carries `tag`, read from the newest back to those created a minute (of clock
        skew) before `since`: however many batches the project made meanwhile."""
        with self._sdk_errors():
            async for batch in self._client.batches.list(limit=100):
                if (batch.metadata or {}).get("tripbench") == tag:
                    return batch.id
                if batch.created_at < since - CLOCK_SKEW_S:
                    break
        return None

    async def batch_state(self, batch_id: str) -> BatchState:
        with self._sdk_errors():
            batch = await self._client.batches.retrieve(batch_id)
        counts = batch.request_counts
        return BatchState(batch.status in _BATCH_ENDED, (counts.completed + counts.failed) if counts else 0,
                          counts.total if counts else 0)

    async def batch_results(self, batch_id: str, custom_ids: Collection[str]) -> dict[str, BatchResult]:
        """Reads the batch's output and error files; a request in neither expired with the batch or never ran."""
        with self._sdk_errors():
            batch = await self._client.batches.retrieve(batch_id)
            found: dict[str, BatchResult] = {}
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    content = await self._client.files.content(file_id)
                    for line in content.content.splitlines():
                        found.update(self._batch_line(line))
        return lost(custom_ids, found, provider=self.provider, model=self.model, why=f"was not answered "
                    f"(batch {batch_id} {batch.status})")

    async def cancel_batch(self, batch_id: str) -> None:
        with self._sdk_errors():
            await self._client.batches.cancel(batch_id)

    def _batch_line(self, line: bytes) -> dict[str, BatchResult]:
        """One line of an output or error file, as {custom_id: result} (empty for a line we cannot read)."""
        try:
            item = orjson.loads(line)
            custom_id = str(item["custom_id"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return {}
        where = self._where
        response, error = item.get("response"), item.get("error")
        if not isinstance(response, dict):
            code = error.get("code") if isinstance(error, dict) else None
            return lost([custom_id], {}, **where, why=f"ended as {code}")
        status, body = response.get("status_code"), response.get("body")
        request_id = response.get("request_id")
        if not isinstance(status, int):
            return lost([custom_id], {}, **where, why="has a result without a status")
        try:
            if status == 200:
                return {custom_id: BatchResult(self._response(body, 0.0, request_id))}
            message, too_long = error_details(body)
            failure: ProviderError = error_for_status(status, message, headers={}, context_too_long=too_long,
                                                      secret=self._wire.secret, **where)
        except ProviderError as exc:
            failure = exc
        return {custom_id: BatchResult(error=failure)}

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        for name in ("temperature", "top_p", "seed"):
            if (value := getattr(request, name)) is not None:
                body[name] = value
        if request.max_tokens is not None:
            body[self._max_tokens_field] = request.max_tokens
        if request.stop:
            body["stop"] = list(request.stop)
        body.update(request.extras)  # sent as-is: a server's own sampling fields
        return body

    def _response(self, data: Any, latency_s: float, request_id: str | None) -> ChatResponse:
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            finish = choice.get("finish_reason")
            tokens, problem = self._usage(data)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise self._off_schema(f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(text, str):
            raise self._off_schema("message content is not text")
        if finish == "content_filter":
            raise BadRequest(f"{self.provider}:{self.model}: the completion was stopped by the content filter",
                             **self._where)
        return ChatResponse(text=text, finish_reason=finish, usage=tokens, latency_s=latency_s,
                            request_id=request_id, usage_problem=problem)

    def _tokens(self, usage: Mapping[str, Any]) -> Usage:
        details = usage.get("prompt_tokens_details")
        cached = token_count(details, "cached_tokens", optional=True) if isinstance(details, dict) else 0
        tokens = Usage(input_tokens=token_count(usage, "prompt_tokens"), cached_input_tokens=cached,
                       output_tokens=token_count(usage, "completion_tokens"))
        if tokens.cached_input_tokens > tokens.input_tokens:
            raise UntrustedUsage("usage.prompt_tokens_details.cached_tokens is more than usage.prompt_tokens")
        return tokens
