"""Calls of batch models, gathered into provider batches (OpenAI Batch, Anthropic Message Batches).

`BatchTransport` is the bottom rung of the gateway's ladder for batch models (`runner.ladder.transports`): the gateway
hands it each attempt of a batch model's call after the spend cap booked it (at the batch price), as it hands an
online model's to `Online`. A model's open batch is submitted when it holds `size` requests or `flush_s` after its
first request joined; the attempt waits on its ticket meanwhile. A submitted batch is polled every `poll_s` until it
ends; each request's result (a response, or the error a direct call would have raised) goes to the attempt waiting
for it.

Crash safety, in the order things happen:
1. The batch and its requests (custom_id -> cache key, and the spend cap's charge of each) are committed to the
   results store; only then is the batch submitted.
2. The provider's batch id is committed as soon as the submission returns.
3. A batch is marked ended only once its results were handed over: a session killed before leaves it live.
4. A resumed run (`resume`) polls every batch an earlier session left live instead of submitting its requests
   again: the rerun rollouts' calls with those cache keys wait for that batch (`earlier`), booking nothing of their
   own. When it ends, each charge the dead session left open is settled at the request's real cost (its worst case
   where the result cannot tell), and the batch stays live until every result was taken by a call. A batch whose id
   was never stored is looked up by its tag where the API keeps one (OpenAI); not found, its requests were never
   sent and their charges close at 0. Where the API keeps no tag (Anthropic) it is looked up by its requests
   (`find_batch`); not found, which there cannot prove it was never made, the charges stay open at their worst
   case, the money-safe reading.
5. A submission that got no answer (a timeout, a dropped connection, a 5xx) may still have made its batch: it is
   looked up the same way and polled if found; otherwise its calls fail with charges open, and their retries join a
   new batch (where the lookup could not prove the batch was never made, they may be billed twice: counted in
   `BatchCounts.maybe_twice`).
Results become ordinary cache entries through the gateway, so a replay is the same whether an answer came from a
batch or online. Whatever goes wrong in a batch's submission or polling fails its calls (retryable, charges open):
no call waits forever.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from providers.batching import BatchModel, BatchResult, BatchUnanswered, BatchUnreadable
from providers.errors import BadRequest, ContextTooLong, PermanentError, ProviderError, ServerError
from providers.interface import ChatRequest, ChatResponse
from runner.ladder.budget import impossible
from runner.ladder.transports import Attempt
from runner.outcomes import may_be_billed

log = logging.getLogger(__name__)

REFUSALS = 3
"""Polls of a batch refused outright (404, 403, ...) or failing unexpectedly (a results stream cut in a way the SDK
does not translate) in a row before this session gives up on its requests."""
UNANSWERED = 20
"""Polls of a batch failing in a row, transient errors (5xx, timeouts, cut reads) included, before this session gives
up on its requests (10 minutes at the default `batch_poll_s`): a provider that never answers must not keep a run, and
a cron job, going for ever. The batch stays live for a later session, which reads it again."""

SettleEarlier = Callable[[int, float, float], None]
"""`(charge, its reserved USD, actual USD)`: settles a charge an earlier session left open."""
PriceOf = Callable[[str, ChatResponse], float | None]
"""`(model string, response) -> its cost at the batch price`."""
Cached = Callable[[str], bool]
"""Whether the cache holds an answer under a key (a result of a batch already used)."""


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """A batch an earlier session prepared or submitted that has not ended."""

    id: int
    model: str
    tag: str
    provider_id: str | None
    """None: the session died between writing the batch and learning its id (it may or may not exist)."""
    created_at: float
    """When it was written, before its submission (Unix time)."""
    requests: tuple[tuple[str, str, int | None, float | None], ...]
    """(custom_id, cache key, charge, the charge's reserved USD while it is open, else None)."""


class BatchBook(Protocol):
    """Where the batch transport records its batches durably (the run's results store), so a later session adopts
    them."""

    async def prepare_batch(self, session: int, model: str, tag: str,
                            requests: Sequence[tuple[str, str, int | None]]) -> int:
        """Records a batch about to be submitted, with its requests ((custom_id, cache key, charge) each); returns
        its id once committed: only then may it be sent."""
        ...

    async def batch_submitted(self, batch: int, provider_id: str) -> None:
        """Records the provider's id of a submitted batch."""
        ...

    async def batch_ended(self, batch: int, state: str) -> None:
        """Marks a batch `ended` (its results were read) or `abandoned` (it never reached the provider)."""
        ...

    async def live_batches(self) -> list[StoredBatch]:
        """Batches of earlier sessions not known to have ended, oldest first, with their requests."""
        ...


@dataclass(slots=True)
class Ticket:
    """One call's place in a batch."""

    model: str
    custom_id: str
    key: str
    request: ChatRequest
    charge: int | None
    answer: asyncio.Future[BatchResult]
    submitted: bool = False
    """Taken out of its open batch for submission: from then on the provider may bill it (unless its batch could
    not be recorded, which sends nothing and sets this back)."""


@dataclass(slots=True)
class BatchCounts:
    """What the progress display shows of the run's batches."""

    submitted: int = 0
    ended: int = 0
    requests: int = 0
    """Requests submitted."""
    answered: int = 0
    """Requests whose result came back (answers and errors)."""
    maybe_twice: int = 0
    """Requests sent again after their batch's submission got no answer and the batch it may have made was not found,
    where that does not prove it was never made (Anthropic's Message Batches, found by their requests): they may be
    billed twice."""

    @property
    def in_progress(self) -> int:
        return self.submitted - self.ended


def custom_id(key: str) -> str:
    """A cache key's custom_id: its digest without the scheme (64 hex characters, Anthropic's longest)."""
    return key.rpartition(":")[2]


class BatchTransport:
    """The run's open batches, one per batch model, and the polling of every submitted one: the transport of every
    batch model's attempts (`runner.ladder.transports.Transport`), and of the requests earlier sessions left in live
    batches (`earlier`).

    Args:
        store: The run's results store (batches are recorded there before submission).
        session: The session submitting.
        providers: Provider of each model string whose provider has a batch API: an earlier session's live batch of
            any of them is taken over, even if the model is no longer batched.
        batch_models: The model strings whose calls go through a batch now, each with the only stage of calls it
            batches (`providers.stages`; None: every call).
        size: Requests per batch at most (also capped by each provider's limit).
        flush_s: Seconds after its first request that a batch is submitted however small.
        poll_s: Seconds between two polls of a submitted batch.
    """

    batched = True

    def __init__(self, store: BatchBook, session: int, providers: Mapping[str, BatchModel],
                 batch_models: Mapping[str, str | None], *, size: int, flush_s: float, poll_s: float) -> None:
        self._store = store
        self._session = session
        self._providers = dict(providers)
        self._batched = dict(batch_models)
        self._size = size
        self._flush_s = flush_s
        self._poll_s = poll_s
        self._open: dict[str, list[Ticket]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._adopted: dict[str, tuple[int, asyncio.Future[BatchResult]]] = {}
        """Cache key -> (store row of its earlier session's batch, the request's result)."""
        self._untaken: dict[int, set[str]] = {}
        """Cache keys of each adopted batch (by store row) whose result no call has taken yet."""
        self._answered: set[int] = set()
        """Adopted batches whose results are in."""
        self._tag = f"tripbench-{secrets.token_hex(6)}-s{session}"
        self._numbers = itertools.count(1)
        self.counts = BatchCounts()

    def batches(self, model: str, stage: str | None = None) -> bool:
        """Whether a call of `model` made in `stage` (`providers.stages`) goes through a batch."""
        return model in self._batched and self._batched[model] in (None, stage)

    @property
    def active(self) -> bool:
        """Whether this session batches any call or took over any batch (what progress lines show)."""
        return bool(self._batched) or self.counts.submitted > 0

    # -- the gateway's side --------------------------------------------------------------------------------------
    async def complete(self, attempt: Attempt) -> ChatResponse:
        """The attempt's answer through its model's open batch (see `Transport.complete`). It is unsent if it gave up
        while still queued, or if its batch could not be recorded (such a batch is not sent)."""
        ticket = self._enqueue(attempt)
        try:
            return await self._answer(attempt.request, ticket.answer)
        except ProviderError:
            attempt.unsent = not ticket.submitted
            raise
        except BaseException:
            attempt.unsent = self._withdraw(ticket)
            raise

    def earlier(self, key: str, request: ChatRequest) -> Awaitable[ChatResponse] | None:
        """The answer to the request with this cache key that an earlier session submitted, if its batch is live
        (taken once: a retry of a lost request joins a new batch). Its booking is that session's: `resume` settles
        it when the batch ends."""
        if (adopted := self._adopted.pop(key, None)) is None:
            return None
        row, future = adopted
        self._untaken[row].discard(key)
        if not self._untaken[row] and row in self._answered:
            self._spawn(self._store.batch_ended(row, "ended"))
        return self._answer(request, future)

    async def _answer(self, request: ChatRequest, answer: asyncio.Future[BatchResult]) -> ChatResponse:
        """A request's batch result as `complete` would have returned it; an error result is raised."""
        result = await answer
        if result.error is not None:
            raise result.error
        assert result.response is not None
        return self._providers[request.model].finish(result.response, request)

    def _enqueue(self, attempt: Attempt) -> Ticket:
        """Adds an attempt to its model's open batch; await `ticket.answer` for its result."""
        model, key = attempt.request.model, attempt.key
        ticket = Ticket(model, custom_id(key), key, attempt.request, attempt.charge,
                        asyncio.get_running_loop().create_future())
        queue = self._open.setdefault(model, [])
        queue.append(ticket)
        if len(queue) >= min(self._size, self._providers[model].max_batch_requests):
            self._flush(model)
        elif model not in self._timers:
            self._timers[model] = asyncio.get_running_loop().call_later(self._flush_s, self._flush, model)
        return ticket

    def _withdraw(self, ticket: Ticket) -> bool:
        """Takes a call that gave up out of its open batch; False when it had already left it for submission."""
        queue = self._open.get(ticket.model, [])
        if ticket in queue:
            queue.remove(ticket)
            return True
        return False

    async def aclose(self) -> None:
        """Stops polling. Submitted batches stay live at their providers; a resumed run takes them over."""
        for timer in self._timers.values():
            timer.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- submission and polling ----------------------------------------------------------------------------------
    def _flush(self, model: str) -> None:
        if (timer := self._timers.pop(model, None)) is not None:
            timer.cancel()
        provider = self._providers[model]
        limit = min(self._size, provider.max_batch_requests)
        batch: list[Ticket] = []
        size = 0
        for ticket in self._open.pop(model, []):
            ticket.submitted = True
            bytes_ = _size_of(ticket.request)
            # a custom_id is unique within a batch: an identical call (cache mode off) goes in the next one
            if batch and (len(batch) == limit or size + bytes_ > provider.max_batch_bytes
                          or any(t.custom_id == ticket.custom_id for t in batch)):
                self._spawn(self._submit(model, batch))
                batch, size = [], 0
            batch.append(ticket)
            size += bytes_
        if batch:
            self._spawn(self._submit(model, batch))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _submit(self, model: str, tickets: list[Ticket]) -> None:
        try:
            await self._submit_and_poll(model, tickets)
        except Exception as exc:  # a store write failed, an SDK error nobody mapped: the calls must not wait forever
            log.exception("batch of %s failed", model)
            _fail(tickets, ServerError(f"{model}: the batch failed ({type(exc).__name__}: {exc})", model=model))

    async def _submit_and_poll(self, model: str, tickets: list[Ticket]) -> None:
        provider = self._providers[model]
        tag = f"{self._tag}-b{next(self._numbers)}"
        since = time.time()
        try:
            row = await self._store.prepare_batch(self._session, model, tag,
                                                  [(t.custom_id, t.key, t.charge) for t in tickets])
        except Exception as exc:  # not recorded, so not sent: the calls fail (the gateway's retrier may retry)
            for ticket in tickets:
                ticket.submitted = False
            _fail(tickets, ServerError(f"{model}: the batch could not be recorded before submission ({exc})",
                                       model=model))
            return
        try:
            batch_id = await provider.submit_batch([(t.custom_id, t.request) for t in tickets], tag=tag)
        except ProviderError as exc:
            maybe_made = exc.status is None or exc.status >= 500  # a gateway's 5xx may come after the batch was made
            found = await self._made_anyway(provider, tag, since, tickets) if maybe_made else None
            if found is None:
                await self._not_submitted(row, model, tickets, exc)
                return
            batch_id = found
        await self._store.batch_submitted(row, batch_id)
        self.counts.submitted += 1
        self.counts.requests += len(tickets)
        results = await self._until_results(provider, batch_id, [t.custom_id for t in tickets])
        if isinstance(results, ProviderError):  # the batch stays live in the store: a session that can read it
            _fail(tickets, results)             # settles its charges
            return
        for ticket in tickets:
            _answer(ticket.answer, results[ticket.custom_id])
        await self._store.batch_ended(row, "ended")  # after the answers went out: killed before, a resume re-reads

    async def _made_anyway(self, provider: BatchModel, tag: str, since: float, tickets: list[Ticket]) -> str | None:
        """After a submission that got no answer (a timeout, a dropped connection, a 5xx): the id of the batch it
        made anyway, found by its tag (OpenAI) or its requests (Anthropic). Polling that batch, not sending its
        requests again, keeps the provider from running (and billing) them twice."""
        try:
            return await provider.find_batch(tag, since=since, custom_ids=[t.custom_id for t in tickets])
        except ProviderError as exc:
            log.warning("batch %s: its submission got no answer and the lookup by tag failed (%s)", tag, exc)
            return None

    async def _not_submitted(self, row: int, model: str, tickets: list[Ticket], exc: ProviderError) -> None:
        """Fails the calls of a batch whose submission failed; one refused with an HTTP status made no batch (a
        5xx's batch was looked for)."""
        if exc.status is not None and (exc.status < 500 or self._providers[model].finds_batches):
            await self._store.batch_ended(row, "abandoned")
        else:  # the API cannot be asked: the batch may exist, and be billed, while its calls are sent again
            if not self._providers[model].finds_batches:
                self.counts.maybe_twice += len(tickets)
            if exc.status is not None:
                exc = ServerError(f"{model}: batch submission answered {exc.status}; it may have been made ({exc})",
                                  model=model)
        if isinstance(exc, ContextTooLong):  # the batch, not a prompt, was too large: not the calls' own error
            exc = BadRequest(f"{model}: the batch was refused as too large ({exc})", status=exc.status, model=model)
        _fail(tickets, exc)

    async def _until_results(self, provider: BatchModel, batch_id: str, custom_ids: list[str]
                             ) -> dict[str, BatchResult] | BatchUnreadable | BatchUnanswered:
        """Polls a batch until it ends, then reads its results. Errors are asked again after `poll_s`, but a batch
        the provider refuses to report (or that fails unexpectedly) `REFUSALS` times in a row, or that fails in any
        way `UNANSWERED` times in a row, is given up on: this session stops waiting, and the batch stays live for a
        later one."""
        results: dict[str, BatchResult] | BatchUnreadable | BatchUnanswered
        refusals = failures = 0
        while True:
            try:
                if (await provider.batch_state(batch_id)).ended:
                    results = await provider.batch_results(batch_id, custom_ids)
                    break
                refusals = failures = 0
            except Exception as exc:  # its requests ran, or will: asked again rather than sent again
                transient = isinstance(exc, ProviderError) and not isinstance(exc, PermanentError)
                refusals = 0 if transient else refusals + 1
                failures += 1
                if refusals == REFUSALS or failures == UNANSWERED:
                    known = exc if isinstance(exc, ProviderError) else None
                    error = BatchUnreadable if refusals == REFUSALS else BatchUnanswered
                    results = error(f"batch {batch_id} cannot be read ({type(exc).__name__}: {exc})",
                                    provider=known.provider if known else "", model=known.model if known else "")
                    break
                log.warning("batch %s: %s; asking again in %.0f s", batch_id, exc, self._poll_s)
            await asyncio.sleep(self._poll_s)
        self.counts.ended += 1
        self.counts.answered += len(custom_ids)
        return results

    # -- resume --------------------------------------------------------------------------------------------------
    async def resume(self, settle_earlier: SettleEarlier, price: PriceOf, cached: Cached) -> int:
        """Takes over the batches earlier sessions left live; returns how many requests their calls will adopt.
        A batch whose results are all in the cache already (an earlier resume used them) just ends."""
        adopted = 0
        for batch in await self._store.live_batches():
            provider = self._providers.get(batch.model)
            if provider is None:  # the model left the spec: its batch stays live here, its charges open (at their
                continue          # worst case), until a session with the model again takes it over
            batch_id = batch.provider_id or await provider.find_batch(
                batch.tag, since=batch.created_at, custom_ids=[cid for cid, *_ in batch.requests])
            if batch_id is None:
                await self._store.batch_ended(batch.id, "abandoned")
                if provider.finds_batches:  # never created: nothing was billed
                    for _, _, charge, reserved in batch.requests:
                        if charge is not None and reserved is not None:
                            settle_earlier(charge, reserved, 0.0)
                continue
            if batch.provider_id is None:
                await self._store.batch_submitted(batch.id, batch_id)
            futures = {cid: asyncio.get_running_loop().create_future() for cid, *_ in batch.requests}
            for cid, key, *_ in batch.requests:
                self._adopted[key] = (batch.id, futures[cid])
            self._untaken[batch.id] = {key for _, key, *_ in batch.requests if not cached(key)}
            adopted += len(futures)
            self.counts.submitted += 1
            self.counts.requests += len(futures)
            self._spawn(self._take_over(batch, provider, batch_id, futures, settle_earlier, price))
        return adopted

    async def _take_over(self, batch: StoredBatch, provider: BatchModel, batch_id: str,
                         futures: dict[str, asyncio.Future[BatchResult]], settle_earlier: SettleEarlier,
                         price: PriceOf) -> None:
        results: dict[str, BatchResult] | ProviderError
        try:
            results = await self._until_results(provider, batch_id, list(futures))
        except Exception as exc:  # as in `_submit`: the waiting calls fail (retryable), the batch stays live
            log.exception("batch %s failed", batch_id)
            results = ServerError(f"batch {batch_id} failed ({type(exc).__name__}: {exc})", model=batch.model)
        if isinstance(results, ProviderError):  # its charges stay open and the batch live, for a later session
            for future in futures.values():
                _answer(future, BatchResult(error=results))
            return
        for cid, _, charge, reserved in batch.requests:
            result = results[cid]
            if charge is not None and reserved is not None:
                settle_earlier(charge, reserved, _cost_of(result, batch.model, reserved, price))
            _answer(futures[cid], result)
        self._answered.add(batch.id)
        if not self._untaken[batch.id]:  # else it ends once the last result is taken: killed before, re-read then
            await self._store.batch_ended(batch.id, "ended")


def _cost_of(result: BatchResult, model: str, reserved: float, price: PriceOf) -> float:
    """What a request of an earlier session's batch cost: its answer's price; 0 for an error that cannot have been
    billed; else (an unpriced answer, a usage missing or impossible, an error that may have been billed) the worst
    case reserved for it."""
    if result.response is not None:
        cost = price(model, result.response)  # None too for a usage that cannot be believed
        return reserved if cost is None or impossible(cost, reserved) else cost
    return 0.0 if result.error is None or not may_be_billed(result.error) else reserved


def _size_of(request: ChatRequest) -> int:
    """An upper bound of a request's bytes in a batch file: its text as UTF-8 (at most 4 bytes a character, JSON
    escapes at most doubling that) and a kilobyte for the JSON around it."""
    return 1024 + sum(8 * len(message.content) for message in request.messages)


def _answer(future: asyncio.Future[BatchResult], result: BatchResult) -> None:
    if not future.done():  # a call that gave up has cancelled its future
        future.set_result(result)


def _fail(tickets: list[Ticket], error: ProviderError) -> None:
    for ticket in tickets:
        _answer(ticket.answer, BatchResult(error=error))
