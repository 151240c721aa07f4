"""Anthropic Messages through the official `anthropic` SDK.

System messages become the `system=` parameter (the Messages API has no system role). The SDK's own retries are
off (`max_retries=0`): the gateway owns retries. Every SDK exception is translated in
`map_anthropic_errors()`; nothing above this module sees an `anthropic` type.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anthropic

from providers.errors import BadRequest, ServerError
from providers.http_errors import map_sdk_errors
from providers.interface import DEFAULT_TIMEOUT_S, ChatRequest, ChatResponse, Usage
from providers.keys import key_digest


def _status_details(exc: anthropic.APIStatusError) -> tuple[str, bool]:
    message = exc.api_message or exc.message
    # Anthropic reports an over-long prompt as a 400 invalid_request_error "prompt is too long: N tokens > M"
    return message, "prompt is too long" in message


@contextmanager
def map_anthropic_errors(provider: str, model: str, secret: str | None) -> Iterator[None]:
    """Translate `anthropic` SDK exceptions raised inside the block into `providers.errors` classes."""
    with map_sdk_errors(anthropic, provider=provider, model=model, secret=secret, status_details=_status_details):
        yield


class AnthropicMessages:
    """A `ChatModel` speaking the Anthropic Messages API.

    Args:
        model: model id sent to the API, e.g. `claude-sonnet-4-5`.
        api_key: the key; kept out of `repr` and error messages.
        base_url: another endpoint (a proxy, the mock server); None for api.anthropic.com.
        timeout_s: per-request timeout; a timeout raises `ProviderTimeout`.
        default_max_tokens: sent when the request leaves `max_tokens` unset (the Messages API requires one).
    """

    provider = "anthropic"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 default_max_tokens: int = 4096) -> None:
        self.model = model
        self._api_key = api_key
        self._client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0,
                                                timeout=timeout_s)
        self.endpoint = str(self._client.base_url)
        """Base URL the requests go to: part of a call's identity for the cache."""
        self.api_key_id = key_digest(api_key)
        """Fingerprint of the key (never the key): tells rate-limit buckets of different keys apart."""
        self._default_max_tokens = default_max_tokens

    def __repr__(self) -> str:
        return f"AnthropicMessages(model={self.model!r}, endpoint={self.endpoint!r})"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one Messages request (see `ChatModel.complete`)."""
        started = time.perf_counter()
        with map_anthropic_errors(self.provider, self.model, self._api_key):
            message = await self._client.messages.create(**self._arguments(request))
        return self._response(message, time.perf_counter() - started)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        arguments: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens if request.max_tokens is not None else self._default_max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"],
        }
        if system:
            arguments["system"] = system
        if request.stop:
            arguments["stop_sequences"] = list(request.stop)
        # anthropic SDK 2.x dropped temperature/top_p from create()'s signature (Claude 5 models reject non-default
        # sampling values); the models before them still take both, so they travel in the body as-is. The Messages
        # API has no `seed`; it still keys the cache.
        body = {name: value for name in ("temperature", "top_p") if (value := getattr(request, name)) is not None}
        body.update(request.extras)
        if body:
            arguments["extra_body"] = body
        return arguments

    def _response(self, message: Any, latency_s: float) -> ChatResponse:
        where = {"provider": self.provider, "model": self.model}
        content = getattr(message, "content", None)
        if content is None:
            raise ServerError(f"{self.provider}:{self.model}: response has no content", **where)
        if message.stop_reason == "refusal":
            raise BadRequest(f"{self.provider}:{self.model}: the model refused (stop_reason 'refusal')", **where)
        usage = getattr(message, "usage", None)
        cache_read = getattr(usage, "cache_read_input_tokens", 0) or 0
        cache_write = getattr(usage, "cache_creation_input_tokens", 0) or 0
        return ChatResponse(
            text="".join(block.text for block in content if getattr(block, "type", None) == "text"),
            finish_reason=message.stop_reason,
            # Usage.input_tokens counts every prompt token; Anthropic reports cache reads and writes apart.
            usage=Usage(
                input_tokens=(getattr(usage, "input_tokens", 0) or 0) + cache_read + cache_write,
                cached_input_tokens=cache_read,
                output_tokens=getattr(usage, "output_tokens", 0) or 0,
            ),
            latency_s=latency_s,
            request_id=getattr(message, "_request_id", None),
        )
