"""What the two wire protocols share: the `Wire` shape the app drives, and message parsing."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Protocol

from providers.interface import Message
from providers.scripted_replies import Completion, MockRequest


class Wire(Protocol):
    """One wire protocol: where it is served, how it names keys and request ids, its bodies."""

    api: str
    path: str
    request_id_header: str

    def api_key(self, headers: Mapping[str, str]) -> str | None: ...
    def parse(self, body: Mapping[str, Any]) -> MockRequest: ...
    def success(self, request: MockRequest, completion: Completion, number: int) -> dict[str, Any]: ...
    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]: ...
    def context_error(self, prompt_tokens: int, window: int, wording: str) -> dict[str, Any]: ...


class WireError(ValueError):
    """The request body does not follow the protocol: answered with a 400."""


def text_of(content: object, where: str) -> str:
    """A message's text: a string, or a list of `{"type": "text", "text": ...}` parts (both protocols)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in content):
        return "".join(p["text"] for p in content)
    raise WireError(f"{where}: expected a string or a list of text parts")


def model_of(body: Mapping[str, Any]) -> str:
    """`body["model"]`, after refusing what the mock server does not do (streaming)."""
    if not isinstance(body.get("model"), str):
        raise WireError("model: expected a string")
    if body.get("stream"):
        raise WireError("stream: streaming is not supported by the mock server")
    return str(body["model"])


def messages_of(body: Mapping[str, Any], roles: tuple[str, ...]) -> list[Message]:
    """`body["messages"]` checked and converted (both protocols)."""
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise WireError("messages: expected a non-empty list")
    messages = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or item.get("role") not in roles:
            raise WireError(f"messages[{i}].role: expected one of {', '.join(roles)}")
        messages.append(Message(item["role"], text_of(item.get("content"), f"messages[{i}].content")))
    return messages


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an `Authorization: Bearer …` header, or the `user:password` of a `Basic …` one (what a proxy in
    front of a local server checks)."""
    scheme, _, token = headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(token.strip(), validate=True).decode() or None
        except (ValueError, UnicodeDecodeError):
            return None
    return (token.strip() or None) if scheme.lower() == "bearer" else None
