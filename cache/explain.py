"""Why a request did (not) hit: the fields that made its key, and the nearest stored entry with what differs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from cache.keys import digest
from cache.store import CacheStore
from errors import DataError
from providers.interface import ChatRequest, Message

# field -> (accepted JSON types, what the error message calls them)
_REQUEST_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "model": ((str,), "a model string such as openai:gpt-4o-mini"),
    "messages": ((list,), "a list of {role, content} objects"),
    "temperature": ((int, float), "a number"),
    "top_p": ((int, float), "a number"),
    "max_tokens": ((int,), "an integer"),
    "stop": ((list,), "a list of strings"),
    "seed": ((int,), "an integer"),
    "sample": ((int,), "an integer"),
    "extras": ((dict,), "an object of provider sampling fields"),
}


@dataclass(frozen=True, slots=True)
class Explanation:
    """What `tripbench cache explain` prints."""

    key: str
    fields: dict[str, Any]
    stored: bool
    """An entry exists under `key`."""
    nearest_key: str | None
    """The stored entry sharing the most fields with this request (None when the cache is empty or `stored`)."""
    nearest_fields: dict[str, Any] | None
    """That entry's key fields."""
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
            return Explanation(key, fields, True, None, None, ())
        distance = _distance(fields, entry.fields)
        if nearest is None or distance < nearest[0]:
            nearest = (distance, stored_key, entry.fields)
    if nearest is None:
        return Explanation(key, fields, False, None, None, ())
    _, nearest_key, nearest_fields = nearest
    differing = tuple(sorted(n for n in fields.keys() | nearest_fields.keys()
                             if fields.get(n) != nearest_fields.get(n)))
    return Explanation(key, fields, False, nearest_key, nearest_fields, differing)


def load_request(path: str | os.PathLike[str]) -> ChatRequest:
    """Read a request from a JSON file: `{"model": ..., "messages": [{"role": ..., "content": ...}], ...}`.

    Optional fields are those of `ChatRequest` (`temperature`, `top_p`, `max_tokens`, `stop`, `seed`, `sample`,
    `extras`).

    Args:
        path: The JSON file (a `str` from a notebook works as well as a `Path`).

    Raises:
        DataError: Unreadable JSON, a missing or unknown field, or a value of the wrong type, naming the file and
            the field.
    """
    path = Path(path)
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read a JSON request: {exc}") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if unknown := sorted(data.keys() - _REQUEST_FIELDS.keys()):
        raise DataError(f"{path}: {unknown[0]}: unknown field; expected one of {', '.join(_REQUEST_FIELDS)}")
    for name in ("model", "messages"):
        if name not in data:
            raise DataError(f"{path}: {name}: missing")
    for name, value in data.items():
        types, expected = _REQUEST_FIELDS[name]
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            raise DataError(f"{path}: {name}: expected {expected}, got {value!r}")
    messages = []
    for i, message in enumerate(data["messages"]):
        if not (isinstance(message, dict) and isinstance(message.get("role"), str)
                and isinstance(message.get("content"), str)):
            raise DataError(f"{path}: messages[{i}]: expected {{role, content}} strings, got {message!r}")
        messages.append(Message(message["role"], message["content"]))
    if not all(isinstance(s, str) for s in data.get("stop") or ()):
        raise DataError(f"{path}: stop: expected a list of strings, got {data['stop']!r}")
    return ChatRequest(
        model=data["model"], messages=tuple(messages), temperature=data.get("temperature"),
        top_p=data.get("top_p"), max_tokens=data.get("max_tokens"), stop=tuple(data.get("stop") or ()),
        seed=data.get("seed"), sample=data.get("sample") or 0, extras=tuple(sorted((data.get("extras") or {}).items())),
    )
