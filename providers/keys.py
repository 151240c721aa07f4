"""API keys: read from the environment, fingerprinted for identity, and never shown.

A key lives only inside the provider object (and its SDK client). Anything that needs to tell keys apart — the
gateway's rate-limit buckets, logs — uses `key_digest`; any text we raise passes through `redact`.
"""

from __future__ import annotations

import hashlib
import os
import re

from providers.errors import MissingAPIKey
from providers.urls import redact_urls

# Things that look like provider keys (OpenAI `sk-…`, `sk-proj-…`, Anthropic `sk-ant-…`): a server may echo
# (part of) the key it was sent, as OpenAI's 401 "Incorrect API key provided: sk-…" does.
_KEY_LIKE = re.compile(r"sk-[A-Za-z0-9_\-*.]{3,}")


def api_key_from_env(variable: str, *, provider: str, model: str) -> str:
    """The key in environment variable `variable`; `MissingAPIKey` (naming the variable) if unset or empty."""
    key = os.environ.get(variable, "")
    if not key:
        raise MissingAPIKey(variable, provider=provider, model=model)
    return key


def key_digest(key: str) -> str:
    """A short, stable fingerprint of a key (12 hex digits of its sha256): safe to log and to key buckets by."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def redact(text: str, secret: str | None = None) -> str:
    """Remove `secret`, anything shaped like an API key and the credentials of any URL from `text` (messages we
    raise may be logged)."""
    if secret:
        text = text.replace(secret, "[redacted]")
    return redact_urls(_KEY_LIKE.sub("[redacted]", text))
