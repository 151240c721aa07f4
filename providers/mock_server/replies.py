"""What the mock server answers: a pluggable reply function of the request, then stop sequences and max_tokens.

A reply function takes a `MockRequest` and returns the reply text, or a `MockReply` to also report cached prompt
tokens or force a finish reason (e.g. `content_filter`). Name one in the config as `module:function` and agents
run through the real SDKs, over real HTTP, against scripted behaviour.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from errors import ConfigError
from providers.interface import Message
from providers.tokens import count_text_tokens, encoding


@dataclass(frozen=True, slots=True)
class MockRequest:
    """A chat request as the mock server understood it, whichever wire protocol carried it."""

    api: Literal["openai", "anthropic"]
    model: str
    messages: tuple[Message, ...]
    """Anthropic's `system=` arrives here as a leading `system` message."""
    max_tokens: int | None
    stop: tuple[str, ...]
    body: dict[str, Any]
    """The raw JSON body, for reply functions that need another field."""


@dataclass(frozen=True, slots=True)
class MockReply:
    """A reply with more than text."""

    text: str
    cached_input_tokens: int = 0
    """How many prompt tokens to report as read from the prompt cache."""
    finish_reason: str | None = None
    """Sent verbatim in the protocol's finish field instead of the computed one."""


ReplyFunction = Callable[[MockRequest], "str | MockReply"]


@dataclass(frozen=True, slots=True)
class Completion:
    """A reply ready to be put on the wire."""

    text: str
    finish: str
    """`stop`, `length` or `stop_sequence` (mapped per protocol), or a reply function's verbatim reason."""
    stop_sequence: str | None
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int


def echo_reply(request: MockRequest) -> str:
    """The default reply: deterministic, and different for different prompts."""
    last = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    return f"[mock {request.model}] you said: {last[:200]}"


def load_reply_function(path: str | None) -> ReplyFunction:
    """The reply function named `module:function`, or `echo_reply` for None.

    Raises:
        ConfigError: the module or the function cannot be found.
    """
    if path is None:
        return echo_reply
    module_name, _, attribute = path.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError):
        raise ConfigError("mock server config", "reply", "an importable module:function", path) from None
    if not callable(function):
        raise ConfigError("mock server config", "reply", "a callable", path)
    return function  # type: ignore[no-any-return]


def complete(request: MockRequest, reply: str | MockReply, input_tokens: int) -> Completion:
    """Apply stop sequences and `max_tokens` to a reply and count its tokens (cl100k)."""
    if isinstance(reply, str):
        reply = MockReply(reply)
    text, finish, stop_sequence = reply.text, "stop", None
    cut = min(((text.find(s), s) for s in request.stop if s and s in text), default=None)
    if cut is not None:
        text, finish, stop_sequence = text[:cut[0]], "stop_sequence", cut[1]
    tokens = encoding().encode(text, disallowed_special=())
    if request.max_tokens is not None and len(tokens) > request.max_tokens:
        text, finish, stop_sequence = encoding().decode(tokens[:request.max_tokens]), "length", None
    return Completion(
        text=text,
        finish=reply.finish_reason or finish,
        stop_sequence=stop_sequence,
        input_tokens=input_tokens,
        cached_input_tokens=min(reply.cached_input_tokens, input_tokens),
        output_tokens=count_text_tokens(text),
    )
