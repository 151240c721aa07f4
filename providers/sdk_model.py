"""What a `ChatModel` over an official SDK shares whatever its protocol: the client, the transport, `complete`.

A provider module (`openai_chat`, `anthropic_messages`) subclasses `SdkChatModel` and keeps only its wire: an `SdkApi`
(its SDK, path, request id header, required fields, error bodies), how its aiohttp requests authenticate, the JSON
body of a request and the reading of an answer. The SDK client is built alike for every provider: the SDK's own
retries off (`max_retries=0`: the gateway owns retries, so they never multiply), the URL's credentials sent as HTTP
Basic auth (a proxy in front of a server), its query sent with every request.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from providers.errors import ServerError, Where
from providers.http_errors import map_sdk_errors
from providers.interface import ChatRequest, ChatResponse, Usage
from providers.keys import key_digest
from providers.transport import AiohttpTransport, ErrorDetails, SdkTransport, Transport, Wire, json_or_none
from providers.urls import Endpoint
from providers.usage import UntrustedUsage, usage_object


class SdkClient(Protocol):
    """What the shared code reads of an SDK's async client."""

    @property
    def base_url(self) -> object: ...
    async def close(self) -> None: ...


Client = TypeVar("Client", bound=SdkClient)


@dataclass(frozen=True, slots=True)
class SdkApi(Generic[Client]):
    """One API as the shared code needs to know it."""

    sdk: ModuleType
    """The SDK module, whose exceptions are mapped (`providers.http_errors.map_sdk_errors`)."""
    client: Callable[..., Client]
    """The SDK's async client class (`openai.AsyncOpenAI`)."""
    path: str
    """The endpoint's path below the base URL, for the aiohttp transport."""
    request_id_header: str
    required: tuple[str, ...]
    """The fields the SDK's create method requires (`SdkTransport`)."""
    error_details: ErrorDetails


class SdkChatModel(ABC, Generic[Client]):
    """A `ChatModel` sent through an official SDK's client or aiohttp (`transport`); see `ChatModel` for what the
    built-in providers expose.

    Args:
        model: model id sent to the API.
        provider: its name in errors, logs, rate-limit buckets and cache keys (the registry gives its record's prefix).
        api_key: the key; kept out of `repr` and error messages.
        base_url: another endpoint (a proxy, a compatible server, the mock server); None for the SDK's default.
        timeout_s: per-request timeout; a timeout raises `ProviderTimeout`.
        transport: `sdk` (the SDK's client) or `aiohttp`.
        pool_size: connections to the server at most (aiohttp; the SDK keeps its own pool).
    """

    api: ClassVar[SdkApi[Any]]

    def __init__(self, model: str, *, provider: str, api_key: str, base_url: str | None, timeout_s: float,
                 transport: str, pool_size: int) -> None:
        api = self.api
        self.model = model
        self.provider = provider
        wire = Wire(provider, model, api.request_id_header, api.error_details, api_key)
        target = Endpoint.parse(base_url or "")
        client: Client = api.client(api_key=api_key, base_url=target.url or None, max_retries=0, timeout=timeout_s,
                                    default_query=target.query or None,
                                    default_headers={"Authorization": target.basic_auth} if target.basic_auth else None)
        self.endpoint = target.identity(str(client.base_url))
        """The server's identity in cache keys and rate-limit buckets: its base URL without credentials."""
        self._transport: Transport
        if transport == "sdk":
            self._transport = SdkTransport(client, self._create(client), api.required, api.sdk, wire)
        else:
            self._transport = AiohttpTransport(str(client.base_url).rstrip("/") + api.path,
                                               self._headers(api_key, target.basic_auth), wire, timeout_s=timeout_s,
                                               pool_size=pool_size, query=target.query)
        self.transport = transport
        self.api_key_id = key_digest(api_key)
        """Fingerprint of the key (never the key): tells rate-limit buckets of different keys apart."""
        self._client = client  # the batch API always goes through the SDK
        self._wire = wire
        self._where: Where = {"provider": provider, "model": model}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, endpoint={self.endpoint!r}, transport={self.transport!r})"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request (see `ChatModel.complete`)."""
        started = time.perf_counter()
        reply = await self._transport.send(self._body(request))
        return self.finish(self._response(reply.data, time.perf_counter() - started, reply.request_id), request)

    def finish(self, response: ChatResponse, request: ChatRequest) -> ChatResponse:
        """The answer to `request` as `complete` returns it (a batch's answers too): unchanged unless the API was
        sent less than the request holds."""
        return response

    async def aclose(self) -> None:
        """Close the HTTP connection pools."""
        await self._transport.aclose()
        await self._client.close()

    def _off_schema(self, why: str) -> ServerError:
        """The error of an answer that does not match the API's schema, for `why`."""
        return ServerError(f"{self.provider}:{self.model}: response does not match the API schema ({why})",
                           **self._where)

    def _usage(self, data: Any) -> tuple[Usage, str | None]:
        """The usage a reply reports, or zeros and what is wrong with it (`providers.usage`)."""
        try:
            return self._tokens(usage_object(data)), None
        except UntrustedUsage as exc:
            return Usage(), str(exc)

    @contextmanager
    def _sdk_errors(self) -> Iterator[None]:
        """The SDK's exceptions raised inside (the batch API's calls) as our errors."""
        api, wire = self.api, self._wire
        with map_sdk_errors(api.sdk, provider=self.provider, model=self.model, secret=wire.secret,
                            status_details=lambda exc: api.error_details(json_or_none(exc.response.content))):
            yield

    @abstractmethod
    def _create(self, client: Client) -> Callable[..., Awaitable[Any]]:
        """The client's `with_raw_response` create method of the endpoint."""

    @abstractmethod
    def _headers(self, api_key: str, basic_auth: str | None) -> Mapping[str, str]:
        """The headers the aiohttp transport authenticates with (`basic_auth`: the URL's credentials, if any)."""

    @abstractmethod
    def _body(self, request: ChatRequest) -> dict[str, Any]:
        """The request's JSON body."""

    @abstractmethod
    def _response(self, data: Any, latency_s: float, request_id: str | None) -> ChatResponse:
        """The answer's JSON read; raises `ServerError` where it does not match the API's schema."""

    @abstractmethod
    def _tokens(self, usage: Mapping[str, Any]) -> Usage:
        """The counts of a reply's `usage` object; raises `UntrustedUsage` for what cannot be (`providers.usage`)."""
