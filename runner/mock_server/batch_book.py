"""The mock server's record of uploaded files and batches (the routes that fill it are in `batches.py`)."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any, Literal

from providers.registry import WireAPI
from runner.mock_server.config import Batches

Outcome = Literal["succeeded", "errored", "expired", "canceled"]


@dataclass(slots=True)
class RequestResult:
    """How one request of a batch ended: its outcome, and for `succeeded` / `errored` the HTTP status and body."""

    outcome: Outcome
    status: int | None = None
    body: dict[str, Any] | None = None


@dataclass(slots=True)
class MockBatch:
    """One batch, either API: its requests in order, and once it ended their results by custom_id."""

    id: str
    api: WireAPI
    requests: list[tuple[str, Any]]
    """(custom_id, request body)."""
    created_at: float
    metadata: dict[str, str] = field(default_factory=dict)
    input_file_id: str | None = None
    cancelled_at: float | None = None
    ended_at: float | None = None
    results: dict[str, RequestResult] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    def count(self, outcome: Outcome) -> int:
        return sum(result.outcome == outcome for result in self.results.values())


class BatchBook:
    """Files and batches of one server run, and the counter that decides which batch request errors or expires."""

    def __init__(self, config: Batches) -> None:
        self.config = config
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, MockBatch] = {}
        self.timers: list[asyncio.TimerHandle] = []
        """Scheduled processing of batches (cancelled when the server shuts down)."""
        self._ids = itertools.count(1)
        self._processed = 0
        self._created = 0
        self._reads = 0

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def loses_creation_answer(self) -> bool:
        """Whether the answer to the batch just created is lost (`lose_created_every`)."""
        self._created += 1
        every = self.config.lose_created_every
        return every is not None and self._created % every == 0

    def cuts_results(self) -> bool:
        """Whether the results read now are cut half-way (`cut_results_every`)."""
        self._reads += 1
        every = self.config.cut_results_every
        return every is not None and self._reads % every == 0

    def draw(self) -> Outcome | None:
        """The injected outcome of the next request processed (`expired`, `errored`), or None to answer it."""
        self._processed += 1
        n, config = self._processed, self.config
        if config.expire_every is not None and n % config.expire_every == 0:
            return "expired"
        if config.error_every is not None and n % config.error_every == 0:
            return "errored"
        return None
