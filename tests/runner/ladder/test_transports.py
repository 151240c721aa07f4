"""`Online`: a model's attempts sent under its limits; under adaptive calls, the slots its server says are asked once,
before the first attempt, through the real provider and HTTP."""

from __future__ import annotations

import asyncio

from aiohttp import web

from providers.interface import ChatRequest, Message
from providers.openai_chat import OpenAIChat
from runner.ladder.ratelimit import LimitKey, Limits, RateLimiter
from runner.ladder.transports import Attempt, Online
from runner.mock_server import MockConfig

REQUEST = ChatRequest("smol", (Message("user", "hi"),))


def online(url: str) -> tuple[Online, OpenAIChat, RateLimiter, LimitKey]:
    model = OpenAIChat("smol", api_key="local", base_url=url, provider="openai-compatible", transport="aiohttp")
    key = LimitKey("openai-compatible", "smol", endpoint=url)
    limiter = RateLimiter({key.display: Limits(adaptive=True, max_concurrency=64)})
    return Online(model, key, limiter), model, limiter, key


async def test_first_calls_at_once_wait_for_one_question_then_start_at_the_slots(start_mock_llm) -> None:
    server = await start_mock_llm(MockConfig(slots=4))
    transport, model, limiter, key = online(server.openai_base_url)
    try:
        answers = await asyncio.gather(*(transport.complete(Attempt(REQUEST, f"k{n}", None, 10)) for n in range(8)))
    finally:
        await model.aclose()
    adaptive = limiter.adaptive_limit(key)
    assert len(answers) == 8 and adaptive is not None and adaptive.slots == 4


async def test_an_attempt_cut_short_while_the_question_waits_was_not_sent(props_server) -> None:
    """A server that holds `GET /props`: a call cancelled meanwhile (Ctrl-C) is unsent, so the spend cap releases its
    booking instead of charging its worst case."""
    released = asyncio.Event()

    async def hold() -> web.Response:
        await released.wait()
        return web.json_response({"total_slots": 4})
    transport, model, _, _ = online(await props_server(hold))
    attempt = Attempt(REQUEST, "k", None, 10)
    call = asyncio.create_task(transport.complete(attempt))
    try:
        await asyncio.sleep(0.3)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        assert call.cancelled() and attempt.unsent
    finally:
        released.set()
        await model.aclose()
