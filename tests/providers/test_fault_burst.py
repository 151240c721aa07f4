"""A concurrent burst through both SDKs into a faulty server: every call is answered or classified, and the
tokens the clients received equal the server's bill (no retries here: that is the gateway's job)."""

from __future__ import annotations

import asyncio
from collections import Counter

from providers.errors import LLMError, ProviderTimeout, RateLimited, ServerError
from providers.interface import ChatResponse, Usage
from runner.mock_server import Faults, MockConfig
from tests.providers.providers_support import chat


async def test_burst_with_faults_accounts_for_every_call_and_token(start_mock_llm, provider_for) -> None:
    faults = Faults(rate_limited=0.2, server_error=0.05, hang=0.02, malformed=0.01, retry_after_s=1)
    server = await start_mock_llm(MockConfig(seed=2, faults=faults))  # 120 draws: 20 429s, 4 500s, 2 hangs, 1 malformed
    # The timeout must tell hangs from a loaded 2-core CI box: 20 calls in flight keep honest replies far below it.
    models = [provider_for("openai", server, timeout_s=2.0), provider_for("anthropic", server, timeout_s=2.0)]
    in_flight = asyncio.Semaphore(20)
    calls = 120

    async def call(i: int) -> ChatResponse:
        async with in_flight:
            return await models[i % 2].complete(chat(f"question {i}", max_tokens=20))

    results = await asyncio.gather(*(call(i) for i in range(calls)), return_exceptions=True)

    kinds = Counter(type(r).__name__ for r in results)
    errors = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(e, LLMError) for e in errors), kinds  # nothing unclassified escapes
    assert kinds["ChatResponse"] == server.tally.served == calls - len(errors)
    assert kinds["RateLimited"] == server.tally.statuses["429"]
    assert kinds["ProviderTimeout"] == server.tally.faults["hang"]
    assert kinds["ServerError"] == server.tally.statuses["500"] + server.tally.faults["malformed"]
    assert all(e.retry_after == 1.0 for e in errors if isinstance(e, RateLimited))
    assert set(kinds) <= {"ChatResponse", "RateLimited", "ServerError", "ProviderTimeout"}
    assert {RateLimited, ServerError, ProviderTimeout} <= {type(e) for e in errors}  # the seed exercises all

    received = Usage(
        input_tokens=sum(r.usage.input_tokens for r in results if not isinstance(r, BaseException)),
        output_tokens=sum(r.usage.output_tokens for r in results if not isinstance(r, BaseException)),
    )
    assert (received.input_tokens, received.output_tokens) == (server.tally.input_tokens,
                                                               server.tally.output_tokens)
