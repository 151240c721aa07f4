"""What goes wrong with the next request: scripted one-shot faults first, then seeded random ones."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Literal

from runner.mock_server.config import Faults

FaultKind = Literal["status", "malformed", "hang", "dropped", "delay", "drip"]


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected fault. `delay` only slows the request down; every other kind replaces the reply."""

    kind: FaultKind
    status: int = 0
    """`status`: the HTTP status to answer with."""
    retry_after_s: float | None = None
    """`status`: sent as Retry-After / retry-after-ms when set."""
    seconds: float = 0.0
    """`delay` and `hang`: how long; `drip`: the pause between two bytes."""


class FaultPlan:
    """Decides each request's fault. Tests script faults (`fail_next(429, retry_after=1)`); configs set rates.

    The random draws use their own generator seeded from the config, one draw per request, so a given seed and
    arrival order always inject the same faults.
    """

    def __init__(self, faults: Faults | None = None, seed: int = 0) -> None:
        self.faults = f = faults or Faults()
        self._random = random.Random(f"{seed}/faults")
        self._scripted: deque[Fault] = deque()
        self._table = [(rate, fault) for rate, fault in (
            (f.rate_limited, Fault("status", status=429, retry_after_s=f.retry_after_s)),
            (f.server_error, Fault("status", status=500)),
            (f.hang, Fault("hang", seconds=f.hang_s)),
            (f.malformed, Fault("malformed")),
            (f.dropped, Fault("dropped")),
        ) if rate > 0]

    def fail_next(self, status: int, *, retry_after: float | None = None, times: int = 1) -> None:
        """Answer the next `times` requests with HTTP `status` (and Retry-After when given)."""
        self._script(Fault("status", status=status, retry_after_s=retry_after), times)

    def malformed_next(self, times: int = 1) -> None:
        """Answer the next `times` requests with a 200 whose JSON body is cut short."""
        self._script(Fault("malformed"), times)

    def delay_next(self, seconds: float, times: int = 1) -> None:
        """Delay the next `times` requests by `seconds` before answering them normally."""
        self._script(Fault("delay", seconds=seconds), times)

    def hang_next(self, times: int = 1) -> None:
        """Leave the next `times` requests unanswered (until `faults.hang_s` or server shutdown)."""
        self._script(Fault("hang", seconds=self.faults.hang_s), times)

    def drip_next(self, every_s: float, times: int = 1) -> None:
        """Answer the next `times` requests with a 200 whose body comes a byte every `every_s` seconds, never ending
        (until `faults.hang_s` or server shutdown): a per-read timeout never fires on it, only a deadline does."""
        self._script(Fault("drip", seconds=every_s), times)

    def drop_next(self, times: int = 1) -> None:
        """Close the connection of the next `times` requests without answering."""
        self._script(Fault("dropped"), times)

    def clear(self) -> None:
        """Forget scripted faults not yet used."""
        self._scripted.clear()

    def draw(self) -> Fault | None:
        """The fault for the request now arriving, or None for a normal reply."""
        if self._scripted:
            return self._scripted.popleft()
        u = self._random.random()  # drawn even with no rates set, so adding one does not shift the sequence
        for rate, fault in self._table:
            if u < rate:
                return fault
            u -= rate
        return None

    def _script(self, fault: Fault, times: int) -> None:
        self._scripted.extend([fault] * times)
