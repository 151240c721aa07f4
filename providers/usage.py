"""Reading the token counts a provider reports, which are as untrusted as the text beside them.

A count that is missing, null, not an integer, negative or beyond any real request is not read as 0 (a call that
costs nothing would let spend pass the cap) nor stored (1e30 does not fit an SQLite INTEGER): the reply is kept and
marked with what was wrong (`ChatResponse.usage_problem`), and the gateway charges the call at its worst case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_TOKENS = 100_000_000
"""More tokens than any one call reports (context windows are ~10^6): a larger count is a lie, and every count at
most this fits wherever it is stored."""


class UntrustedUsage(ValueError):
    """A reply's usage says something impossible; the message says what."""


def usage_object(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The reply's `usage` object.

    Raises:
        UntrustedUsage: it is missing, null or not an object.
    """
    usage = data.get("usage")
    if not isinstance(usage, Mapping):
        raise UntrustedUsage("usage missing" if usage is None else f"usage is not an object ({_show(usage)})")
    return usage


def token_count(usage: Mapping[str, Any], name: str, *, optional: bool = False) -> int:
    """`usage[name]` as a count of tokens; an optional field may be missing or null (0).

    Raises:
        UntrustedUsage: the field is missing (and required), not an integer, negative or over `MAX_TOKENS`.
    """
    value = usage.get(name)
    if value is None:
        if optional:
            return 0
        raise UntrustedUsage(f"usage.{name} missing")
    if isinstance(value, bool) or not isinstance(value, int):
        raise UntrustedUsage(f"usage.{name} is not an integer ({_show(value)})")
    if not 0 <= value <= MAX_TOKENS:
        raise UntrustedUsage(f"usage.{name} is out of range ({_show(value)})")
    return value


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
