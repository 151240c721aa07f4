"""What a run checks before it writes anything: a run that cannot start leaves no run directory behind.

`prepare` already checked the spec, the benchmark, its tasks and strategies; here the models are resolved as the run
will resolve them (an API key that is not set, an `openai-compatible:@URL` server that does not answer), each server
a spec names by URL is asked once whether it is there (`check_servers`), and the benchmark's tools are opened (a
missing or damaged index), then everything is closed again. A folder a failed start had written (`spec.toml`,
`results.sqlite`) would refuse the next run on that split as "another run" (issue 31); a server that is down would
otherwise be retried call after call and end the run "completed" with nothing done (issue 44).
"""

from __future__ import annotations

import asyncio

import aiohttp

from cache.modes import CacheMode
from errors import UserError
from providers.registry import named_server
from providers.urls import Endpoint, public_url
from runner.engine.prepared import Prepared
from runner.engine.session import EngineSession, Purpose
from runner.engine.spec import ModelSpec

SERVER_CHECK_S = 5.0
"""How long a named server has to answer the one request that checks it is there."""


async def preflight(prepared: Prepared) -> None:
    """Fails as the run would at its start, without touching the run directory or the cache.

    Raises:
        UserError: a missing API key (`MissingAPIKey`), an unknown or unreachable model, missing benchmark data.
    """
    async with EngineSession(prepared, Purpose.PREFLIGHT):
        if prepared.spec.cache != CacheMode.REPLAY:  # a replay asks no server
            await check_servers(prepared.spec.models)


def server_url(model: ModelSpec) -> str | None:
    """The server a spec entry names by URL (`openai-compatible:NAME@URL`, or its `base_url`), None for the rest."""
    return named_server(model.model) or model.base_url


async def check_servers(models: list[ModelSpec]) -> None:
    """Asks each server named by URL for its `/models`, once, within `SERVER_CHECK_S`: any HTTP answer (a 404 or a
    401 too) says it is there; a refused connection, a DNS failure or silence is an error naming the model.

    Raises:
        UserError: a server that did not answer.
    """
    urls = {url: model.label for model in models if (url := server_url(model)) is not None}
    timeout = aiohttp.ClientTimeout(total=SERVER_CHECK_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        failures = await asyncio.gather(*(_unreachable(session, url) for url in urls))
    for (url, label), why in zip(urls.items(), failures, strict=True):
        if why is not None:
            raise UserError(f"model {label}: the server at {public_url(url)} does not answer ({why}); start it or "
                            "fix the URL (nothing was written)")


async def _unreachable(session: aiohttp.ClientSession, url: str) -> str | None:
    """Why the server at `url` could not be asked, None when it answered anything."""
    target = Endpoint.parse(url)
    headers = {"Authorization": target.basic_auth} if target.basic_auth else None
    try:
        async with session.get(target.url.rstrip("/") + "/models", params=target.query or None, headers=headers):
            return None
    except TimeoutError:
        return f"no answer within {SERVER_CHECK_S:g} s"
    except aiohttp.ClientError as exc:
        return str(exc) or type(exc).__name__
