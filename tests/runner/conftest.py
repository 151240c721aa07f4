"""A watchdog for every runner test: a hung test ends the pytest process within minutes, with every thread's stack.

The engine and gateway tests wait on servers, subprocesses, semaphores and polling loops; a bug there (a float
residue read as a held reservation, a writer task that died) hangs instead of failing, and CI then sits until its
90-minute limit with nothing to show. A timer thread names the test, prints every thread's stack past pytest's
output capture and exits; `faulthandler`'s own timer, a minute later, is the backstop should the GIL be stuck.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
from collections.abc import Iterator

import pytest

HANG_S = 600.0
"""No runner test takes a tenth of this on a loaded 2-core machine; past it the test is hung, not slow."""


def _abort(request: pytest.FixtureRequest) -> None:
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    sys.stderr.write(f"\n{request.node.nodeid} still running after {HANG_S:.0f} s: hung. Stacks:\n")
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    sys.stderr.flush()
    os._exit(1)


@pytest.fixture(autouse=True)
def hang_watchdog(request: pytest.FixtureRequest) -> Iterator[None]:
    """Arms the timers for this test, disarms them when it ends."""
    timer = threading.Timer(HANG_S, _abort, args=(request,))
    timer.daemon = True
    timer.start()
    faulthandler.dump_traceback_later(HANG_S + 60, exit=True)
    try:
        yield
    finally:
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()
