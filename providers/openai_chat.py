"""OpenAI Chat Completions through the official `openai` SDK; a base URL makes it any compatible server.

The SDK's own retries are off (`max_retries=0`): the gateway owns retries, so they never multiply. Every SDK
exception is translated in `map_openai_errors()`; nothing above this module sees an `openai` type.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai

from providers.errors import BadRequest, ServerError
from providers.http_errors import map_sdk_errors
from providers.interface import DEFAULT_TIMEOUT_S, ChatRequest, ChatResponse, Usage
from providers.keys import key_digest


def _status_details(exc: openai.APIStatusError) -> tuple[str, bool]:
    body = exc.body if isinstance(exc.body, dict) else {}  # the SDK unwraps {"error": {...}} already
    message = str(body.get("message") or exc.message)
    return message, exc.code == "context_length_exceeded" or "maximum context length" in message


@contextmanager
def map_openai_errors(provider: str, model: str, secret: str | None) -> Iterator[None]:
    """Translate `openai` SDK exceptions raised inside the block into `providers.errors` classes."""
    with map_sdk_errors(openai, provider=provider, model=model, secret=secret, status_details=_status_details):
        yield


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
    """

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, provider: str = "openai",
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_tokens_field: str = "max_completion_tokens") -> None:
        self.model = model
        self.provider = provider
        self._api_key = api_key
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)
        self.endpoint = str(self._client.base_url)
        """Base URL the requests go to: part of a call's identity for the cache."""
        self.api_key_id = key_digest(api_key)
        """Fingerprint of the key (never the key): tells rate-limit buckets of different keys apart."""
        self._max_tokens_field = max_tokens_field

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r}, endpoint={self.endpoint!r})"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one Chat Completions request (see `ChatModel.complete`)."""
        started = time.perf_counter()
        with map_openai_errors(self.provider, self.model, self._api_key):
            completion = await self._client.chat.completions.create(**self._arguments(request))
        return self._response(completion, time.perf_counter() - started)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        for name in ("temperature", "top_p", "seed"):
            if (value := getattr(request, name)) is not None:
                arguments[name] = value
        if request.max_tokens is not None:
            arguments[self._max_tokens_field] = request.max_tokens
        if request.stop:
            arguments["stop"] = list(request.stop)
        if request.extras:  # sent as-is: the SDK need not know a server's own sampling fields
            arguments["extra_body"] = dict(request.extras)
        return arguments

    def _response(self, completion: Any, latency_s: float) -> ChatResponse:
        where = {"provider": self.provider, "model": self.model}
        choices = getattr(completion, "choices", None)
        if not choices:
            raise ServerError(f"{self.provider}:{self.model}: response has no choices", **where)
        choice = choices[0]
        if choice.finish_reason == "content_filter":
            raise BadRequest(f"{self.provider}:{self.model}: the completion was stopped by the content filter",
                             **where)
        usage = getattr(completion, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None)
        return ChatResponse(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            usage=Usage(
                input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                cached_input_tokens=getattr(details, "cached_tokens", 0) or 0,
                output_tokens=getattr(usage, "completion_tokens", 0) or 0,
            ),
            latency_s=latency_s,
            request_id=getattr(completion, "_request_id", None),
        )
