"""Providers under test: built through `resolve_model`, pointed at the mock server, closed at teardown."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from providers.interface import ChatModel
from providers.registry import resolve_model
from providers.transport import TRANSPORTS
from runner.mock_server import RunningServer
from tests.providers.providers_support import MODELS, SECRET_KEY


@pytest.fixture(params=TRANSPORTS)
async def provider_for(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Callable[..., ChatModel]]:
    """`provider_for("openai" | "anthropic", server, timeout_s=…)`: our real provider, once over the real SDK and
    once over aiohttp: every test using it is the transports' one contract."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET_KEY)
    made: list[ChatModel] = []

    def build(api: str, server: RunningServer, timeout_s: float = 10.0) -> ChatModel:
        base_url = server.openai_base_url if api == "openai" else server.base_url
        model = resolve_model(MODELS[api], base_url=base_url, timeout_s=timeout_s, transport=request.param)
        made.append(model)
        return model

    yield build
    for model in made:
        await model.aclose()  # type: ignore[attr-defined]
