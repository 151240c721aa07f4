"""The OpenAI Chat Completions wire format (`POST /v1/chat/completions`), as the mock server speaks it."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from providers.scripted_replies import Completion, MockRequest
from runner.mock_server.wire import WireError, bearer_token, messages_of, model_of

_ERROR_TYPES = {401: "invalid_request_error", 403: "permission_denied", 404: "invalid_request_error",
                429: "rate_limit_exceeded"}


class OpenAIChatWire:
    """Parses requests and renders replies and errors in OpenAI's Chat Completions shapes."""

    api = "openai"
    path = "/v1/chat/completions"
    request_id_header = "x-request-id"
    _finish = {"stop": "stop", "stop_sequence": "stop", "length": "length"}

    def api_key(self, headers: Mapping[str, str]) -> str | None:
        """The bearer token of `Authorization`."""
        return bearer_token(headers)

    def parse(self, body: Mapping[str, Any]) -> MockRequest:
        """The request in protocol-neutral form; `WireError` names the first bad field."""
        model = model_of(body)
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise WireError("max_completion_tokens: expected a positive integer")
        stop = body.get("stop") or ()
        stop = (stop,) if isinstance(stop, str) else tuple(stop)
        messages = messages_of(body, ("system", "developer", "user", "assistant", "tool"))
        return MockRequest("openai", model, tuple(messages), max_tokens, stop, dict(body))

    def success(self, request: MockRequest, completion: Completion, number: int) -> dict[str, Any]:
        """A `chat.completion` object."""
        return {
            "id": f"chatcmpl-mock-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": completion.text, "refusal": None},
                "logprobs": None,
                "finish_reason": self._finish.get(completion.finish, completion.finish),
            }],
            "usage": {
                "prompt_tokens": completion.input_tokens,
                "completion_tokens": completion.output_tokens,
                "total_tokens": completion.input_tokens + completion.output_tokens,
                "prompt_tokens_details": {"cached_tokens": completion.cached_input_tokens},
            },
            "system_fingerprint": "fp_mock",
        }

    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        """OpenAI's `{"error": {...}}` body."""
        kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def context_error(self, prompt_tokens: int, window: int, wording: str) -> dict[str, Any]:
        """The 400 body a server sends for a prompt over the context window, in the words of `wording`: `openai`,
        `vllm` or `llama.cpp` (llama-server)."""
        if wording == "llama.cpp":
            return {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                              "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": prompt_tokens,
                              "n_ctx": window}}
        if wording == "vllm":
            return {"object": "error", "message": f"This model's maximum context length is {window} tokens. However, "
                    f"your request has {prompt_tokens} input tokens. Please reduce the length of the input messages.",
                    "type": "BadRequestError", "param": None, "code": 400}
        return self.error(400, f"This model's maximum context length is {window} tokens. However, your messages "
                               f"resulted in {prompt_tokens} tokens. Please reduce the length of the messages.",
                          code="context_length_exceeded")
