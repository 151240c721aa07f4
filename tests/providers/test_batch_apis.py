"""Both batch APIs end to end: our providers through the official SDKs against the mock server's batch routes."""

from __future__ import annotations

import asyncio
import time

import pytest

from providers.anthropic_messages import AnthropicMessages
from providers.batching import CLOCK_SKEW_S, BatchModel, BatchRequestLost
from providers.errors import ServerError
from providers.openai_chat import OpenAIChat
from runner.mock_server import MockConfig, RunningServer
from tests.providers.providers_support import SECRET_KEY, chat


def _providers(server: RunningServer) -> dict[str, BatchModel]:
    return {"openai": OpenAIChat("gpt-4o-mini", api_key=SECRET_KEY, base_url=server.openai_base_url),
            "anthropic": AnthropicMessages("claude-haiku-4-5", api_key=SECRET_KEY, base_url=server.base_url)}


async def _until_ended(model: BatchModel, batch_id: str) -> None:
    for _ in range(200):
        if (await model.batch_state(batch_id)).ended:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"batch {batch_id} did not end")


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_batch_answers_each_request_as_a_direct_call_would(start_mock_llm, api: str) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.5, "expire_every": 4, "error_every": 5}))
    model = _providers(server)[api]
    requests = {f"r{i}": chat(f"question {i}", max_tokens=50) for i in range(6)}
    try:
        batch_id = await model.submit_batch(list(requests.items()), tag="run-1-batch-1")
        state = await model.batch_state(batch_id)
        assert not state.ended and state.total == 6
        await _until_ended(model, batch_id)
        results = await model.batch_results(batch_id, list(requests))
        direct = {cid: await model.complete(request) for cid, request in requests.items()}
    finally:
        await model.aclose()

    assert set(results) == set(requests)
    # the 4th request processed expired, the 5th errored (HTTP 500); the others are the direct answers, usage included
    assert isinstance(results["r3"].error, BatchRequestLost)
    assert isinstance(results["r4"].error, ServerError) and results["r4"].error.status == 500
    for cid in ("r0", "r1", "r2", "r5"):
        answer = results[cid].response
        assert answer is not None and answer.text == direct[cid].text
        assert answer.usage == direct[cid].usage and answer.finish_reason == direct[cid].finish_reason
    tally = server.tally
    assert tally.batches == 1 and tally.batch_requests == {cid: 1 for cid in requests}
    assert tally.batch_served == 4 and tally.batch_outcomes == {"succeeded": 4, "expired": 1, "errored": 1}
    assert tally.batch_input_tokens == sum(direct[c].usage.input_tokens for c in ("r0", "r1", "r2", "r5"))
    assert server.received[0].key_digest is not None  # the direct calls; the key itself is never kept


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_cancelled_batch_loses_its_requests_unbilled(start_mock_llm, api: str) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 60}))
    model = _providers(server)[api]
    requests = {"a": chat("one"), "b": chat("two")}
    try:
        batch_id = await model.submit_batch(list(requests.items()), tag="t")
        await model.cancel_batch(batch_id)
        await _until_ended(model, batch_id)
        results = await model.batch_results(batch_id, list(requests))
    finally:
        await model.aclose()
    assert all(isinstance(r.error, BatchRequestLost) for r in results.values()) and len(results) == 2
    assert server.tally.batch_served == 0 and server.tally.batch_outcomes == {"canceled": 2}


async def test_an_openai_batch_is_found_again_by_its_tag_however_many_came_after(start_mock_llm) -> None:
    server = await start_mock_llm(MockConfig(batches={"delay_s": 60}))
    model = _providers(server)["openai"]
    try:
        since = time.time()
        first = await model.submit_batch([("a", chat("one"))], tag="run-x-batch-1")
        second = await model.submit_batch([("a", chat("one"))], tag="run-x-batch-2")
        for n in range(3, 153):  # the project's other batches since: more than one page of the listing (100)
            await model.submit_batch([("a", chat("one"))], tag=f"other-{n}")
        assert await model.find_batch("run-x-batch-1", since=since) == first
        assert await model.find_batch("run-x-batch-2", since=since) == second
        assert await model.find_batch("run-x-batch-3", since=since) is None
        # the listing is read back only to a minute before `since`: batches older than that are not looked at
        assert await model.find_batch("run-x-batch-1", since=since + CLOCK_SKEW_S + 5) is None
    finally:
        await model.aclose()


async def test_an_anthropic_batch_is_found_again_by_its_requests(start_mock_llm) -> None:
    """A message batch keeps no tag: an ended one is told by its results' custom_ids, a running one by its size when
    no other running batch of the window has as many."""
    server = await start_mock_llm(MockConfig(batches={"delay_s": 0.3}))
    model = _providers(server)["anthropic"]
    try:
        since = time.time()
        ended = await model.submit_batch([("a", chat("one")), ("b", chat("two"))], tag="t1")
        await _until_ended(model, ended)
        running = await model.submit_batch([("c", chat("three")), ("d", chat("four")), ("e", chat("five"))], tag="t2")
        assert await model.find_batch("t1", since=since, custom_ids=["b", "a"]) == ended
        assert await model.find_batch("t1", since=since, custom_ids=["a", "x"]) is None  # same size, other requests
        assert await model.find_batch("t2", since=since, custom_ids=["c", "d", "e"]) == running
        assert await model.find_batch("t2", since=since + CLOCK_SKEW_S + 5, custom_ids=["c", "d", "e"]) is None
        await model.submit_batch([("f", chat("six")), ("g", chat("seven")), ("h", chat("eight"))], tag="t3")
        # two running batches of that size: which one is ours cannot be told before they end
        assert await model.find_batch("t2", since=since, custom_ids=["c", "d", "e"]) is None
    finally:
        await model.aclose()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_results_cut_off_while_read_are_a_server_error_of_ours(start_mock_llm, api: str) -> None:
    """Anthropic's results stream in after the SDK returned: the HTTP library's own error (a body cut half-way) must
    still come out as one of our errors, retryable, as OpenAI's (read whole by the SDK) does."""
    server = await start_mock_llm(MockConfig(batches={"cut_results_every": 1}))
    model = _providers(server)[api]
    requests = {f"r{i}": chat(f"question {i} " + "word " * 200) for i in range(4)}
    try:
        batch_id = await model.submit_batch(list(requests.items()), tag="t")
        await _until_ended(model, batch_id)
        with pytest.raises(ServerError, match="connection failed") as caught:
            await model.batch_results(batch_id, list(requests))
    finally:
        await model.aclose()
    assert SECRET_KEY not in str(caught.value)
