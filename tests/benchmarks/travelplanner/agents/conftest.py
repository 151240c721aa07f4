"""A scripted in-process ChatModel for agent tests: replies are enqueued in order, requests are recorded."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import pytest

from providers.interface import ChatRequest, ChatResponse

Reply = str | Callable[[ChatRequest], str]


class ScriptedModel:
    """Answers each call with the next enqueued reply (llm's `MockModel.enqueue()` style).

    Like a real chat API, a reply is cut at the first of the request's stop sequences, so a test can script
    what a model would say and still see the agent's stop lists at work. A call with nothing enqueued fails the
    test with the tail of the prompt it was sent.
    """

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[ChatRequest] = []

    def enqueue(self, *replies: Reply) -> ScriptedModel:
        self.replies.extend(replies)
        return self

    @property
    def prompts(self) -> list[str]:
        """The last message of every request, in call order."""
        return [request.messages[-1].content for request in self.requests]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"unexpected LLM call #{len(self.requests)}: ...{request.messages[-1].content[-300:]}")
        reply = self.replies.popleft()
        text = reply(request) if callable(reply) else reply
        cuts = [text.find(stop) for stop in request.stop if stop and stop in text]
        return ChatResponse(text=text[: min(cuts)] if cuts else text, finish_reason="stop")


@pytest.fixture
def scripted_model() -> ScriptedModel:
    """A fresh scripted model."""
    return ScriptedModel()
