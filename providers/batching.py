"""What the providers' batch APIs share: the `BatchModel` interface, a batch's state, one request's result.

OpenAI (Files + Batches) and Anthropic (Message Batches) take many requests at half price and answer within 24 h.
A request is named by a `custom_id` unique within its batch; results come back unordered, matched by it. Each API
says a request `succeeded`, `errored` (with an HTTP status), `expired` or was `canceled`; the last two are
`BatchRequestLost` here, retryable (the gateway sends the request again in a later batch).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from providers.errors import ProviderError, RetryableError
from providers.interface import ChatRequest, ChatResponse

OPENAI_MAX_REQUESTS = 50_000
"""Requests in one OpenAI batch at most."""
OPENAI_MAX_BYTES = 200_000_000
"""Bytes of one OpenAI batch input file at most."""
ANTHROPIC_MAX_REQUESTS = 100_000
"""Requests in one Anthropic message batch at most."""
ANTHROPIC_MAX_BYTES = 256_000_000
"""Bytes of one Anthropic message batch request at most."""
CLOCK_SKEW_S = 60.0
"""How far the provider's clock (a batch's creation time) may be behind ours when a batch is looked for."""


class BatchRequestLost(RetryableError):
    """The batch ended without answering this request: it expired, was cancelled, or the whole batch failed."""


class BatchUnreadable(RetryableError):
    """The provider refuses to report a submitted batch (not found, forbidden: another project's key, a deleted
    batch). Its requests may have run and been billed: their charges stay open, and the calls go in a new batch."""


class BatchUnanswered(ProviderError):
    """Polls of a submitted batch kept failing (5xx, timeouts, cut reads) until this session stopped waiting. Its
    requests ran, or will: their charges stay open, the batch stays live for a later session to read, and the calls
    are not sent again (that would bill them twice)."""


@dataclass(frozen=True, slots=True)
class BatchState:
    """A submitted batch as its provider reports it."""

    ended: bool
    """No request of it will change any more: results (possibly partial) can be read."""
    done: int
    """Requests answered so far (successfully or not)."""
    total: int


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One request's outcome: a response, or the error a direct call would have raised."""

    response: ChatResponse | None = None
    error: ProviderError | None = None


@runtime_checkable
class BatchModel(Protocol):
    """A provider that can also send requests through its batch API (the built-in OpenAI and Anthropic ones)."""

    max_batch_requests: int
    max_batch_bytes: int
    finds_batches: bool
    """Whether `find_batch` can tell that a batch does not exist (the API keeps the tag)."""

    async def submit_batch(self, requests: Sequence[tuple[str, ChatRequest]], *, tag: str) -> str:
        """Submits `(custom_id, request)` pairs as one batch; returns the provider's batch id.

        `tag` names the batch where the API keeps metadata, so that `find_batch` can recover the id of a batch whose
        submission was interrupted before its id was stored."""
        ...

    async def find_batch(self, tag: str, *, since: float, custom_ids: Collection[str]) -> str | None:
        """The id of the batch submitted with `tag` (where the API keeps no tag: with the requests `custom_ids`) at
        `since` (Unix time) or later, or None when there is none (or the API cannot tell)."""
        ...

    async def batch_state(self, batch_id: str) -> BatchState: ...

    async def batch_results(self, batch_id: str, custom_ids: Collection[str]) -> dict[str, BatchResult]:
        """The outcome of each of `custom_ids` in an ended batch; one without a result is lost."""
        ...

    def finish(self, response: ChatResponse, request: ChatRequest) -> ChatResponse:
        """A batch answer as `complete` would have returned it for `request` (what the API was not sent, applied)."""
        ...

    async def cancel_batch(self, batch_id: str) -> None: ...

    async def aclose(self) -> None: ...


def lost(custom_ids: Collection[str], found: Mapping[str, BatchResult], *, provider: str,
         model: str, why: str) -> dict[str, BatchResult]:
    """`found`, completed with a `BatchRequestLost` for each custom_id that has no result."""
    results = dict(found)
    for custom_id in custom_ids:
        if custom_id not in results:
            results[custom_id] = BatchResult(error=BatchRequestLost(
                f"{provider}:{model}: batch request {custom_id} {why}", provider=provider, model=model))
    return results
