"""OpenAI Chat Completions through the official `openai` SDK or aiohttp; a base URL makes it any compatible server.

This module knows the protocol (the JSON body of a request, the JSON of an answer and of an error); the transport
(`providers.transport`) moves it and raises our error classes, so nothing above this module sees an `openai` or
`aiohttp` type. The SDK's own retries are off (`max_retries=0`): the gateway owns retries, so they never multiply.
"""

from __future__ import annotations

import time
from typing import Any

import openai

from providers.errors import BadRequest, ServerError, Where
from providers.interface import DEFAULT_TIMEOUT_S, ChatRequest, ChatResponse, Usage
from providers.keys import key_digest
from providers.transport import AiohttpTransport, SdkTransport, Transport, Wire
from providers.urls import Endpoint

PATH = "/chat/completions"


def error_details(body: Any) -> tuple[str, bool]:
    """The message of an OpenAI error body (`{"error": {"message", "code"}}`), and whether it is a context-window
    error."""
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or "")
    return message, error.get("code") == "context_length_exceeded" or "maximum context length" in message


class OpenAIChat:
    """A `ChatModel` speaking OpenAI Chat Completions.

    Args:
        model: model id sent to the API, e.g. `gpt-4o-mini`.
        api_key: the key; kept out of `repr` and error messages.
        base_url: an OpenAI-compatible server (vLLM, Ollama, the mock server); None for api.openai.com.
        provider: name used in errors and logs (`openai` or `openai-compatible`).
        timeout_s: per-request timeout; a timeout raises `ProviderTimeout`.
        max_tokens_field: `max_completion_tokens` (OpenAI's current name, required by reasoning models) or
            `max_tokens` (what vLLM and Ollama read).
        transport: `sdk` (the `openai` SDK's client) or `aiohttp`.
        pool_size: connections to the server at most (aiohttp; the SDK keeps its own pool).
    """

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, provider: str = "openai",
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_tokens_field: str = "max_completion_tokens",
                 transport: str = "sdk", pool_size: int = 100) -> None:
        self.model = model
        self.provider = provider
        wire = Wire(provider, model, "x-request-id", error_details, api_key)
        target = Endpoint.parse(base_url or "")
        # Credentials in the URL are HTTP Basic auth (a proxy in front of a local server), sent instead of the key.
        authorization = target.basic_auth or f"Bearer {api_key}"
        client = openai.AsyncOpenAI(api_key=api_key, base_url=target.url or None, max_retries=0, timeout=timeout_s,
                                    default_query=target.query or None,
                                    default_headers={"Authorization": authorization} if target.basic_auth else None)
        self.endpoint = target.identity(str(client.base_url))
        """The server's identity in cache keys and rate-limit buckets: its base URL without credentials."""
        self._transport: Transport
        if transport == "sdk":
            create = client.chat.completions.with_raw_response.create
            self._transport = SdkTransport(client, create, ("model", "messages"), openai, wire)
        else:
            self._transport = AiohttpTransport(str(client.base_url).rstrip("/") + PATH,
                                               {"authorization": authorization}, wire, timeout_s=timeout_s,
                                               pool_size=pool_size, query=target.query)
        self.transport = transport
        self.api_key_id = key_digest(api_key)
        """Fingerprint of the key (never the key): tells rate-limit buckets of different keys apart."""
        self._max_tokens_field = max_tokens_field

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r}, endpoint={self.endpoint!r}, transport={self.transport!r})"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one Chat Completions request (see `ChatModel.complete`)."""
        started = time.perf_counter()
        reply = await self._transport.send(self._body(request))
        return self._response(reply.data, time.perf_counter() - started, reply.request_id)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._transport.aclose()

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
        where: Where = {"provider": self.provider, "model": self.model}
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            finish = choice.get("finish_reason")
            usage = data.get("usage") or {}
            details = usage.get("prompt_tokens_details") or {}
            tokens = Usage(input_tokens=int(usage.get("prompt_tokens") or 0),
                           cached_input_tokens=int(details.get("cached_tokens") or 0),
                           output_tokens=int(usage.get("completion_tokens") or 0))
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise ServerError(f"{self.provider}:{self.model}: response does not match the API schema "
                              f"({type(exc).__name__}: {exc})", **where) from exc
        if not isinstance(text, str):
            raise ServerError(f"{self.provider}:{self.model}: response does not match the API schema "
                              "(message content is not text)", **where)
        if finish == "content_filter":
            raise BadRequest(f"{self.provider}:{self.model}: the completion was stopped by the content filter",
                             **where)
        return ChatResponse(text=text, finish_reason=finish, usage=tokens, latency_s=latency_s,
                            request_id=request_id)
