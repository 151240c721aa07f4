"""Usage a hostile or broken server reports: the mock bills the true counts (its tally) and tells a lie on the wire.

Each lie replaces the `usage` of a successful reply, in either protocol: `missing` drops it, `null` sends null, and
`negative`, `huge` (1e30), `overflow` (10^19, an integer past SQLite's), `fraction` (12.5) and `text` ("12") replace
every count in it.
"""

from __future__ import annotations

from typing import Any, Literal

UsageLie = Literal["honest", "missing", "null", "negative", "huge", "overflow", "fraction", "text"]

_COUNTS: dict[str, Any] = {"negative": -10_000_000, "huge": 1e30, "overflow": 10**19, "fraction": 12.5, "text": "12"}


def tell(body: dict[str, Any], lie: UsageLie) -> dict[str, Any]:
    """The reply `body` with its usage replaced by `lie` (unchanged when `honest`)."""
    if lie == "honest":
        return body
    if lie == "missing":
        return {name: value for name, value in body.items() if name != "usage"}
    if lie == "null":
        return {**body, "usage": None}
    return {**body, "usage": _replaced(body["usage"], _COUNTS[lie])}


def _replaced(usage: dict[str, Any], count: Any) -> dict[str, Any]:
    return {name: _replaced(value, count) if isinstance(value, dict) else count for name, value in usage.items()}
