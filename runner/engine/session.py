"""One engine session: what every way of running rollouts opens, opened and closed in one place.

A run's own session (`runner.engine.execute`), a replay's worker process (`runner.engine.replay_processes`), a Ray
actor (`runner.engine.ray_workers`), a dry run (`runner.engine.dryrun`) and the preflight (`runner.engine.preflight`)
each need the same things from a prepared run: its cache, its spend cap and the ledger behind it, its team membership,
one gateway over them (every model resolved) and the benchmark's tools. `EngineSession` builds them for its
`Purpose`, and closes them newest first, each even if one before it failed: an unclosed cache or store would keep the
process alive and the run directory locked. What each caller does with them stays the caller's.

The spend cap is built here only: a run's purposes cap at the spec's `max_cost` (`prepare` checked that every model
then has a price), a dry run and the preflight send nothing and cap nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from cache import CallCache
from cache.modes import CacheMode
from cache.store import CacheStore
from providers.batching import BatchModel
from providers.registry import ProviderOptions, can_batch
from runner.engine.prepared import Prepared, extra_models, require_team_client
from runner.engine.rollout import RolloutModel, record_call, run_rollout
from runner.engine.spec import RunSpec, require_agreement
from runner.ladder.batches import BatchTransport
from runner.ladder.budget import Ledger, SpendCap
from runner.ladder.calls import CallRecord
from runner.ladder.gateway import Gateway, Target
from runner.ladder.ratelimit import Limits, RateLimiter
from runner.ladder.retry import Retrier
from runner.store.ledger import StoreLedger, settle_left_open
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.writer import ResultsStore

if TYPE_CHECKING:  # psycopg is an extra (`tripbench[team]`): imported only by runs with `[team]`
    from runner.team import Team
    from runner.team.shards import ShardClaim

TEAM_SPOOL = "team-unwritten.sqlite"
"""In a team run's directory: answers paid for while the team database was away, until it takes them."""


class Purpose(Enum):
    """What a session is opened for, which decides what it opens."""

    RUN = "run"
    """A run's own session: the results store's ledger and batches, a killed session's calls settled, and with
    `[team]` the team's cap, limits and cache (an outage's answers spooled in the run directory)."""
    REPLAY_WORKER = "replay worker"
    """A replay's worker process: the cache and a cap of its own (a replay spends nothing), no store, no team."""
    REMOTE_ACTOR = "remote actor"
    """A Ray actor: the team's cache, cap and limits (`[team]` is required), no store."""
    DRY_RUN = "dry run"
    """The cache only (mode `replay`, none when the spec's mode reads nothing), no provider key needed, no use
    counted; no cap: nothing is sent."""
    PREFLIGHT = "preflight"
    """The models resolved and the tools opened as the run will, no cache, no cap: nothing is sent."""


