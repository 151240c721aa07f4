"""Model strings -> `ChatModel`s: `openai:…`, `anthropic:…`, `openai-compatible:NAME@URL`, plus a caller's own.

A built-in provider is one record (`BuiltinProvider`: its prefix, its client's module and SDK, its key's variable,
whether it has a batch API, whether the price table prices its models); the registry, the spec's validation
(`runner.engine.spec`), the price table (`providers.prices`) and the mock server's wire protocols (`WireAPI`) read
them. Built-in providers import their SDK only when a model asks for it, so a missing SDK costs nothing until used
and then fails with the install command. Keys come from the environment and live only inside the provider object. A
benchmark's `offline:` models are not providers of this registry: the run resolves them through its own value
(`benchmarks.offline.OfflineModels`). A caller that needs a provider of its own (a measurement's stand-in model)
makes a `ProviderRegistry` with it and hands that value on (`runner.engine.prepared.prepare`): nothing is registered
for the whole process.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Literal
from urllib.parse import urlsplit

from errors import UsageError, UserError
from providers.interface import DEFAULT_TIMEOUT_S, ChatModel
from providers.keys import api_key_from_env

# Local OpenAI-compatible servers (vLLM, Ollama) ignore the key, but the SDK insists on one; vLLM's docs use this.
# Also the key of a provider built offline (a dry run), which never sends.
PLACEHOLDER_KEY = "EMPTY"

WireAPI = Literal["openai", "anthropic"]
"""The wire protocols of the hosted providers (the mock server speaks both)."""


@dataclass(frozen=True, slots=True)
class BuiltinProvider:
    """One built-in provider: what every part of tripbench that names providers reads of it."""

    prefix: str
    """The model strings' `PREFIX:` (`openai:gpt-4o-mini`)."""
    module: str
    """The module holding its client class (`client`), imported when a model asks for it."""
    client: str
    sdk: str
    """The package that module needs (the install command names it)."""
    key_env: str | None
    """The environment variable of its API key by default (None: a server that needs none)."""
    batch: bool
    """Whether it has a batch API (its models implement `providers.batching.BatchModel`)."""
    priced: bool
    """Whether the price table keys its models (`PREFIX:NAME`); the others are priced by the spec only."""
    transport: str
    """Its default transport (`ProviderOptions.transport`)."""
    adaptive: bool
    """Whether its models' calls in flight follow the server unless a spec says otherwise (`adaptive_calls`): a local
    server decodes a few requests at a time and queues the rest."""


BUILTINS = {provider.prefix: provider for provider in (
    BuiltinProvider("openai", "providers.openai_chat", "OpenAIChat", "openai", "OPENAI_API_KEY", batch=True,
                    priced=True, transport="sdk", adaptive=False),
    BuiltinProvider("anthropic", "providers.anthropic_messages", "AnthropicMessages", "anthropic",
                    "ANTHROPIC_API_KEY", batch=True, priced=True, transport="sdk", adaptive=False),
    # an OpenAI-compatible server (vLLM, Ollama, llama.cpp) speaks OpenAI's protocol but has no batch API
    BuiltinProvider("openai-compatible", "providers.openai_chat", "OpenAIChat", "openai", None, batch=False,
                    priced=False, transport="aiohttp", adaptive=True),
)}
"""The built-in providers by prefix."""

