"""The one place an LLM call goes through: cache, spend cap, rate limits, retries, then the provider.

`Gateway` satisfies `ChatModel`, so a strategy is handed it as inspect_ai's solvers are handed `generate` and never
sees a cache, a limiter or a provider. It is built as httpx's send ladder, one concern per rung:

    complete          telemetry: one `CallRecord` per caller, success or error
    _from_cache       key, hit / replay miss, coalescing of identical in-flight calls, storing the response
    _paid             bounded retries with backoff (runner.ladder.retry)
    _within_budget    reserve the attempt's worst-case cost against the spend cap (waiting while other
                      reservations may free enough; booked durably before sending), settle with the real cost;
                      a request an earlier session left in a live batch is waited for instead, not sent again
    transport         the model's (runner.ladder.transports): `Online` takes a concurrency slot and the RPM and
                      TPM buckets (runner.ladder.ratelimit), then calls the provider; a batch model's
                      `BatchTransport` (runner.ladder.batches) queues the attempt into the model's open batch and
                      waits for its result, reserved and priced at the batch rate (a model with
                      `batch = "planner"`: its Planner's calls only, `providers.stages`)

The spend cap and rate limiting sit inside the retry loop, not around it: every attempt is a request the server
counts and may bill, so every attempt reserves its worst case and takes a request and its tokens from the buckets,
and a retry waiting out its backoff holds neither money nor a slot.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cache import CacheEntry, CacheMode, CallCache, digest, key_fields
from errors import ConfigError
from providers.errors import BudgetExhausted, LLMError, ProviderError, ReplayMiss
from providers.interface import ChatModel, ChatRequest, ChatResponse, Usage
from providers.prices import Price, PriceTable, bundled_table, cost_at
from providers.registry import resolve_model
from providers.stages import current_stage
from providers.tokens import count_prompt_tokens
from providers.urls import public_model
from runner.ladder.batches import BatchCounts, BatchTransport
from runner.ladder.budget import SpendCap, impossible
from runner.ladder.cache_reads import CacheReads
from runner.ladder.calls import CallRecord
from runner.ladder.ratelimit import LimitKey, RateLimiter
from runner.ladder.retry import Retrier
from runner.ladder.transports import Attempt, Online, Transport
from runner.outcomes import may_be_billed

log = logging.getLogger(__name__)

DEFAULT_OUTPUT_TOKENS = 4096
"""Output tokens a request without `max_tokens` is assumed to use, for the spend cap and the TPM bucket (the
Anthropic provider's own default; OpenAI sets no bound a client could reserve)."""

PROMPT_MARGIN = 1.3
"""The spend cap reserves this multiple of the cl100k prompt estimate: other tokenizers (Anthropic's) count the same
text as up to about a quarter more tokens, and a reservation that falls short lets spend pass the cap."""


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved model: the provider that answers it and the identity its calls are keyed and limited by."""

    model: ChatModel
    provider: str
    model_id: str
    endpoint: str | None
    limit_key: LimitKey
    name: str
    """The model string as it may be written (records, charges, messages): credentials in a URL removed."""

    @classmethod
    def of(cls, model_string: str, model: ChatModel) -> Target:
        """Identity from the provider's `.provider`, `.model`, `.endpoint` (built-ins have them), else the string.

        `.api_key_id` (a short hash, never the key) separates the buckets of two keys where a provider offers it, and
        `.endpoint` those of two servers.
        """
        prefix, _, name = model_string.partition(":")
        provider = getattr(model, "provider", None) or prefix
        model_id = getattr(model, "model", None) or name
        endpoint = getattr(model, "endpoint", None)
        key_id = getattr(model, "api_key_id", None) or "-"
        return cls(model, provider, model_id, endpoint, LimitKey(provider, model_id, key_id, endpoint),
                   public_model(model_string))


@dataclass(slots=True)
class _Outcome:
    """What one caller got: the response and how it was obtained."""

    response: ChatResponse
    hit: bool
    cost_usd: float | None
    saved_usd: float | None
    retries: int = 0


@dataclass(slots=True)
class _Call:
    """One call on its way down the ladder."""

    request: ChatRequest
    target: Target
    key: str | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    """cl100k estimate, counted once per provider call (hits never need it)."""
    batched: bool = False
    """Answered through the provider's batch API (priced at its batch rate)."""
    stage: str | None = None
    """The stage of the strategy's work the call was made in (`providers.stages`): a model may batch only one."""

    @property
    def output_allowance(self) -> int:
        max_tokens = self.request.max_tokens
        return max_tokens if max_tokens is not None else DEFAULT_OUTPUT_TOKENS


class Gateway:
    """Every LLM call of a run: `await gateway.complete(request)` routes on `request.model`.

    Args:
        resolve: Model string -> provider; each model is resolved once (default: the provider registry).
        cache: The call cache; None for a run without one.
        mode: How the cache is used; default `readwrite` with a cache, `off` without.
        spend_cap: The run's cap (shared by every model); default: no cap.
        limiter: RPM / TPM buckets and concurrency caps; default: unlimited.
        retrier: Retry policy and backoff; default: `RetryPolicy()`.
        prices: Price overrides by model string (the run spec's), over `price_table`.
        price_table: The price table (a run's: `runner.engine.prepared.Prepared.prices`); default: the bundled
            snapshot.
        on_call: Receives one `CallRecord` per call, in the caller's task (so a contextvar can name the rollout).
        batches: The transport of batch models' calls, and of requests earlier sessions left in live batches
            (`resume_batches`); None: every call is sent online.
        clock: Seconds, for latencies.
    """

    def __init__(self, *, resolve: Callable[[str], ChatModel] = resolve_model, cache: CallCache | None = None,
                 mode: CacheMode | None = None, spend_cap: SpendCap | None = None,
                 limiter: RateLimiter | None = None, retrier: Retrier | None = None,
                 prices: Mapping[str, Price] | None = None, price_table: PriceTable | None = None,
                 on_call: Callable[[CallRecord], None] | None = None,
                 batches: BatchTransport | None = None, clock: Callable[[], float] = time.perf_counter) -> None:
        if cache is None and mode not in (None, CacheMode.OFF):
            raise ValueError(f"cache mode {mode} needs a cache")  # replay must never fall through to a provider
        self._resolve = resolve
        self._cache = cache
        self._reads = CacheReads(cache) if cache is not None else None
        self._mode = mode or (CacheMode.READWRITE if cache is not None else CacheMode.OFF)
        self.spend_cap = spend_cap or SpendCap()
        self._limiter = limiter or RateLimiter()
        self._retrier = retrier or Retrier()
        self._prices = dict(prices or {})
        self._price_table = price_table if price_table is not None else bundled_table()
        self._price_by_model: dict[str, Price | None] = {}
        self._on_call = on_call
        self._batches = batches
        self._clock = clock
        self._targets: dict[str, Target] = {}
        self._online: dict[str, Online] = {}
        self._in_flight: dict[str, asyncio.Future[tuple[ChatResponse, float | None, int]]] = {}
        self._unwritten: dict[str, CacheEntry] = {}
        self._writer: asyncio.Task[None] | None = None
        self._untrusted: set[str] = set()  # models whose untrusted usage was said
        self._written: asyncio.Future[None]  # done once the entries now in `_unwritten` are written

    def target(self, model: str) -> Target:
        """The resolved target of a model string (resolved on first use, then reused)."""
        if model not in self._targets:
            self._targets[model] = Target.of(model, self._resolve(model))
        return self._targets[model]

    async def aclose(self) -> None:
        """End the provider calls still in flight (their callers are gone: a run stopped), write the entries still
        queued, close the providers this gateway resolved (their HTTP pools)."""
        if self._batches is not None:
            await self._batches.aclose()  # submitted batches stay live: a resumed run takes them over
        calls = list(self._in_flight.values())
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        while self._writer is not None and not self._writer.done():  # the entries still queued
            await self._writer
        for target in self._targets.values():
            if (close := getattr(target.model, "aclose", None)) is not None:
                await close()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One LLM call through cache, spend cap, limits and retries; recorded whatever happens.

        Raises:
            LLMError: `ReplayMiss`, `BudgetExhausted` (the call was never sent, and is not recorded), a
                `PermanentError`, or the last `RetryableError` once retries are exhausted.
        """
        started = self._clock()
        call = _Call(request, self.target(request.model), stage=current_stage())
        try:
            outcome = await self._from_cache(call)
        except BudgetExhausted:
            raise  # refused before it was sent: not a call
        except LLMError as exc:
            self._record(call, started, error=exc)
            raise
        self._record(call, started, outcome=outcome)
        return outcome.response

    def _record(self, call: _Call, started: float, *, outcome: _Outcome | None = None,
                error: LLMError | None = None) -> None:
        if self._on_call is None:
            return
        self._on_call(CallRecord(
            model=call.target.name,
            cache_key=call.key,
            hit=outcome.hit if outcome else False,
            usage=outcome.response.usage if outcome else Usage(),
            cost_usd=outcome.cost_usd if outcome else 0.0,
            saved_usd=outcome.saved_usd if outcome else 0.0,
            latency_s=self._clock() - started,
            retries=outcome.retries if outcome else max(0, call.attempts - 1),
            error_type=type(error).__name__ if error else None,
            error=str(error) if error else None,
            batch_saved_usd=self._batch_saving(call, outcome),
            batched=call.batched,
            usage_problem=outcome.response.usage_problem if outcome and not outcome.hit else None,
        ))

    def _batch_saving(self, call: _Call, outcome: _Outcome | None) -> float | None:
        """What a batch call saved against the online price of its usage (None: not batched, or unpriced)."""
        if not call.batched or outcome is None or outcome.hit or outcome.cost_usd is None:
            return None
        online = self._cost(outcome.response.usage, call.request.model)
        return None if online is None else online - outcome.cost_usd

    async def _from_cache(self, call: _Call) -> _Outcome:
        """Serve from the cache, or make (or join) the one provider call for this key and store its response."""
        target, mode = call.target, self._mode
        fields = key_fields(call.request, provider=target.provider, resolved_model=target.model_id,
                            endpoint=target.endpoint)
        call.key = key = digest(fields)
        if mode.reads:
            assert self._reads is not None
            entry = await self._reads.get(key)
            if entry is not None:
                return _Outcome(entry.response, hit=True, cost_usd=0.0, saved_usd=entry.cost_usd)
            if mode is CacheMode.REPLAY:
                raise ReplayMiss(f"cache mode replay: no entry for {_describe(call)} (key {key})",
                                 key=key, provider=target.provider, model=target.model_id)
        if mode is CacheMode.OFF:
            response, cost = await self._paid(call)
            return _Outcome(response, hit=False, cost_usd=cost, saved_usd=0.0, retries=call.attempts - 1)

        # Identical calls in flight share one provider call; the first caller's call is shielded so that
        # cancelling it does not fail the others. A key stays in flight until its entry is written.
        joined = key in self._in_flight
        if not joined:
            self._in_flight[key] = asyncio.ensure_future(self._call_and_store(call, fields))
            self._in_flight[key].add_done_callback(lambda task: self._forget_if_failed(key, task))
        response, cost, retries = await asyncio.shield(self._in_flight[key])
        if joined:
            return _Outcome(response, hit=True, cost_usd=0.0, saved_usd=cost)
        return _Outcome(response, hit=False, cost_usd=cost, saved_usd=0.0, retries=retries)

    async def _call_and_store(self, call: _Call, fields: dict[str, Any]) -> tuple[ChatResponse, float | None, int]:
        assert call.key is not None and self._mode.writes  # only the modes that write make provider calls here
        response, cost = await self._paid(call)
        await self._store(call.key, CacheEntry(fields, response, cost, time.time()))
        return response, cost, call.attempts - 1

    async def _store(self, key: str, entry: CacheEntry) -> None:
        """Queues an entry for the cache writer (`_write`, started if idle); returns once it is written (or failed,
        which the writer says): a caller gets its answer once a rerun would find it.

        The key stays in `_in_flight` until then, so an identical call meanwhile joins the call already paid for: a
        slow or locked cache delays answers, never pays a call twice.
        """
        if not self._unwritten:
            self._written = asyncio.get_running_loop().create_future()
        written = self._written
        self._unwritten[key] = entry
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write(), name="cache-writer")
        await asyncio.shield(written)

    async def _write(self) -> None:
        """Writes the queued entries in a thread, all those queued meanwhile in one transaction, until none is left.

        In a thread, as the results store writes: a cache another process holds locked (diskcache waits up to 60 s)
        or a slow disk stalls these writes, never the event loop and the calls on it. One transaction (and thread
        hop) per batch, not per entry: perf/gateway.py measured `to_thread` at ~3 ms of CPU a hop under load.
        """
        assert self._cache is not None
        while self._unwritten:
            entries, self._unwritten, written = self._unwritten, {}, self._written
            try:
                await asyncio.to_thread(self._cache.set_many, entries)
            except Exception as exc:  # the responses are served and recorded; only the cache misses them
                log.warning("cache %s: new entries not written: %d (%s: %s); those calls will be paid again",
                            self._cache.location, len(entries), type(exc).__name__, exc)
            finally:
                for key in entries:
                    self._in_flight.pop(key, None)
                written.set_result(None)

    def _forget_if_failed(self, key: str, task: asyncio.Future[Any]) -> None:
        """A failed call leaves the in-flight table at once (the next identical call tries again); a successful one
        once its entry is written."""
        if task.cancelled() or task.exception() is not None:
            self._in_flight.pop(key, None)

    async def _paid(self, call: _Call) -> tuple[ChatResponse, float | None]:
        """The provider call, retried as the policy allows; returns the response and what it cost."""
        call.prompt_tokens = count_prompt_tokens((m.role, m.content) for m in call.request.messages)
        return await self._retrier.call(lambda: self._within_budget(call))

    async def _within_budget(self, call: _Call) -> tuple[ChatResponse, float | None]:
        """One attempt under the spend cap: reserve its worst-case cost, send it, settle with what it cost.

        Every attempt is a request the provider may bill, so each has its own reservation. An attempt that ended
        without an error status (a timeout, a dropped connection, a cut body, a cancellation) may have been billed:
        it stays charged at its worst case, unless its transport says it was never sent.
        """
        request, key = call.request, call.key
        assert key is not None  # `_from_cache` keyed it
        if self._batches is not None and (earlier := self._batches.earlier(key, request)) is not None:
            call.batched = True  # an earlier session's batch holds this request (batched then, if not now)
            call.attempts += 1
            # its charge, an earlier session's, settles on its own (`runner.ladder.batches`)
            response = await earlier
            return self._believed(call, response, self._cost(response.usage, request.model, batch=True))
        transport = self._transport(call)
        call.batched = transport.batched
        worst = self._cost(self._worst_usage(call), request.model, batch=call.batched)
        name = call.target.name
        if worst is None and self.spend_cap.cap_usd is not None:
            raise ConfigError("run spec", f"models[{name!r}].prices",
                              "a price: a spend cap is set and the price table does not know this model")
        reservation = await self.spend_cap.reserve(worst or 0.0, model=name, cache_key=key,
                                                   what=f"a call to {name}")
        attempt = Attempt(request, key, reservation.charge, call.prompt_tokens + call.output_allowance)
        call.attempts += 1
        try:
            response = await transport.complete(attempt)
            cost = self._cost(response.usage, request.model, batch=call.batched)
        except ProviderError as exc:
            if not may_be_billed(exc) or attempt.unsent:
                self.spend_cap.settle(reservation, 0.0)  # an error answer, or a request never sent or run: unbilled
            else:
                self.spend_cap.settle_unknown(reservation)
            raise
        except BaseException:
            if attempt.unsent:
                self.spend_cap.settle(reservation, 0.0)  # left its batch before the batch was sent
            else:
                self.spend_cap.settle_unknown(reservation)
            raise
        response, cost = self._believed(call, response, cost)
        self.spend_cap.settle(reservation, cost or 0.0)
        return response, cost

    def _transport(self, call: _Call) -> Transport:
        """How the call's attempts are sent: through its model's batch for a batch model (of the call's stage, for
        a model that batches one stage only), else online."""
        model, target = call.request.model, call.target
        if self._batches is not None and self._batches.batches(model, call.stage):
            return self._batches
        if model not in self._online:
            self._online[model] = Online(target.model, target.limit_key, self._limiter)
        return self._online[model]

    def _worst_usage(self, call: _Call) -> Usage:
        """What an attempt may use at most: the prompt estimate with its margin, and the output allowance."""
        return Usage(input_tokens=math.ceil(call.prompt_tokens * PROMPT_MARGIN), output_tokens=call.output_allowance)

    def _believed(self, call: _Call, response: ChatResponse, cost: float | None) -> tuple[ChatResponse, float | None]:
        """The answer as recorded and charged: a reply whose usage is missing, malformed or impossible (costing
        far beyond the call's worst case) is charged, and records its usage, at the worst case, with what was wrong
        in `usage_problem`; a believable one is unchanged."""
        worst_usage = self._worst_usage(call)
        worst = self._cost(worst_usage, call.request.model, batch=call.batched)
        problem = response.usage_problem
        if problem is None and cost is not None and worst is not None and impossible(cost, worst):
            problem = (f"usage of {response.usage.input_tokens:,} input and {response.usage.output_tokens:,} output "
                       f"tokens is far beyond the call's worst case")
        if problem is None:
            return response, cost
        if call.target.name not in self._untrusted:  # said once per model: a lying server lies on every call
            self._untrusted.add(call.target.name)
            log.warning("%s: %s; such calls are charged at their worst case (`usage_problem` in the results)",
                        call.target.name, problem)
        return dataclasses.replace(response, usage=worst_usage, usage_problem=problem), worst

    def _cost(self, usage: Usage, model: str, *, batch: bool = False) -> float | None:
        if model not in self._price_by_model:
            self._price_by_model[model] = self._price_table.price_for(model, self._prices)
        price = self._price_by_model[model]
        return None if price is None else cost_at(usage, price, batch=batch)

    async def resume_batches(self) -> None:
        """Takes over the batches earlier sessions left live (`runner.ladder.batches`): their requests are waited for
        by the calls that make them again, never sent again, and the charges those sessions left open are settled
        at their real cost (at the batch price) when the batches end."""
        if self._batches is not None:
            await self._batches.resume(self.spend_cap.settle_booked, self._batch_cost, self._cached)

    @property
    def batch_counts(self) -> BatchCounts | None:
        """The run's batches so far; None when this session batches nothing and took no batch over."""
        return self._batches.counts if self._batches is not None and self._batches.active else None

    def _cached(self, key: str) -> bool:
        """Whether the cache holds an answer under `key` (never, in cache mode off)."""
        return self._cache is not None and self._cache.peek(key) is not None

    def _batch_cost(self, model: str, response: ChatResponse) -> float | None:
        """What `response` cost through `model`'s batch API (None: unknown, or its usage cannot be believed)."""
        return None if response.usage_problem else self._cost(response.usage, model, batch=True)


def _describe(call: _Call) -> str:
    """A short human name for a call in error messages: model, sample and the start of the last message."""
    request = call.request
    last = request.messages[-1].content if request.messages else ""
    snippet = last[:60].replace("\n", " ") + ("…" if len(last) > 60 else "")
    return f"{call.target.name} sample {request.sample}, {len(request.messages)} messages, last {snippet!r}"
