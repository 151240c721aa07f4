"""Why a request did (not) hit: the fields that made its key, and the nearest stored entry with what differs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cache.keys import digest
from cache.store import CacheStore


@dataclass(frozen=True, slots=True)
class Explanation:
    """What `tripbench cache explain` prints."""

    key: str
    fields: dict[str, Any]
    stored: bool
    """An entry exists under `key`."""
    nearest_key: str | None
    """The stored entry sharing the most fields with this request (None when the cache is empty or `stored`)."""
    differing: tuple[str, ...]
    """The key fields whose values differ from the nearest entry's."""


def _distance(a: dict[str, Any], b: dict[str, Any]) -> tuple[int, int]:
    # Differing top-level fields first; among equals, fewer differing messages is nearer.
    fields = sum(1 for name in a.keys() | b.keys() if a.get(name) != b.get(name))
    ma, mb = a.get("messages") or [], b.get("messages") or []
    messages = sum(1 for x, y in zip(ma, mb) if x != y) + abs(len(ma) - len(mb))
    return fields, messages


def explain(store: CacheStore, fields: dict[str, Any]) -> Explanation:
    """Explain the key of a request's fields against a cache directory.

    Args:
        store: The cache to look in (read-only use).
        fields: The request's key fields (`cache.keys.key_fields`).

    Returns:
        The key, whether it is stored, and otherwise the nearest entry and the fields that differ.
    """
    key = digest(fields)
    nearest: tuple[tuple[int, int], str, dict[str, Any]] | None = None
    for stored_key, entry in store.entries():
        if stored_key == key:
            return Explanation(key, fields, True, None, ())
        distance = _distance(fields, entry.fields)
        if nearest is None or distance < nearest[0]:
            nearest = (distance, stored_key, entry.fields)
    if nearest is None:
        return Explanation(key, fields, False, None, ())
    _, nearest_key, nearest_fields = nearest
    differing = tuple(sorted(n for n in fields.keys() | nearest_fields.keys() if fields.get(n) != nearest_fields.get(n)))
    return Explanation(key, fields, False, nearest_key, differing)
