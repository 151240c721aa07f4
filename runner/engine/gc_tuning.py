"""Garbage-collector settings for a run: one long-lived event loop, its data loaded, hundreds of calls in flight.

CPython's defaults suit short scripts: a young collection every 700 net container allocations. In a run each young
collection finds the state of every call in flight still alive and promotes it, so the older generations fill and
full collections, which walk every object in the process (modules, the SDKs' models, the loaded queries), come
often. Through the openai SDK at zero latency that was ~20 % of the CPU per call (perf/gateway.py), the extra
allocations of the gateway's own rungs mostly paid there, not in their code. Two settings, both process-wide and
set by the commands that run rollouts, never as a side effect of importing a library:

- what is alive once the run is set up (imported modules, the benchmark's data) is frozen out of all collections
  (`gc.freeze`, as Instagram's web servers do after start-up);
- young collections run every `YOUNG_THRESHOLD` allocations instead of 700: a few MB more of short-lived garbage
  at most, a fourteenth of the collections.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def tune_for_a_run() -> None:
    """Freeze what is alive now out of the collector's sight; collect the youngest generation less often."""
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