class EngineSession:
    """What a prepared run's rollouts need for one `Purpose`: an async context manager (or `open` and `aclose`).

    Args:
        prepared: The prepared run.
        purpose: What the session is for.
        store: A run's results store (`Purpose.RUN` only).
        session_id: The session's id in that store.
        claim: A shard's claim in the team database, whose loss stops the team ledger (`runner.team.shards`).

    Raises (on opening):
        UserError: a missing API key, an unknown model, missing benchmark data; with `[team]`, a team database that
            cannot be reached (a team run fails closed: it sends nothing).
    """

    def __init__(self, prepared: Prepared, purpose: Purpose, *, store: ResultsStore | None = None,
                 session_id: int | None = None, claim: ShardClaim | None = None) -> None:
        if (purpose is Purpose.RUN) != (store is not None and session_id is not None):
            raise ValueError("a run's session, and only it, has a results store and a session id")
        self.prepared = prepared
        self.purpose = purpose
        self._store = store
        self._session_id = session_id
        self._claim = claim
        self._opened = contextlib.AsyncExitStack()
        self._tasks = {task.id: task for task in prepared.tasks}
        self.team: Team | None = None
        self.cache: CallCache | None = None
        self._spend_cap: SpendCap | None = None
        self.reader: Gateway | None = None
        """The session's gateway; None only for a dry run whose cache mode reads nothing."""
        self.tools: Any = None
        """The benchmark's sandbox tools (`Benchmark.open_tools`)."""

    @property
    def spend_cap(self) -> SpendCap:
        """The session's spend cap (the run's `max_cost` for a run's purposes; none for a dry run and the preflight)."""
        if self._spend_cap is None:
            raise RuntimeError(f"a {self.purpose.value} session without a spend cap (not open, or reading no cache)")
        return self._spend_cap

    @property
    def gateway(self) -> Gateway:
        """The session's one gateway (every purpose's but a dry run that reads no cache)."""
        if self.reader is None:
            raise RuntimeError(f"a {self.purpose.value} session without a gateway (not open, or reading no cache)")
        return self.reader

    async def __aenter__(self) -> EngineSession:
        return await self.open()

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.aclose()

    async def open(self) -> EngineSession:
        """Opens what the purpose needs; on a failure, closes what it had opened and raises."""
        try:
            await self._open()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def aclose(self) -> None:
        """Closes everything opened, newest first: the tools, the gateway (writing the cache entries still queued),
        the cache, the ledgers, the team membership, and last what the offline models opened (their sandbox)."""
        await self._opened.aclose()

    async def _open(self) -> None:
        prepared, purpose, opened = self.prepared, self.purpose, self._opened
        spec = prepared.spec
        opened.callback(prepared.offline.close)  # closed last: the gateway calls the offline models up to its close
        if spec.team is not None and purpose in (Purpose.RUN, Purpose.REMOTE_ACTOR):
            require_team_client(str(prepared.spec_path))
            from runner.team import Team, team_url

            self.team = await Team.join(team_url(spec.team.url_env, str(prepared.spec_path)),
                                        stale_s=spec.team.stale_s, outage_s=spec.team.outage_s)
            opened.push_async_callback(self.team.aclose)  # after the ledgers and the gateway: last, as it leaves
        ledger = await self._ledger()
        mode = self.mode
        # a dry run reads the cache, if there is one to read: a folder not made yet holds nothing, and is not made
        if purpose is not Purpose.DRY_RUN or (spec.cache.reads and (spec.team is not None
                                                                   or prepared.cache_dir.exists())):
            run_dir = self._store.path.parent if self._store is not None else None
            self.cache = _open_cache(prepared, mode, run_dir, self.team)
            if self.cache is not None:
                opened.callback(self.cache.close)
            if isinstance(self.cache, CacheStore) and purpose is Purpose.DRY_RUN:
                self.cache.counting = False  # probes, not uses: `tripbench cache stats` shows no dry run's misses
            if self._store is not None:
                await settle_left_open(self._store, prepared.cache_dir, self.cache)  # calls a killed session had
            capped = purpose in (Purpose.RUN, Purpose.REPLAY_WORKER, Purpose.REMOTE_ACTOR)
            spent = await self._store.spent_usd() if self._store is not None else 0.0
            self._spend_cap = SpendCap(spec.max_cost if capped else None, spent_usd=spent, ledger=ledger)
            self.reader = _build_gateway(prepared, mode, self._spend_cap, self.cache,
                                        on_call=record_call if capped else None,
                                        offline=purpose is Purpose.DRY_RUN or mode is CacheMode.REPLAY,  # no key
                                        store=self._store, session=self._session_id, team=self.team)
            opened.push_async_callback(self.reader.aclose)  # before the cache closes: it writes the entries queued
            if self.team is not None:  # closing never waits out a team database that is away: its spool keeps it
                opened.callback(self.team.outage.stop_waiting)
            await self.reader.resume_batches()  # batches a killed session submitted: waited for, never sent again
        self.tools = await asyncio.to_thread(prepared.benchmark.open_tools, prepared.options)
        if (close := getattr(self.tools, "close", None)) is not None:
            opened.callback(close)

    @property
    def mode(self) -> CacheMode:
        """The cache mode the session's gateway runs in."""
        if self.purpose is Purpose.DRY_RUN:
            return CacheMode.REPLAY
        return CacheMode.OFF if self.purpose is Purpose.PREFLIGHT else self.prepared.spec.cache

    async def _ledger(self) -> Ledger | None:
        """Where the spend cap books: a run's results store (and the team's budget, with `[team]`), an actor's team
        budget; None for the others (kept in memory)."""
        spec = self.prepared.spec
        local = None
        if self._store is not None and self._session_id is not None:
            local = StoreLedger(self._store, self._session_id)
            self._opened.push_async_callback(local.aclose)
        if self.team is None or spec.team is None:
            return local
        spool = self._store.path.parent / TEAM_SPOOL if self._store is not None else None
        return await self.team.ledger(spec.team.budget, spec.max_cost, local=local, claim=self._claim, spool=spool)

    async def rollout(self, key: RolloutKey, observe: Callable[[CallRecord], None] | None = None) -> RolloutRecord:
        """Runs `key`'s rollout through this session's gateway and tools (`run_rollout`)."""
        prepared = self.prepared
        return await run_rollout(key, self._tasks[key.task], prepared.strategies[key.strategy],
                                 bind_model(prepared, self.gateway, key), self.tools, observe)


