"""Cache keys: sha256 over the canonical JSON of exactly the fields that can change a completion.

The key is built from an allow-list (docs/architecture.md §3.1), never by dumping a request and deleting what
should not count: a new field stays out of the key until someone decides it belongs there (and bumps the scheme,
which the golden digests in tests/cache/test_keys_golden.py make a deliberate act). API keys, timeouts, retry and
concurrency settings and expiry are not fields of `ChatRequest` at all, so they cannot leak in.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from providers.interface import ChatRequest

KEY_SCHEME = "v1"
"""Version of the key recipe below; stored in every cache directory. Change the recipe, bump this."""

REQUEST_FIELDS_IN_KEY = ("messages", "temperature", "top_p", "max_tokens", "stop", "seed", "sample", "extras")
"""The `ChatRequest` fields that go into the key as they are."""

REQUEST_FIELDS_REPLACED = ("model",)
"""The user's model string is replaced by what it resolves to (provider, model id, endpoint), so two spellings of
one model share entries and one spelling pointed at two servers does not."""


def _number(value: float | None) -> float | None:
    # `temperature=1` and `temperature=1.0` are one setting; orjson would write them as `1` and `1.0`.
    return None if value is None else float(value)


def key_fields(request: ChatRequest, *, provider: str, resolved_model: str, endpoint: str | None) -> dict[str, Any]:
    """The output-changing fields of one call, as the plain dict that gets hashed.

    Args:
        request: The request as an agent made it.
        provider: Provider family, e.g. `openai`, `anthropic`, `openai-compatible`.
        resolved_model: The model id sent on the wire, e.g. `gpt-4o-mini`.
        endpoint: Identity of the server (its base URL) where it is not the provider's default, else None.

    Returns:
        A JSON-ready dict; `cache explain` shows it and diffs it against stored entries.
    """
    return {
        "provider": provider,
        "model": resolved_model,
        "endpoint": endpoint,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": _number(request.temperature),
        "top_p": _number(request.top_p),
        "max_tokens": request.max_tokens,
        "stop": list(request.stop),
        "seed": request.seed,
        "sample": request.sample,
        "extras": dict(request.extras),
    }


def digest(fields: dict[str, Any]) -> str:
    """The key of an already-built field dict: `v1:` + sha256 of its canonical (sorted-keys) JSON."""
    canonical = orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
    return f"{KEY_SCHEME}:{hashlib.sha256(canonical).hexdigest()}"


def cache_key(request: ChatRequest, *, provider: str, resolved_model: str, endpoint: str | None) -> str:
    """The cache key of one call; pure, stable across releases and machines.

    Args:
        request: The request as an agent made it.
        provider: Provider family, e.g. `openai`.
        resolved_model: The model id sent on the wire.
        endpoint: Base URL of an OpenAI-compatible server, else None.

    Returns:
        `v1:<64 hex digits>`.
    """
    return digest(key_fields(request, provider=provider, resolved_model=resolved_model, endpoint=endpoint))
