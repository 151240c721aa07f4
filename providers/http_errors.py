"""HTTP failures -> our error tree: the SDK exception ladder and status table both adapters share.

Each provider module translates its SDK's exceptions in one context manager (httpx's
`map_httpcore_exceptions()` idiom) built on `map_sdk_errors` here, so the two wire protocols classify alike:
429 -> RateLimited (Retry-After honoured), 5xx / dropped connection / malformed JSON -> ServerError, timeouts ->
ProviderTimeout, 401/402/403 -> AuthError, other 4xx -> BadRequest, an over-long prompt -> ContextTooLong; the HTTP
library's (httpx) own errors, which escape the SDKs while a streamed body is read, as timeouts and dropped
connections.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import Any

from providers.errors import (
    AuthError,
    BadRequest,
    ContextTooLong,
    NotSent,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ServerError,
    Where,
    WhereStatus,
)
from providers.keys import redact

_MAX_MESSAGE = 300
_HTTP_LIBRARIES = ("httpx", "httpx2")
"""The SDKs' HTTP client: httpx, named httpx2 in their latest releases."""


def _http_library_errors(name: str) -> tuple[type[BaseException], ...]:
    """The exception class `name` of each HTTP library the SDKs imported (they import theirs with themselves)."""
    return tuple(getattr(sys.modules[library], name) for library in _HTTP_LIBRARIES if library in sys.modules)


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI, Anthropic) or `retry-after` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def error_for_status(
    status: int,
    message: str,
    *,
    headers: Mapping[str, str],
    provider: str,
    model: str,
    context_too_long: bool = False,
    secret: str | None = None,
) -> ProviderError:
    """The error to raise for an HTTP error response.

    Args:
        status: HTTP status code.
        message: the server's error message (redacted and shortened here).
        headers: response headers (for Retry-After).
        provider: provider name for the error and its message.
        model: model id for the error and its message.
        context_too_long: the adapter recognised a context-window error in the body.
        secret: the API key used, removed from the message should the server echo it.

    Returns:
        An instance of the most specific class in `providers.errors` for this response.
    """
    text = redact(f"{provider}:{model}: HTTP {status}: {message}", secret)[:_MAX_MESSAGE]
    where: WhereStatus = {"status": status, "provider": provider, "model": model}
    if status == 429:
        return RateLimited(text, retry_after=retry_after_s(headers), **where)
    if context_too_long or status == 413:  # 413: the request body itself is too large to send
        return ContextTooLong(text, **where)
    if status in (401, 402, 403):  # 402: the account is out of credit, which no retry fixes either
        return AuthError(text, **where)
    if status == 408:
        return ProviderTimeout(text, **where)
    if status == 409 or status >= 500:  # 409: OpenAI's transient "conflict" (a lock timeout), retried by its SDK
        return ServerError(text, **where)
    return BadRequest(text, **where)


@contextmanager
def map_sdk_errors(sdk: ModuleType, *, provider: str, model: str, secret: str | None,
                   status_details: Callable[[Any], tuple[str, bool]]) -> Iterator[None]:
    """Translate the exceptions of `openai` or `anthropic` raised inside the block into our classes.

    Both official SDKs are generated from one template (Stainless) and share their exception classes' names and
    meaning, so one ladder serves both; what differs, reading an error response, is `status_details`.

    Args:
        sdk: the imported `openai` or `anthropic` module.
        provider: provider name for errors.
        model: model id for errors.
        secret: the API key, removed from messages should a server echo it.
        status_details: `APIStatusError -> (server message, is a context-window error)`.
    """
    where: Where = {"provider": provider, "model": model}
    try:
        yield
    except sdk.APIConnectionError as exc:  # refused, reset or dropped mid-response; APITimeoutError is one too
        if isinstance(exc.__cause__, _http_library_errors("ConnectError") + _http_library_errors("ConnectTimeout")):
            raise NotSent(redact(f"{provider}:{model}: connection failed, nothing sent: {exc.__cause__}", secret),
                          **where) from exc
        if isinstance(exc, sdk.APITimeoutError):
            raise ProviderTimeout(f"{provider}:{model}: request timed out", **where) from exc
        raise ServerError(redact(f"{provider}:{model}: connection failed: {exc.__cause__ or exc}", secret),
                          **where) from exc
    except sdk.APIStatusError as exc:
        message, too_long = status_details(exc)
        raise error_for_status(exc.status_code, message, headers=exc.response.headers, context_too_long=too_long,
                               secret=secret, **where) from exc
    except sdk.APIResponseValidationError as exc:
        raise ServerError(f"{provider}:{model}: response does not match the API schema", status=exc.status_code,
                          **where) from exc
    except json.JSONDecodeError as exc:  # the SDK's json.loads on a 200 body that is not JSON
        raise ServerError(f"{provider}:{model}: malformed JSON in response: {exc}", **where) from exc
    # The SDKs wrap the HTTP library's errors while sending; a body read as a stream afterwards (Anthropic's batch
    # results) raises them unwrapped, mid-way.
    except _http_library_errors("TimeoutException") as exc:
        raise ProviderTimeout(f"{provider}:{model}: reading the response timed out", **where) from exc
    except _http_library_errors("RequestError") as exc:  # a connection dropped mid-body, a body that did not decode
        raise ServerError(redact(f"{provider}:{model}: connection failed while reading the response: "
                                 f"{type(exc).__name__}: {exc}", secret), **where) from exc
