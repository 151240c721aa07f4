"""The strategies over real HTTP: the openai and anthropic SDKs against the mock server, which answers as the
offline oracle of the tasks at hand (`benchmarks.offline.OfflineModels.mock_reply`), and a reply cut off at max_tokens
named as such."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from benchmarks.base import DELIVERED, Task
from benchmarks.offline import OfflineModels, offline_models
from benchmarks.registry import get_benchmark
from benchmarks.traveleval.agents.statuses import PARSE_FAILURE
from benchmarks.traveleval.benchmark import TravelEvalBenchmark, TravelEvalOptions
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from providers.anthropic_messages import AnthropicMessages
from providers.interface import ChatModel, ChatRequest, ChatResponse
from providers.openai_chat import OpenAIChat
from runner.mock_server import MockConfig

STRATEGIES = TravelEvalBenchmark().strategies(TravelEvalOptions())


@dataclasses.dataclass
class Capped:
    """A model whose requests carry `max_tokens`, as a run spec's sampling stamps it on every call."""

    model: ChatModel
    max_tokens: int

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self.model.complete(dataclasses.replace(request, max_tokens=self.max_tokens))


@pytest.fixture(scope="module")
def easy_tasks(traveleval_home: Path) -> tuple[Task, ...]:
    benchmark = get_benchmark("traveleval")
    return tuple(benchmark.load_tasks("easy", _options(traveleval_home))[:2])


@pytest.fixture(scope="module")
def answers(traveleval_home: Path, easy_tasks: tuple[Task, ...]) -> OfflineModels:
    """The offline models of a run of these tasks."""
    return offline_models(get_benchmark("traveleval"), easy_tasks, _options(traveleval_home))


def _options(traveleval_home: Path) -> TravelEvalOptions:
    return TravelEvalOptions(data_dir=traveleval_home / "traveleval")


@pytest.fixture(params=["openai", "anthropic"])
async def oracle_over_http(request: pytest.FixtureRequest, start_mock_llm,  # type: ignore[no-untyped-def]
                           answers: OfflineModels) -> AsyncIterator[ChatModel]:
    server = await start_mock_llm(MockConfig(), reply=answers.mock_reply)
    model = (OpenAIChat("oracle", api_key="sk-test", base_url=server.openai_base_url) if request.param == "openai"
             else AnthropicMessages("oracle", api_key="sk-test", base_url=server.base_url,
                                    default_max_tokens=32_000))
    try:
        yield model
    finally:
        await model.aclose()


async def test_every_strategy_delivers_the_oracles_plan_through_the_sdks(
        oracle_over_http: ChatModel, easy_tasks: tuple[Task, ...], traveleval_sandbox: Sandbox,
        answers: OfflineModels) -> None:
    in_process = answers.resolve("offline:oracle")
    for strategy in STRATEGIES:
        for task in easy_tasks:
            over_http = await strategy(task, oracle_over_http, traveleval_sandbox)
            direct = await strategy(task, in_process, traveleval_sandbox)
            assert over_http.status == DELIVERED, (strategy.name, over_http.error)
            assert over_http.plan == direct.plan and over_http.plan["query_uid"] == task.id


async def test_a_plan_cut_off_at_max_tokens_is_a_parse_failure_that_says_so(
        oracle_over_http: ChatModel, easy_tasks: tuple[Task, ...], traveleval_sandbox: Sandbox) -> None:
    for strategy in (s for s in STRATEGIES if s.name in ("direct", "react")):
        result = await strategy(easy_tasks[0], Capped(oracle_over_http, 200), traveleval_sandbox)
        assert result.status == PARSE_FAILURE and result.error is not None
        assert result.error.endswith("(the reply was cut off at max_tokens)"), result.error
