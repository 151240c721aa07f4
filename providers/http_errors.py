"""HTTP failures -> our error tree: the status table both SDK adapters share, Retry-After parsing, key redaction.

Each provider module catches its SDK's exceptions in one context manager (httpx's `map_httpcore_exceptions()`
idiom) and hands the status, headers and server message here, so the two wire protocols classify alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone

from providers.errors import (
    AuthError,
    BadRequest,
    ContextTooLong,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ServerError,
)

# Things that look like provider keys (OpenAI `sk-…`, `sk-proj-…`, Anthropic `sk-ant-…`): a server may echo
# (part of) the key it was sent, as OpenAI's 401 "Incorrect API key provided: sk-…" does.
_KEY_LIKE = re.compile(r"sk-[A-Za-z0-9_\-*.]{3,}")
_MAX_MESSAGE = 300


def redact(text: str, secret: str | None = None) -> str:
    """Remove `secret` and anything shaped like an API key from `text` (messages we raise may be logged)."""
    if secret:
        text = text.replace(secret, "[redacted]")
    return _KEY_LIKE.sub("[redacted]", text)


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
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


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
    where = {"status": status, "provider": provider, "model": model}
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
