"""What the mock server answers: a pluggable reply function of the request (then shaped by `complete`).

A reply function takes a `MockRequest` and returns the reply text, or a `MockReply` to also report cached prompt
tokens or force a finish reason (e.g. `content_filter`). Name one in the config as `module:function` and agents
run through the real SDKs, over real HTTP, against scripted behaviour; a `module:Class` is made into the server's
reply function once per server (a reply over what it reads when the server starts: `benchmarks.offline`'s).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from errors import ConfigError
from providers.scripted_replies import MockReply, MockRequest

ReplyFunction = Callable[[MockRequest], "str | MockReply"]


def echo_reply(request: MockRequest) -> str:
    """The default reply: deterministic, and different for different prompts."""
    last = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    return f"[mock {request.model}] you said: {last[:200]}"


def load_reply_function(path: str | None) -> ReplyFunction:
    """The reply function named `module:function`, an instance of the class named `module:Class` (made now, with no
    arguments), or `echo_reply` for None.

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
    return function() if isinstance(function, type) else function  # type: ignore[no-any-return]