def _build_gateway(prepared: Prepared, mode: CacheMode, spend_cap: SpendCap, cache: CallCache | None, *,
                  on_call: Callable[[CallRecord], None] | None, offline: bool = False,
                  store: ResultsStore | None = None, session: int | None = None, team: Team | None = None) -> Gateway:
    """The session's one gateway: every model resolved now (a missing key fails before anything is spent).

    `offline` (a dry run, whose gateway only reads the cache) resolves models without their API keys. With a
    `store` and `session`, the calls of batch models go through their providers' batch APIs (`runner.ladder.batches`).
    With `team`, the RPM and TPM limits are the team's.
    """
    spec = prepared.spec
    targets: dict[str, Target] = {}
    for model in spec.models:
        if model.model not in targets:  # entries sharing a model string agree on their client (parse_spec checked)
            options = ProviderOptions(api_key_env=model.api_key_env, base_url=model.base_url,
                                      timeout_s=model.request_timeout_s, transport=model.transport,
                                      pool_size=_pool_size(spec, model.model), offline=offline)
            targets[model.model] = Target.of(model.model, prepared.resolve(model.model, options))
    for extra in extra_models(prepared):  # a plan parser's model, say: the provider's defaults
        if extra not in targets:
            targets[extra] = Target.of(extra, prepared.resolve(extra, ProviderOptions(pool_size=spec.concurrency,
                                                                                      offline=offline)))
    display = {string: target.limit_key.display for string, target in targets.items()}
    # The limiter looks limits up by display name, and two model strings may still reach one server and model
    # (`…/v1` and `…/v1/`): one set of numbers must not silently win over the other.
    require_agreement(spec.models, lambda model: display[model.model], ("rpm", "tpm"), str(prepared.spec_path),
                      "which reaches the same model at the same endpoint")
    adaptive = {display[model.model] for model in spec.models if model.adaptive}  # one limit per server and model
    limits = {display[model.model]: Limits(rpm=model.rpm, tpm=model.tpm, adaptive=display[model.model] in adaptive,
                                           max_concurrency=_pool_size(spec, model.model)
                                           if display[model.model] in adaptive else None)  # how far it may grow
              for model in spec.models}
    policy = spec.retry.policy()
    batches = None
    if store is not None and session is not None and (capable := _batch_providers(prepared, targets)):
        batches = BatchTransport(store, session, capable, prepared.batched, size=spec.batch_size,
                                 flush_s=spec.batch_flush_s, poll_s=spec.batch_poll_s)
    return Gateway(
        resolve=lambda model: targets[model].model, cache=cache, mode=mode, spend_cap=spend_cap,
        # a 429's pause of a model's other calls ends when the retry policy would have given up waiting for it
        limiter=RateLimiter(limits, max_pause_s=policy.max_retry_after_s,
                            shared=team.buckets if team is not None else None), retrier=Retrier(policy),
        prices={m.model: m.prices for m in spec.models if m.prices is not None}, price_table=prepared.prices,
        on_call=on_call, batches=batches,
    )


def _open_cache(prepared: Prepared, mode: CacheMode, run_dir: Path | None = None,
                team: Team | None = None) -> CallCache | None:
    """The run's cache: the team database's with `[team]` (one cache for every process, sharing `team`'s outage;
    answers it cannot take during an outage wait in `run_dir`'s spool), else the cache folder's; None for cache mode
    `off`."""
    spec = prepared.spec
    if mode is CacheMode.OFF:
        return None
    if spec.team is not None:
        require_team_client(str(prepared.spec_path))
        from runner.team import TeamCache, team_url

        return TeamCache(team_url(spec.team.url_env, str(prepared.spec_path)), overwrite=mode is CacheMode.REFRESH,
                         outage_s=spec.team.outage_s, outage=team.outage if team is not None else None,
                         spool=run_dir / TEAM_SPOOL if run_dir is not None else None)
    return CacheStore(prepared.cache_dir)


def _batch_providers(prepared: Prepared, targets: dict[str, Target]) -> dict[str, BatchModel]:
    """The provider of each model string of the spec whose provider has a batch API (batched now or not: an earlier
    session may have left a batch of it live)."""
    return {model.model: provider for model in prepared.spec.models
            if can_batch(model.model) and isinstance(provider := targets[model.model].model, BatchModel)}


def _pool_size(spec: RunSpec, model: str) -> int:
    """Connections one model string needs at most: the rollouts of its entries that may be in flight at once."""
    bounds = [entry.rollout_bound or spec.concurrency for entry in spec.models if entry.model == model]
    return min(spec.concurrency, sum(bounds))


def bind_model(prepared: Prepared, gateway: Any, key: RolloutKey) -> RolloutModel:
    """The model a strategy sees for `key`: the model's provider string and sampling, the key's sample."""
    model = prepared.model(key.model)
    return RolloutModel(gateway, model.model, model.over(prepared.spec.sampling), key.sample, prepared.spec.max_calls)
