"""The Anthropic Messages wire format (`POST /v1/messages`), as the mock server speaks it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.interface import Message
from providers.scripted_replies import Completion, MockRequest
from runner.mock_server.wire import WireError, bearer_token, messages_of, model_of, text_of

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                429: "rate_limit_error", 529: "overloaded_error"}


class AnthropicMessagesWire:
    """Parses requests and renders replies and errors in Anthropic's Messages shapes."""

    api = "anthropic"
    path = "/v1/messages"
    request_id_header = "request-id"
    _finish = {"stop": "end_turn", "stop_sequence": "stop_sequence", "length": "max_tokens"}

    def api_key(self, headers: Mapping[str, str]) -> str | None:
        """`x-api-key`, or an OAuth bearer token."""
        return headers.get("x-api-key") or bearer_token(headers)

    def parse(self, body: Mapping[str, Any]) -> MockRequest:
        """The request in protocol-neutral form (system first); `WireError` names the first bad field."""
        model = model_of(body)
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise WireError("max_tokens: Field required (a positive integer)")
        messages = messages_of(body, ("user", "assistant"))
        if "system" in body:
            messages.insert(0, Message("system", text_of(body["system"], "system")))
        stop = tuple(body.get("stop_sequences") or ())
        if any(not isinstance(s, str) or not s.strip() for s in stop):  # as the real API answers
            raise WireError("stop_sequences: each stop sequence must contain non-whitespace characters")
        return MockRequest("anthropic", model, tuple(messages), max_tokens, stop, dict(body))

    def success(self, request: MockRequest, completion: Completion, number: int) -> dict[str, Any]:
        """A `message` object."""
        return {
            "id": f"msg_mock_{number}",
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": [{"type": "text", "text": completion.text}],
            "stop_reason": self._finish.get(completion.finish, completion.finish),
            "stop_sequence": completion.stop_sequence,
            "usage": {
                # Anthropic's input_tokens excludes cache reads, which it reports apart.
                "input_tokens": completion.input_tokens - completion.cached_input_tokens,
                "cache_read_input_tokens": completion.cached_input_tokens,
                "cache_creation_input_tokens": 0,
                "output_tokens": completion.output_tokens,
            },
        }

    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        """Anthropic's `{"type": "error", "error": {...}}` body (`code` has no place in it)."""
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def context_error(self, prompt_tokens: int, window: int, wording: str) -> dict[str, Any]:
        """The 400 body Anthropic sends for a prompt over the context window (in its own words, whatever `wording`
        says: it is the OpenAI protocol's servers that differ)."""
        return self.error(400, f"prompt is too long: {prompt_tokens} tokens > {window} maximum")
