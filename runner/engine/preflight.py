"""What a run checks before it writes anything: a run that cannot start leaves no run directory behind.

`prepare` already checked the spec, the benchmark, its tasks and strategies; here the models are resolved as the run
will resolve them (an API key that is not set, an `openai-compatible:@URL` server that does not answer) and the
benchmark's tools are opened (a missing or damaged index), then everything is closed again. A folder a failed start
had written (`spec.toml`, `results.sqlite`) would refuse the next run on that split as "another run" (issue 31).
"""

from __future__ import annotations

from cache.modes import CacheMode
from runner.engine.execute import Prepared, build_gateway
from runner.ladder.budget import SpendCap


async def preflight(prepared: Prepared) -> None:
    """Fails as the run would at its start, without touching the run directory or the cache.

    Raises:
        UserError: a missing API key (`MissingAPIKey`), an unknown or unreachable model, missing benchmark data.
    """
    gateway, _ = build_gateway(prepared, CacheMode.OFF, SpendCap(None), on_call=None)
    await gateway.aclose()
    tools = prepared.benchmark.open_tools(prepared.options)
    if (close := getattr(tools, "close", None)) is not None:
        close()

