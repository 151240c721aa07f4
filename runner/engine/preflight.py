"""What a run checks before it writes anything: a run that cannot start leaves no run directory behind.

`prepare` already checked the spec, the benchmark, its tasks and strategies; here the models are resolved as the run
will resolve them (an API key that is not set, an `openai-compatible:@URL` server that does not answer) and the
benchmark's tools are opened (a missing or damaged index), then everything is closed again. A folder a failed start
had written (`spec.toml`, `results.sqlite`) would refuse the next run on that split as "another run" (issue 31).
"""

from __future__ import annotations

from runner.engine.prepared import Prepared
from runner.engine.session import EngineSession, Purpose


async def preflight(prepared: Prepared) -> None:
    """Fails as the run would at its start, without touching the run directory or the cache.

    Raises:
        UserError: a missing API key (`MissingAPIKey`), an unknown or unreachable model, missing benchmark data.
    """
    async with EngineSession(prepared, Purpose.PREFLIGHT):
        pass

