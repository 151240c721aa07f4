"""Replies of scripted models (the offline models, the mock server), shaped as the APIs shape them.

A scripted model decides its reply's text from a `MockRequest`; `complete` then cuts it at the first stop sequence,
truncates it to `max_tokens` and counts its tokens (cl100k), as the mock server does on the wire. One function for
both, so a direct call to an offline model and a call through the mock server and an SDK return the same text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from providers.interface import Message
from providers.registry import WireAPI
from providers.tokens import count_text_tokens, encoding


class NoReply(Exception):
    """Raised by a reply function that cannot answer a request: the mock server answers HTTP 400 with the message
    (a client does not retry it, and nothing is cached), never a made-up reply."""


@dataclass(frozen=True, slots=True)
class MockRequest:
    """A chat request as the mock server understood it, whichever wire protocol carried it."""

    api: WireAPI
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
