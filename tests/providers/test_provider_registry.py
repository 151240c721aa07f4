"""Model strings -> providers: parsing, keys from the environment, a caller's extra providers, missing SDKs."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from errors import UserError
from providers.anthropic_messages import AnthropicMessages
from providers.batching import BatchModel
from providers.errors import AuthError, MissingAPIKey
from providers.interface import ChatModel, ChatRequest, ChatResponse, Message
from providers.keys import key_digest
from providers.openai_chat import OpenAIChat
from providers.registry import BUILTINS, ProviderRegistry, can_batch, resolve_model
from runner.mock_server import MockConfig
from tests.providers.providers_support import SECRET_KEY


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET_KEY)


def test_builtin_prefixes(keys) -> None:
    openai_model = resolve_model("openai:gpt-4o-mini")
    assert isinstance(openai_model, OpenAIChat) and isinstance(openai_model, ChatModel)
    assert (openai_model.provider, openai_model.model) == ("openai", "gpt-4o-mini")
    assert openai_model.endpoint.startswith("https://api.openai.com/v1")
    claude = resolve_model("anthropic:claude-sonnet-4-5")
    assert isinstance(claude, AnthropicMessages) and claude.model == "claude-sonnet-4-5"
    assert claude.endpoint.startswith("https://api.anthropic.com")


def test_openai_compatible_takes_name_and_url() -> None:
    model = resolve_model("openai-compatible:Qwen/Qwen2.5-7B@http://gpu-box:8000/v1")
    assert isinstance(model, OpenAIChat)
    assert (model.provider, model.model) == ("openai-compatible", "Qwen/Qwen2.5-7B")
    assert model.endpoint == "http://gpu-box:8000/v1/"


async def test_a_server_without_a_model_name_uses_its_only_model(start_mock_llm) -> None:
    one = await start_mock_llm(MockConfig(models=("Qwen/Qwen2.5-7B",)))
    model = await asyncio.to_thread(resolve_model, f"openai-compatible:@{one.openai_base_url}")
    try:
        assert (model.model, model.endpoint) == ("Qwen/Qwen2.5-7B", f"{one.openai_base_url}/")
        assert (await model.complete(ChatRequest("", (Message("user", "hi"),)))).text
        assert one.received[-1].body["model"] == "Qwen/Qwen2.5-7B"
    finally:
        await model.aclose()


@pytest.mark.parametrize(("served", "message"), [
    (("a", "b"), r"no model named, and the server serves 2 \(a, b\); name one: openai-compatible:NAME@URL"),
    ((), r"the server serves 0 \(none\)"),
])
async def test_a_server_without_a_model_name_must_serve_exactly_one(start_mock_llm, served, message) -> None:
    server = await start_mock_llm(MockConfig(models=served))
    with pytest.raises(UserError, match=message):
        await asyncio.to_thread(resolve_model, f"openai-compatible:@{server.openai_base_url}")


def test_a_server_without_a_model_name_that_cannot_be_asked_is_a_user_error() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/v1"
        with pytest.raises(UserError, match=r"list of models could not be read \(.*connection failed"):
            resolve_model(f"openai-compatible:@{url}", timeout_s=5)


@pytest.mark.parametrize("bad", [
    "gpt-4o", "openai:", ":gpt-4o", "openai-compatible:llama", "openai-compatible:@h:1/v1",
    "openai-compatible:llama@gpu-box:8000", "openai-compatible:llama@ftp://h/v1",
])
def test_malformed_model_strings_are_user_errors(bad, keys) -> None:
    with pytest.raises(UserError) as caught:
        resolve_model(bad)
    assert repr(bad) in str(caught.value) and "expected" in str(caught.value)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"unknown provider 'gemini'; known: openai, anthropic, openai-compatible"):
        resolve_model("gemini:pro")


@pytest.mark.parametrize(("model", "variable"), [
    ("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY"),
])
def test_missing_key_names_the_variable(model, variable) -> None:
    with pytest.raises(MissingAPIKey) as caught:
        resolve_model(model)
    assert isinstance(caught.value, AuthError) and isinstance(caught.value, UserError)
    assert caught.value.variable == variable and variable in str(caught.value)


def test_per_model_key_variable(monkeypatch) -> None:
    with pytest.raises(MissingAPIKey, match="TEAM_B_OPENAI_KEY"):
        resolve_model("openai:gpt-4o", api_key_env="TEAM_B_OPENAI_KEY")
    monkeypatch.setenv("TEAM_B_OPENAI_KEY", SECRET_KEY)
    model = resolve_model("openai:gpt-4o", api_key_env="TEAM_B_OPENAI_KEY")
    assert SECRET_KEY not in repr(model)
    with pytest.raises(MissingAPIKey, match="VLLM_KEY"):
        resolve_model("openai-compatible:m@http://h:1/v1", api_key_env="VLLM_KEY")


def test_key_stays_out_of_repr_and_only_its_digest_is_public(keys) -> None:
    for name in ("openai:gpt-4o", "anthropic:claude-haiku-4-5"):
        model = resolve_model(name)
        assert SECRET_KEY not in repr(model) and SECRET_KEY not in str(model)
        assert model.api_key_id == key_digest(SECRET_KEY)


class EchoModel:
    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=self.name)


async def test_extra_providers_get_the_name_without_the_prefix() -> None:
    registry = ProviderRegistry({"offline": EchoModel})
    model = registry.resolve("offline:oracle:v2")
    assert (await model.complete(ChatRequest(model="offline:oracle:v2", messages=()))).text == "oracle:v2"
    assert registry.prefixes() == ["openai", "anthropic", "openai-compatible", "offline"]
    with pytest.raises(UserError, match="unknown provider 'offline'"):
        ProviderRegistry().resolve("offline:oracle")  # registries are independent


@pytest.mark.parametrize("prefix", ["", "openai", "a:b"])
def test_builtin_or_malformed_prefixes_cannot_be_added(prefix) -> None:
    with pytest.raises(ValueError):
        ProviderRegistry({prefix: EchoModel})


def test_missing_sdk_gives_the_install_command(monkeypatch, keys) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic -> ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "providers.anthropic_messages")
    with pytest.raises(UserError, match=r"needs the anthropic package: pip install 'anthropic'"):
        resolve_model("anthropic:claude-haiku-4-5")
    assert isinstance(resolve_model("openai:gpt-4o"), OpenAIChat)  # other providers are unaffected


async def test_the_transport_defaults_to_aiohttp_for_compatible_servers_and_the_sdk_for_hosted_apis(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    made = [resolve_model("openai-compatible:m@http://127.0.0.1:9/v1"), resolve_model("openai:gpt-4o"),
            resolve_model("openai:gpt-4o", transport="aiohttp"),
            resolve_model("openai-compatible:m@http://127.0.0.1:9/v1", transport="sdk")]
    try:
        assert [model.transport for model in made] == ["aiohttp", "sdk", "aiohttp", "sdk"]  # type: ignore[attr-defined]
        assert made[0].endpoint == made[3].endpoint  # type: ignore[attr-defined]  # one identity, one cache
    finally:
        for model in made:
            await model.aclose()  # type: ignore[attr-defined]


async def test_each_builtin_providers_record_says_what_its_client_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one record per provider is what the registry builds from and the spec checks batching against."""
    for provider in BUILTINS.values():
        if provider.key_env is not None:
            monkeypatch.setenv(provider.key_env, "sk-test")
    made = {prefix: resolve_model(f"{prefix}:m@http://127.0.0.1:9/v1" if prefix == "openai-compatible" else
                                  f"{prefix}:m") for prefix in BUILTINS}
    try:
        assert {prefix: (model.provider, model.transport, isinstance(model, BatchModel), can_batch(f"{prefix}:m"))
                for prefix, model in made.items()} == {  # type: ignore[attr-defined]
            "openai": ("openai", "sdk", True, True), "anthropic": ("anthropic", "sdk", True, True),
            "openai-compatible": ("openai-compatible", "aiohttp", True, False)}  # OpenAI's client, no batch API
    finally:
        for model in made.values():
            await model.aclose()  # type: ignore[attr-defined]