BATCH_PROVIDERS = tuple(prefix for prefix, provider in BUILTINS.items() if provider.batch)
"""The providers with a batch API (OpenAI Batch, Anthropic Message Batches), by prefix, so a spec is checked before
any client is built (no key, no server asked)."""


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """Per-model settings of a provider."""

    api_key_env: str | None = None
    """Environment variable holding the key, instead of the provider's own (`BuiltinProvider.key_env`)."""
    base_url: str | None = None
    """Send `openai:` / `anthropic:` requests elsewhere (a proxy, the mock server)."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Per-request timeout."""
    transport: str | None = None
    """`sdk` (the official SDK's HTTP client) or `aiohttp` (see `providers.transport`); None: `aiohttp` for
    OpenAI-compatible servers (local ones answer in milliseconds, so the client's CPU is the bottleneck: 11x the
    calls/s in perf/transports.py), `sdk` for the hosted APIs, whose changes the SDKs track."""
    pool_size: int = 100
    """Connections to the server at most, for the aiohttp transport (the model's concurrency)."""
    offline: bool = False
    """Build the provider without its API key (a placeholder instead): for code that never sends, like a dry run
    reading the cache."""

    def key(self, default_env: str | None, *, provider: str, model: str) -> str:
        """The API key from `api_key_env` (else `default_env`); the placeholder when offline or when neither is set.

        Raises:
            MissingAPIKey: the variable is unset or empty (not when offline).
        """
        variable = self.api_key_env or default_env
        if variable is None or (self.offline and not os.environ.get(variable)):
            return PLACEHOLDER_KEY
        return api_key_from_env(variable, provider=provider, model=model)


def _import_provider(provider: BuiltinProvider, model: str) -> ModuleType:
    try:
        return importlib.import_module(provider.module)
    except ModuleNotFoundError as exc:
        if exc.name != provider.sdk:
            raise
        raise UserError(f"model {model!r} needs the {provider.sdk} package: pip install '{provider.sdk}'") from None


def _hosted(provider: BuiltinProvider, name: str, options: ProviderOptions) -> ChatModel:
    """A hosted API's model (`openai:`, `anthropic:`)."""
    module = _import_provider(provider, f"{provider.prefix}:{name}")
    key = options.key(provider.key_env, provider=provider.prefix, model=name)
    model: ChatModel = getattr(module, provider.client)(
        name, api_key=key, base_url=options.base_url, provider=provider.prefix, timeout_s=options.timeout_s,
        transport=options.transport or provider.transport, pool_size=options.pool_size)
    return model


def _endpoint(spec: str) -> tuple[str, str]:
    """(model name, server URL) of an `openai-compatible:NAME@URL` string without its prefix."""
    name, at, url = spec.partition("@")
    parts = urlsplit(url)
    if not (at and parts.scheme in ("http", "https") and parts.netloc):
        raise UsageError(f"model 'openai-compatible:{spec}': expected openai-compatible:NAME@http://HOST:PORT/v1 "
                         "(or no NAME: the server's only model)")
    return name, url


def _openai_compatible(spec: str, options: ProviderOptions) -> ChatModel:
    name, url = _endpoint(spec)
    provider = BUILTINS["openai-compatible"]
    module = _import_provider(provider, f"openai-compatible:{spec}")
    key = options.key(provider.key_env, provider=provider.prefix, model=name)
    if not name:  # asked once, when the run starts: cache keys hold the name the server gave
        name = module.served_model(url, api_key=key, timeout_s=options.timeout_s)
    model: ChatModel = getattr(module, provider.client)(
        name, api_key=key, base_url=url, provider=provider.prefix, timeout_s=options.timeout_s,
        max_tokens_field="max_tokens",  # what vLLM and Ollama read
        transport=options.transport or provider.transport, pool_size=options.pool_size,
    )
    return model


def can_batch(model: str) -> bool:
    """Whether a model string's provider has a batch API (`BATCH_PROVIDERS`)."""
    return model.partition(":")[0] in BATCH_PROVIDERS


def adapts(model: str) -> bool:
    """Whether a model string's calls in flight follow its server by default (`BuiltinProvider.adaptive`)."""
    provider = BUILTINS.get(model.partition(":")[0])
    return provider is not None and provider.adaptive


def named_server(model: str) -> str | None:
    """The server URL a model string names itself (`openai-compatible:NAME@URL`); None for the others (their server
    is their provider's, or a spec's `base_url`)."""
    prefix, _, rest = model.partition(":")
    return (rest.partition("@")[2] or None) if prefix == "openai-compatible" else None


def _builtin(prefix: str, name: str, options: ProviderOptions) -> ChatModel:
    if prefix == "openai-compatible":
        return _openai_compatible(name, options)
    return _hosted(BUILTINS[prefix], name, options)


ProviderFactory = Callable[[str], ChatModel]
"""Builds the model of a `PREFIX:NAME` string from its NAME."""


