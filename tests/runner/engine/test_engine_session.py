"""One engine session per purpose: what each opens (cache, cap, gateway) and what a failed opening leaves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cache.modes import CacheMode
from cache.store import CacheStore
from errors import UsageError
from providers.errors import MissingAPIKey
from providers.interface import ChatRequest, ChatResponse, Usage
from providers.registry import ProviderRegistry
from runner.engine.prepared import prepare
from runner.engine.session import EngineSession, Purpose

URL = "http://127.0.0.1:9"  # nothing is sent: no session here calls a model


@pytest.mark.parametrize(("purpose", "mode", "cap", "cache"), [
    (Purpose.REPLAY_WORKER, CacheMode.READWRITE, 5.0, True),
    (Purpose.DRY_RUN, CacheMode.REPLAY, None, True),  # reads the cache only, caps nothing: nothing is sent
    (Purpose.PREFLIGHT, CacheMode.OFF, None, False),
])
async def test_each_purpose_opens_its_cache_cap_and_gateway(write_spec: Callable[..., Path], purpose: Purpose,
                                                             mode: CacheMode, cap: float | None, cache: bool) -> None:
    prepared = prepare(write_spec(URL, max_cost=5.0))
    prepared.cache_dir.mkdir()  # made by an earlier run
    async with EngineSession(prepared, purpose) as session:
        assert (session.mode, session.gateway.spend_cap, session.spend_cap.cap_usd, session.cache is not None) == (
            mode, session.spend_cap, cap, cache)
        if purpose is Purpose.DRY_RUN:
            assert isinstance(session.cache, CacheStore) and not session.cache.counting  # a probe is no use


@pytest.mark.parametrize("cache", ["off", "readwrite"], ids=["reading-none", "its-folder-not-made-yet"])
async def test_a_dry_run_with_no_cache_to_read_opens_no_gateway(write_spec: Callable[..., Path], cache: str) -> None:
    prepared = prepare(write_spec(URL, cache=cache))
    async with EngineSession(prepared, Purpose.DRY_RUN) as session:
        assert session.reader is None and session.cache is None
        with pytest.raises(RuntimeError, match="dry run session without a gateway"):
            session.gateway  # noqa: B018
    assert not prepared.cache_dir.exists()  # a dry run writes nothing


async def test_a_session_that_cannot_open_raises_and_closes_again(write_spec: Callable[..., Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOY_MISSING_KEY", raising=False)
    models = [{"model": "openai:gpt-4o-mini", "api_key_env": "TOY_MISSING_KEY", "prices": {"input": 1, "output": 1}}]
    session = EngineSession(prepare(write_spec(URL, models=models)), Purpose.REPLAY_WORKER)
    with pytest.raises(MissingAPIKey, match="TOY_MISSING_KEY"):
        await session.open()
    assert session.reader is None
    await session.aclose()  # closing again (the Ray actor's `close`) is harmless


def test_only_a_runs_session_has_a_store(write_spec: Callable[..., Path]) -> None:
    with pytest.raises(ValueError, match="only it, has a results store"):
        EngineSession(prepare(write_spec(URL)), Purpose.RUN)


class Canned:
    """A provider a caller brings (as a measurement's stand-in model): answers every call alike, counting them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return ChatResponse(f"canned {self.name}", "stop", Usage(1, 0, 1))


async def test_a_provider_of_the_callers_own_is_a_value_of_its_prepared_run(write_spec: Callable[..., Path]) -> None:
    """`prepare(providers=...)`: the run's model resolves through the registry it was given; the same spec prepared
    without it is refused, since nothing was registered for the whole process."""
    made: list[Canned] = []

    def canned(name: str) -> Canned:
        made.append(Canned(name))
        return made[-1]

    spec = write_spec(URL, models=[{"model": "canned:toy", "name": "toy"}], cache="off")
    async with EngineSession(prepare(spec, providers=ProviderRegistry({"canned": canned})),
                             Purpose.REPLAY_WORKER) as session:
        await session.rollout(session.prepared.keys[0])
    assert [model.name for model in made] == ["toy", "toy"]  # checked when prepared, resolved when opened
    assert made[-1].calls > 0
    with pytest.raises(UsageError, match="unknown provider 'canned'"):
        prepare(spec)
