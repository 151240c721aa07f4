"""How a provider's JSON request reaches its server: through the official SDK's client, or straight over aiohttp.

Both transports take a request's JSON body and return the decoded JSON answer with its request id, or raise one of
our errors (`providers.errors`), classified alike by `providers.http_errors`. What a request and an answer hold is the
provider module's business (`openai_chat`, `anthropic_messages`); what moves the bytes is this module's.

`SdkTransport` sends through the SDK's own client (its auth headers, connection pool and exceptions) and parses the
answer itself; `AiohttpTransport` spends a fraction of the client CPU per call (no request-option models, no
httpcore pool walk): the choice for local OpenAI-compatible servers that answer in milliseconds, where the client is
the bottleneck (perf/transports.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import aiohttp
import orjson

from providers.errors import NotSent, ProviderTimeout, ServerError, Where
from providers.http_errors import error_for_status, map_sdk_errors
from providers.keys import redact

TRANSPORTS = ("sdk", "aiohttp")

ErrorDetails = Callable[[Any], tuple[str, bool]]
"""A decoded error body (or None) -> (the server's message, whether it says the prompt is too long)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful answer: the decoded JSON body and the request id the server gave it."""

    data: Any
    request_id: str | None


class Transport(Protocol):
    async def send(self, body: dict[str, Any]) -> Reply:
        """Sends one request's JSON body; raises `providers.errors` classes."""

    async def fetch(self, url: str) -> bytes:
        """The body of `GET url` (on the same server, with the same credentials and proxies as `send`'s requests);
        raises on any failure, of any kind: callers ask what a server may say."""

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Wire:
    """What a transport needs to know of a provider's protocol."""

    provider: str
    model: str
    request_id_header: str
    error_details: ErrorDetails
    secret: str
    """The API key, removed from every message should a server echo it."""


def json_or_none(content: bytes) -> Any:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return None


def decode(content: bytes, wire: Wire, request_id: str | None) -> Reply:
    """The JSON of a 2xx body; a body that is not JSON (a proxy cutting a response short) is a `ServerError`."""
    try:
        return Reply(orjson.loads(content), request_id)
    except orjson.JSONDecodeError as exc:
        raise ServerError(f"{wire.provider}:{wire.model}: malformed JSON in response: {exc}",
                          provider=wire.provider, model=wire.model) from exc


class SdkTransport:
    """Sends through an official SDK's resource method, e.g. `client.chat.completions.with_raw_response.create`.

    The fields the method requires are passed by name and every other field travels in `extra_body`, so the JSON on
    the wire is the body as built, whatever the SDK version's signature; the raw answer is decoded here.

    The client's `timeout` (the provider sets it from `request_timeout_s`) is, for httpx, a bound on each read: a
    server dripping a byte now and then holds a call for ever. Here it is also the whole request's deadline, as
    aiohttp's `total` is on the other transport.

    Args:
        client: The SDK client (closed by `aclose`); its `timeout` is each request's deadline.
        create: Its `with_raw_response` method for the endpoint.
        required: The method's required parameters.
        sdk: The SDK module, whose exceptions are mapped.
        wire: The provider's protocol details.
    """

    def __init__(self, client: Any, create: Callable[..., Awaitable[Any]], required: tuple[str, ...],
                 sdk: ModuleType, wire: Wire) -> None:
        self._client = client
        self._deadline_s = client.timeout if isinstance(client.timeout, int | float) else None
        self._create = create
        self._required = required
        self._sdk = sdk
        self._wire = wire

    async def send(self, body: dict[str, Any]) -> Reply:
        wire = self._wire
        arguments = {name: body[name] for name in self._required}
        if extra := {name: value for name, value in body.items() if name not in arguments}:
            arguments["extra_body"] = extra
        deadline = asyncio.timeout(self._deadline_s)
        try:
            async with deadline:
                with map_sdk_errors(self._sdk, provider=wire.provider, model=wire.model, secret=wire.secret,
                                    status_details=lambda exc: wire.error_details(json_or_none(exc.response.content))):
                    raw = await self._create(**arguments)
        except TimeoutError as exc:
            if not deadline.expired():  # the SDK's own (mapped: a `ProviderTimeout` already)
                raise
            raise ProviderTimeout(f"{wire.provider}:{wire.model}: request timed out after {self._deadline_s} s",
                                  provider=wire.provider, model=wire.model) from exc
        answer = raw.http_response  # read in full: the request was not streamed
        return decode(answer.content, wire, answer.headers.get(wire.request_id_header))

    async def fetch(self, url: str) -> bytes:
        body: bytes = await self._client.get(url, cast_to=bytes)  # an absolute URL: the base URL is not prepended
        return body

    async def aclose(self) -> None:
        await self._client.close()


class AiohttpTransport:
    """Posts with one aiohttp session per endpoint, its connection pool sized to the model's concurrency.

    Args:
        url: The endpoint, e.g. `https://api.openai.com/v1/chat/completions`.
        headers: Sent with every request (auth, API version).
        wire: The provider's protocol details.
        timeout_s: Per request, connecting included.
        pool_size: Connections kept to the server at most.
        query: Query parameters sent with every request (a key some servers take in the URL).
    """

    def __init__(self, url: str, headers: Mapping[str, str], wire: Wire, *, timeout_s: float,
                 pool_size: int = 100, query: Mapping[str, str] | None = None) -> None:
        self._url = url
        self._query = dict(query or {})
        self._headers = {"content-type": "application/json", "accept": "application/json", **headers}
        self._wire = wire
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._pool_size = pool_size
        self._session: aiohttp.ClientSession | None = None  # made inside the event loop that uses it

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._pool_size, limit_per_host=self._pool_size)
            self._session = aiohttp.ClientSession(connector=connector, headers=self._headers, timeout=self._timeout,
                                                  json_serialize=lambda value: orjson.dumps(value).decode())
        return self._session

    async def send(self, body: dict[str, Any]) -> Reply:
        wire = self._wire
        where: Where = {"provider": wire.provider, "model": wire.model}
        try:
            async with self._open().post(self._url, params=self._query, data=orjson.dumps(body)) as response:
                content = await response.read()
                status, headers = response.status, response.headers
        except TimeoutError as exc:  # aiohttp's ServerTimeoutError is one too
            raise ProviderTimeout(f"{wire.provider}:{wire.model}: request timed out", **where) from exc
        except aiohttp.ClientConnectorError as exc:  # refused, DNS failure, TLS handshake: the request never left
            raise NotSent(redact(f"{wire.provider}:{wire.model}: connection failed, nothing sent: {exc}",
                                 wire.secret), **where) from exc
        except aiohttp.ClientError as exc:  # reset, dropped mid-response
            raise ServerError(redact(f"{wire.provider}:{wire.model}: connection failed: {exc}", wire.secret),
                              **where) from exc
        if status >= 400:
            message, too_long = wire.error_details(json_or_none(content))
            raise error_for_status(status, message or content[:200].decode(errors="replace"), headers=headers,
                                   context_too_long=too_long, secret=wire.secret, **where)
        return decode(content, wire, headers.get(wire.request_id_header))

    async def fetch(self, url: str) -> bytes:
        async with self._open().get(url, params=self._query) as response:
            response.raise_for_status()
            return await response.read()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