class ProviderRegistry:
    """Prefix -> provider: the built-ins plus the providers a caller passes in, a value the caller holds (a run's
    is its `Prepared.providers`).

    Args:
        extra: More prefixes and their factories (a measurement's stand-in model: `perf/engine_throughput.py`'s
            sleeping one); the built-in prefixes cannot be taken.

    Raises:
        ValueError: a prefix of `extra` that is empty, holds a colon or is a built-in's.
    """

    def __init__(self, extra: Mapping[str, ProviderFactory] | None = None) -> None:
        for prefix in extra or {}:
            if not prefix or ":" in prefix or prefix in BUILTINS:
                raise ValueError(f"cannot add provider prefix {prefix!r}")
        self._extra = dict(extra or {})

    def prefixes(self) -> list[str]:
        """Every prefix this registry resolves, built-ins first."""
        return [*BUILTINS, *self._extra]

    def resolve(self, model: str, options: ProviderOptions | None = None) -> ChatModel:
        """The `ChatModel` behind a model string (see `resolve_model`); an extra provider's factory gets the name
        without the prefix (and no options: they are the built-in providers')."""
        prefix, name = self._parse(model)
        if prefix in BUILTINS:
            return _builtin(prefix, name, options or ProviderOptions())
        return self._extra[prefix](name)

    def check(self, model: str) -> None:
        """Raises what `resolve` would for a malformed string or an unknown provider or extra model, building no
        client of a built-in provider (an extra provider's model is built: that is where it checks its name)."""
        prefix, name = self._parse(model)
        if prefix == "openai-compatible":
            _endpoint(name)
        elif prefix in self._extra:
            self._extra[prefix](name)

    def _parse(self, model: str) -> tuple[str, str]:
        prefix, colon, name = model.partition(":")
        if not (prefix and colon and name):
            raise UsageError(f"model {model!r}: expected PROVIDER:NAME with PROVIDER one of "
                             f"{', '.join(self.prefixes())}")
        if prefix not in BUILTINS and prefix not in self._extra:
            raise UsageError(f"model {model!r}: unknown provider {prefix!r}; known: {', '.join(self.prefixes())}")
        return prefix, name


_BUILT_IN = ProviderRegistry()
"""The built-in providers alone (it takes no others after it is made): what `check_model` and `resolve_model` ask."""


def check_model(model: str) -> None:
    """Raises `UsageError` for a model string `resolve_model` would refuse (before anything is written or sent)."""
    _BUILT_IN.check(model)


def resolve_model(model: str, *, api_key_env: str | None = None, base_url: str | None = None,
                  timeout_s: float = DEFAULT_TIMEOUT_S, transport: str | None = None, pool_size: int = 100,
                  offline: bool = False) -> ChatModel:
    """The built-in provider for a model string (`ProviderRegistry.resolve` also resolves extra providers).

    Args:
        model: `openai:gpt-4o-mini`, `anthropic:claude-sonnet-4-5`, `openai-compatible:NAME@http://HOST:PORT/v1`
            (`openai-compatible:@URL`: the server's only model, asked for now).
        api_key_env: read the key from this environment variable instead of the provider's default.
        base_url: send `openai:`/`anthropic:` requests to another endpoint.
        timeout_s: per-request timeout.
        transport: `sdk` or `aiohttp`, for the built-in providers (None: see `ProviderOptions.transport`).
        pool_size: connections to one server at most (aiohttp transport).
        offline: no API key needed: the provider will not be asked to send (a dry run).

    Returns:
        A `ChatModel`; built-in providers also expose `.provider`, `.model`, `.endpoint` and `aclose()`.

    Raises:
        UsageError: the string is malformed or names an unknown provider.
        UserError: the provider's SDK is not installed.
        MissingAPIKey: the key's environment variable is unset (an `AuthError` and a `UserError`).
    """
    return _BUILT_IN.resolve(model, ProviderOptions(api_key_env=api_key_env, base_url=base_url, timeout_s=timeout_s,
                                                    transport=transport, pool_size=pool_size, offline=offline))
