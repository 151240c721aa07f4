"""A run from spec to stored results: prepare, check the run directory, run every pending rollout, evaluate, export.

    prepare(spec_path)          spec -> benchmark -> tasks -> strategies -> rollout keys (no I/O on the run dir)
    execute(prepared, run_dir)  resume check -> gateway -> scheduler -> results store -> evaluation -> files

Everything the engine knows about a benchmark comes through `benchmarks.base.Benchmark`; every LLM call goes
through one `Gateway` (cache, spend cap, rate limits, retries).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import signal
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError
from rich.console import Console

from benchmarks.base import Benchmark, Strategy, Task
from benchmarks.offline import OfflineModels, is_offline, offline_models
from benchmarks.registry import get_benchmark
from cache import CallCache
from cache.modes import CacheMode
from cache.store import CacheStore
from datahome import default_cache_dir
from errors import ConfigError, UserError
from providers.batching import BatchModel
from providers.prices import nearest_priced, price_for
from providers.registry import can_batch, check_model, resolve_model
from runner.engine.expand import check_size, expand, select_tasks, split_name
from runner.engine.identity import Identity, bind, planned_keys, save_identity
from runner.engine.progress import LiveProgress, RunStats
from runner.engine.rollout import RolloutModel, record_call, run_rollout
from runner.engine.scheduler import BUDGET, COMPLETED, INTERRUPTED, Scheduler
from runner.engine.shard import Shard
from runner.engine.spec import (
    ModelSpec,
    RunSpec,
    batch_models,
    changed_fields,
    load_spec,
    parse_options,
    require_agreement,
    with_overrides,
)
from runner.ladder.batches import BatchTransport
from runner.ladder.budget import SpendCap
from runner.ladder.calls import CallRecord
from runner.ladder.gateway import Gateway, Target
from runner.ladder.ratelimit import Limits, RateLimiter
from runner.ladder.retry import Retrier
from runner.store.ledger import StoreLedger, settle_left_open
from runner.store.outputs import write_outputs
from runner.store.provenance import stamp_session
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.results import load_run
from runner.store.shards import find_shards
from runner.store.writer import LOCK_FILE, RESULTS_FILE, ResultsStore

if TYPE_CHECKING:  # psycopg is an extra (`tripbench[team]`): imported only by runs with `[team]`
    from runner.team import Team
    from runner.team.shards import ShardClaim

FAILED = "failed"
EVALUATE_EVERY_S = 30.0
"""How often finished rollouts are scored while a run goes on (for reports on a live run)."""
TEAM_SPOOL = "team-unwritten.sqlite"
"""In a team run's directory: answers paid for while the team database was away, until it takes them."""


@dataclass(slots=True)
class Prepared:
    """A validated spec with everything loaded that does not touch the run directory or spend money."""

    spec: RunSpec
    spec_path: Path
    benchmark: Benchmark
    options: BaseModel
    tasks: list[Task]
    strategies: dict[str, Strategy]
    keys: list[RolloutKey]
    cache_dir: Path
    batched: frozenset[str]
    """The model strings whose calls go through their provider's batch API (checked able to: `batch_models`)."""
    offline: OfflineModels
    """The run's offline models (`offline:oracle`, ...): its benchmark's answers to the prompts of its tasks."""
    shard: Shard | None = None
    """The shard of the run this process runs (`keys` holds its share), None for the whole run."""
    replay_of: str | None = None
    """The sha256 of the pack this run replays (`tripbench replay`), stamped into its provenance."""

    @property
    def split(self) -> str:
        return split_name(self.spec)

    def model(self, label: str) -> ModelSpec:
        return next(m for m in self.spec.models if m.label == label)


def default_run_dir(spec_path: Path) -> Path:
    """The spec's own folder when that is a run directory (`RUN_DIR/spec.toml`, say; a sharded run's folder too),
    else `runs/<spec name>` beside the spec file."""
    folder = spec_path.parent
    if any((folder / name).is_file() for name in (RESULTS_FILE, LOCK_FILE)) or find_shards(folder) is not None:
        return folder
    return spec_path.parent / "runs" / spec_path.stem


def prepare(spec_path: Path, *, overrides: Mapping[str, Any] | None = None, spec: RunSpec | None = None,
            shard: Shard | None = None) -> Prepared:
    """Reads the spec (with command-line overrides), loads the benchmark, its tasks and strategies, expands the keys.

    Args:
        spec_path: The spec file.
        overrides: Spec settings the command line replaces (`max_cost`, `limit`), validated as the spec's own.
        spec: The spec `spec_path` is about to hold (one made from command-line flags): checked before anything is
            written.
        shard: Only this shard's rollouts (`runner.engine.shard`).

    Raises:
        ConfigError: a bad spec or a strategy the benchmark does not have.
        UserError: an unknown benchmark, missing data (DataError) and the like.
    """
    source = str(spec_path)
    spec = with_overrides(spec if spec is not None else load_spec(spec_path), overrides or {}, "the command line")
    folder = spec_path.absolute().parent  # relative paths in a spec are relative to its file, printed resolved
    benchmark = get_benchmark(spec.benchmark)
    options = parse_options(benchmark.options_model, spec.options, source, relative_to=folder)
    if identity := benchmark.identity(options):  # stored with the spec, so resuming compares them (check_resume)
        spec = spec.model_copy(update={"options": {**spec.options, **identity}})
    splits = benchmark.splits  # checked here, once for all benchmarks
    if spec.split is not None and splits and spec.split not in splits:
        raise ConfigError(source, "split", f"one of {', '.join(splits)} (or queries = FILE)", spec.split)
    for model in spec.models:  # a misspelt provider fails before the run directory is touched
        if not is_offline(model.model):
            check_model(model.model)
    batched = batch_models(spec, source)
    if spec.team is not None:  # before the run directory is touched: no team, no run
        require_team_client(source)
        from runner.team import team_url

        team_url(spec.team.url_env, source)
    offered = {strategy.name: strategy for strategy in benchmark.strategies(options)}
    for position, name in enumerate(spec.strategies):
        if name not in offered:
            raise ConfigError(source, f"strategies[{position}]", f"one of {', '.join(sorted(offered))}", name)
    if spec.max_cost is not None:  # a cap needs a price for every model, before anything is spent
        for position, model in enumerate(spec.models):
            if price_for(model.model, {model.model: model.prices} if model.prices else None) is None:
                near = nearest_priced(model.model)
                raise ConfigError(source, f"models[{position}].prices", "a price table (input, output USD per "
                                  "million tokens) or a price table entry (\"PROVIDER:NAME\"): max_cost is set and "
                                  f"the price table does not know {model.model}"
                                  + (f" (did you mean {near}?)" if near else ""))
        prices = {model.model: model.prices for model in spec.models if model.prices}
        for extra in benchmark.extra_models(options):
            if price_for(extra, prices) is None:
                raise ConfigError(source, "options", f"a model with a known price: max_cost is set and the benchmark "
                                  f"also calls {extra}, which the bundled price table does not know")
    split: str | Path = spec.split if spec.split is not None else folder / (spec.queries or "")
    tasks = select_tasks(spec, benchmark.load_tasks(split, options), source)
    # the offline models, when the run calls any (their module loads then only), checked as the providers above
    called = [*(model.model for model in spec.models), *benchmark.extra_models(options)]
    offline = offline_models(benchmark, tasks, options) if any(map(is_offline, called)) else OfflineModels()
    for string in filter(is_offline, called):
        offline.resolve(string)
    cache_dir = folder / spec.cache_dir if spec.cache_dir else default_cache_dir()
    check_size(spec, len(tasks), source)
    keys = expand(spec, tasks, benchmark.name)
    if shard is not None:
        keys = shard.select(keys)
    return Prepared(spec, spec_path, benchmark, options, list(tasks), offered, keys, cache_dir, batched, offline,
                    shard)


def build_gateway(prepared: Prepared, mode: CacheMode, spend_cap: SpendCap,
                  on_call: Callable[[CallRecord], None] | None = record_call,
                  offline: bool = False, store: ResultsStore | None = None,
                  session: int | None = None, team: Team | None = None,
                  cache: CallCache | None | Literal["open"] = "open") -> tuple[Gateway, CallCache | None]:
    """The run's one gateway: every model resolved now (a missing key fails before anything is spent).

    `offline` (a dry run, whose gateway only reads the cache) resolves models without their API keys. With a
    `store` and `session`, the calls of batch models go through their providers' batch APIs (`runner.ladder.batches`).
    With `team`, the RPM and TPM limits are the team's. `cache`: the one the caller opened (`open_cache`), or
    "open" to open it here.

    Returns:
        The gateway and the cache it uses (close it after the gateway), None for cache mode `off`.
    """
    spec = prepared.spec
    targets: dict[str, Target] = {}
    for model in spec.models:
        if model.model not in targets:  # entries sharing a model string agree on their client (parse_spec checked)
            provider = prepared.offline.resolve(model.model) if is_offline(model.model) else resolve_model(
                model.model, api_key_env=model.api_key_env, base_url=model.base_url, timeout_s=model.request_timeout_s,
                transport=model.transport, pool_size=_pool_size(spec, model.model), offline=offline)
            targets[model.model] = Target.of(model.model, provider)
    for extra in extra_models(prepared):  # a plan parser's model, say: the provider's defaults
        if extra not in targets:
            targets[extra] = Target.of(extra, prepared.offline.resolve(extra) if is_offline(extra) else
                                       resolve_model(extra, pool_size=spec.concurrency, offline=offline))
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
    if cache == "open":
        cache = open_cache(prepared, mode)
    gateway = Gateway(
        resolve=lambda model: targets[model].model, cache=cache, mode=mode, spend_cap=spend_cap,
        # a 429's pause of a model's other calls ends when the retry policy would have given up waiting for it
        limiter=RateLimiter(limits, max_pause_s=policy.max_retry_after_s,
                            shared=team.buckets if team is not None else None), retrier=Retrier(policy),
        prices={m.model: m.prices for m in spec.models if m.prices is not None}, on_call=on_call, batches=batches,
    )
    return gateway, cache


def open_cache(prepared: Prepared, mode: CacheMode, run_dir: Path | None = None) -> CallCache | None:
    """The run's cache: the team database's with `[team]` (one cache for every process; answers it cannot take during
    an outage wait in `run_dir`'s spool), else the cache folder's; None for cache mode `off`."""
    spec = prepared.spec
    if mode is CacheMode.OFF:
        return None
    if spec.team is not None:
        require_team_client(str(prepared.spec_path))
        from runner.team import TeamCache, team_url

        return TeamCache(team_url(spec.team.url_env, str(prepared.spec_path)), overwrite=mode is CacheMode.REFRESH,
                         outage_s=spec.team.outage_s, spool=run_dir / TEAM_SPOOL if run_dir is not None else None)
    return CacheStore(prepared.cache_dir)


def require_team_client(source: str) -> None:
    """Raises `ConfigError` when `[team]` is set and PostgreSQL's client (the `team` extra) is not installed."""
    if importlib.util.find_spec("psycopg") is None:
        raise ConfigError(source, "team", "PostgreSQL's client installed: pip install 'tripbench[team]'")


def _batch_providers(prepared: Prepared, targets: dict[str, Target]) -> dict[str, BatchModel]:
    """The provider of each model string of the spec whose provider has a batch API (batched now or not: an earlier
    session may have left a batch of it live)."""
    return {model.model: provider for model in prepared.spec.models
            if can_batch(model.model) and isinstance(provider := targets[model.model].model, BatchModel)}


def extra_models(prepared: Prepared) -> list[str]:
    """Models the benchmark's strategies call besides those under test (`Benchmark.extra_models`)."""
    return list(prepared.benchmark.extra_models(prepared.options))


def _pool_size(spec: RunSpec, model: str) -> int:
    """Connections one model string needs at most: the rollouts of its entries that may be in flight at once."""
    bounds = [entry.rollout_bound or spec.concurrency for entry in spec.models if entry.model == model]
    return min(spec.concurrency, sum(bounds))


def bind_model(prepared: Prepared, gateway: Any, key: RolloutKey) -> RolloutModel:
    """The model a strategy sees for `key`: the model's provider string and sampling, the key's sample."""
    model = prepared.model(key.model)
    return RolloutModel(gateway, model.model, model.over(prepared.spec.sampling), key.sample, prepared.spec.max_calls)


def planned_in(prepared: Prepared, identity: Identity) -> list[RolloutKey]:
    """The rollouts the run plans (every part of its identity), this shard's share for a shard."""
    keys = planned_keys(identity)
    return prepared.shard.select(keys) if prepared.shard is not None else keys


def planned_counts(keys: Sequence[RolloutKey]) -> dict[str, dict[str, int]]:
    """Rollouts per model and strategy."""
    counts: dict[str, dict[str, int]] = {}
    for key in keys:
        counts.setdefault(key.model, {}).setdefault(key.strategy, 0)
        counts[key.model][key.strategy] += 1
    return counts


SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What stops a run: the first gracefully, a second at once."""


RemoteRun = Callable[["Prepared", Sequence[RolloutKey], Callable[[RolloutRecord], Awaitable[None]], Scheduler],
                    Awaitable[tuple[str, str]]]
"""Runs pending rollouts elsewhere (`runner.engine.ray_workers.on_ray`, `runner.engine.replay_processes`), storing
each record through the callback (here: this process stays the only writer of the results store), under the
session's scheduler (its `stop()`); returns the outcome (`runner.engine.scheduler`) and a note for the report."""
Spread = Callable[["Prepared", int], RemoteRun | None]
"""Chooses, from the number of pending rollouts, where a session runs them: a `RemoteRun`, or None for here
(`runner.engine.replay_processes.for_replay`)."""


@dataclass(slots=True)
class RunReport:
    """What a session did."""

    run_dir: Path
    outcome: str
    """`completed`, `interrupted`, `budget` (the spend cap stopped it) or `failed`."""
    ran: int = 0
    """Rollouts finished in this session."""
    pending: int = 0
    """Rollouts this session started with (not yet finished)."""
    rerun: Counter[str] = field(default_factory=Counter)
    """Stored rollouts among `pending`, by the status they had (provider errors of an outage, the spend cap's cuts)."""
    statuses: Counter[str] = field(default_factory=Counter)
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_resume(previous: dict[str, Any] | None, spec: RunSpec, source: str, force: bool) -> None:
    """Refuses to resume a run whose results-relevant settings changed (unless `force`), naming the fields."""
    if previous is None or force:
        return
    try:
        before = RunSpec.model_validate(previous).result_fields()
    except ValidationError:
        raise UserError(f"{source}: the run directory was started by an incompatible spec format; "
                        "use --force to continue anyway, or another --run-dir") from None
    after = spec.result_fields()
    changed = changed_fields(before, after)
    if changed:
        values = "; ".join(f"{path}: {_shown(before, path)} then, {_shown(after, path)} now" for path in changed)
        older = (" (a setting unset then may be one the tripbench that started the run did not have yet: it ran "
                 "another way)" if any(_shown(before, path) == "unset" for path in changed) else "")
        raise UserError(f"{source}: the run directory was started with other settings for {', '.join(changed)} "
                        f"({values}){older}; its results would mix both: use another --run-dir, or --force to "
                        "continue anyway")


def _shown(fields: dict[str, Any], path: str) -> str:
    """The value at a dotted path of `result_fields()`, short, for a message (`unset` when absent or None)."""
    value: Any = fields
    while path and isinstance(value, dict):  # keys may hold dots themselves (a model named gpt-4.1)
        key = next((key for key in value if path == key or path.startswith(f"{key}.")), None)
        value, path = (value[key], path[len(key) + 1:]) if key is not None else (None, "")
    text = "unset" if value is None else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True, slots=True)
class Watch:
    """How a session shows its progress: live rows on `console`, or (`live` False) a plain line there every
    `log_every_s` seconds when set."""

    console: Console | None = None
    live: bool = True
    log_every_s: float | None = None


@dataclass(slots=True)
class Session:
    """One session of a run with what it has open while its rollouts run."""

    prepared: Prepared
    store: ResultsStore
    id: int
    """The session's id in the results store."""
    gateway: Gateway
    spend_cap: SpendCap
    tools: Any
    """The benchmark's sandbox tools (`Benchmark.open_tools`)."""
    report: RunReport


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """What a session finds in its run directory: the rollouts finished before, and those it runs."""

    finished: set[RolloutKey]
    pending: list[RolloutKey]


async def execute(prepared: Prepared, run_dir: Path, *, force: bool = False, progress_console: Console | None = None,
                  show_progress: bool = True, log_every_s: float | None = None, grace_s: float = 30.0,
                  lock_fd: int | None = None, remote: RemoteRun | None = None,
                  spread: Spread | None = None, extend: bool = False) -> RunReport:
    """Runs every rollout of the spec not yet finished in `run_dir`, then evaluates and exports.

    `lock_fd`: the run directory's lock, when the caller took it already (`runner.store.writer.lock_run_dir`).
    `remote`: run the rollouts there (the actors of a Ray cluster: `runner.engine.ray_workers.on_ray`); this
    process stays the only writer of the results store. `spread`: without `remote`, where the pending rollouts run,
    chosen once their number is known (a replay's worker processes). `extend`: add the spec's rollouts to a run made
    by another spec (`runner.engine.identity`).

    SIGINT / SIGTERM stop admission and give in-flight rollouts `grace_s` seconds; a second signal cancels them.
    `show_progress` draws live rows on `progress_console`; `log_every_s` prints a plain line there that often.

    Raises:
        UserError: the run directory holds another run (see `check_resume`), or the run had to stop (a rejected key).
    """
    claim = await _claim_shard(prepared, run_dir)
    try:
        store = await ResultsStore.open(run_dir, lock_fd)
    except BaseException:
        if claim is not None:
            await claim.release()
        raise
    report = RunReport(run_dir, FAILED)
    interrupts = _Interrupts(report)
    try:
        await _execute(prepared, run_dir, store, report, interrupts, claim, force, extend,
                       Watch(progress_console, show_progress, log_every_s), grace_s,
                       (lambda _prepared, _pending: remote) if remote is not None else spread)
    except asyncio.CancelledError:
        if not interrupts.interrupted:
            raise
        asyncio.current_task().uncancel()  # type: ignore[union-attr]  # a task runs this
    finally:
        interrupts.restore()
    return report


class _Interrupts:
    """Ctrl-C and SIGTERM outside the rollouts (opening the run, scoring, writing the outputs): the session ends
    `interrupted` and closed, whatever it finished kept, as a signal during the rollouts ends it (the scheduler's own
    graceful stop, in `_run_pending`). The work under way is cancelled; the same command resumes it."""

    def __init__(self, report: RunReport) -> None:
        self._report = report
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        self._previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
        self.interrupted = False
        self.armed = True
        """False while everything opened is being closed: a signal then would cut the closing short."""
        self.install()

    def install(self) -> None:
        """Takes the signals (again, after the rollouts' own handlers are gone)."""
        for signum in SIGNALS:
            self._loop.add_signal_handler(signum, self._interrupt)

    def _interrupt(self) -> None:
        if self.armed and not self.interrupted and self._task is not None:
            self.interrupted = True
            self._report.outcome = INTERRUPTED
            self._task.cancel()

    def restore(self) -> None:
        """Gives the signals back to the handlers they had (the loop's removal would leave SIGTERM's default, the
        end of the process)."""
        for signum, handler in self._previous.items():
            self._loop.remove_signal_handler(signum)
            signal.signal(signum, handler)


async def _execute(prepared: Prepared, run_dir: Path, store: ResultsStore, report: RunReport,
                   interrupts: _Interrupts, claim: ShardClaim | None, force: bool, extend: bool, watch: Watch,
                   grace_s: float, spread: Spread | None) -> None:
    spec = prepared.spec
    # Whatever ends the run (an error, a store that cannot write at the end), everything opened is closed, newest
    # first, each even if one before it failed: an unclosed store or cache would keep the process alive and the run
    # directory locked.
    async with contextlib.AsyncExitStack() as opened:
        if claim is not None:
            opened.push_async_callback(claim.release)
        opened.push_async_callback(store.close)
        previous = await store.last_spec()
        check_resume(previous, spec, str(prepared.spec_path), force)
        identity = await bind(prepared, run_dir, previous, extend)
        finished, again = await store.resume_plan()
        plan = ResumePlan(finished, [key for key in prepared.keys if key not in finished])
        report.pending = len(plan.pending)
        report.rerun.update(again[key] for key in plan.pending if key in again)
        session = await store.start_session(spec.public_dump(), str(prepared.spec_path),
                                            version("tripbench"), planned_counts(planned_in(prepared, identity)))
        save_identity(run_dir, identity)
        stamp_session(run_dir, session, spec.public_dump(), spec.cache.value,
                      prepared.replay_of)
        opened.push_async_callback(lambda: store.end_session(session, report.outcome))
        team = None
        if spec.team is not None:  # fails closed: a team run whose database cannot be reached sends nothing
            require_team_client(str(prepared.spec_path))
            from runner.team import Team, team_url

            team = await Team.join(team_url(spec.team.url_env, str(prepared.spec_path)), stale_s=spec.team.stale_s,
                                   outage_s=spec.team.outage_s)
            opened.push_async_callback(team.aclose)  # after the ledgers and the gateway: last, as it leaves
        store_ledger = StoreLedger(store, session)
        opened.push_async_callback(store_ledger.aclose)
        ledger = (await team.ledger(spec.team.budget, spec.max_cost, local=store_ledger, claim=claim,
                                    spool=run_dir / TEAM_SPOOL)
                  if team is not None and spec.team is not None else store_ledger)
        cache = open_cache(prepared, spec.cache, run_dir)
        if cache is not None:
            opened.callback(cache.close)
        await settle_left_open(store, prepared.cache_dir, cache)  # calls a killed session had in flight
        spend_cap = SpendCap(spec.max_cost, spent_usd=await store.spent_usd(), ledger=ledger)
        gateway, _ = build_gateway(prepared, spec.cache, spend_cap, store=store, session=session, team=team,
                                   cache=cache, offline=spec.cache is CacheMode.REPLAY)  # it never sends: no key
        opened.push_async_callback(gateway.aclose)  # before the cache closes: it writes the entries still queued
        await gateway.resume_batches()  # batches a killed session submitted: waited for, never sent again
        tools = await asyncio.to_thread(prepared.benchmark.open_tools, prepared.options)
        if (close := getattr(tools, "close", None)) is not None:
            opened.callback(close)
        await store.save_tasks(prepared.benchmark.name, prepared.split, prepared.tasks)
        outcome = await _run_pending(Session(prepared, store, session, gateway, spend_cap, tools, report), plan,
                                     watch, grace_s, spread)
        interrupts.install()
        report.notes += await _evaluate(prepared, store, run_dir)
        if (batches := gateway.batch_counts) is not None and (twice := batches.maybe_twice):
            report.notes.append(f"{twice} batch requests were sent again after their batch's submission got no "
                                "answer and the batch was not found among the provider's (a Message Batch keeps no "
                                "tag; a running one is told apart only by its size): they may be billed twice")
        report.outcome = outcome
        interrupts.armed = False
    interrupts.armed = True
    if prepared.shard is not None:  # a shard holds a share of each submission: the merged run writes them
        report.notes.append(f"shard {prepared.shard}: submission files are written from all shards together by "
                            f"`tripbench report {run_dir.parent}`")
        return
    with load_run(run_dir) as results:
        files, notes = await asyncio.to_thread(
            write_outputs, results, prepared.benchmark, prepared.tasks, prepared.split, spec.samples)
    report.files, report.notes = files, report.notes + notes


def booked(session: Session, save: Callable[[RolloutRecord], Awaitable[None]]
           ) -> Callable[[RolloutRecord], Awaitable[None]]:
    """`save`, booking first in this run's store what the record's calls cost where they ran (a Ray actor, whose
    spend cap is the team database's): the run's money then counts its stored rollouts, as `tripbench status` shows."""
    async def save_booked(record: RolloutRecord) -> None:
        paid = [(call.model, call.cache_key, call.cost_usd) for call in record.calls if not call.hit and call.cost_usd]
        if paid:
            charges = await session.store.book(session.id, paid, [])
            await session.store.book(session.id, [], [(charge, cost) for charge, (_, _, cost) in zip(
                charges, paid, strict=True)])
        await save(record)
    return save_booked


async def _claim_shard(prepared: Prepared, run_dir: Path) -> ShardClaim | None:
    """A shard's claim in the team database (`runner.team.shards`), so that it runs in one process on any machine;
    None for a run that is not a shard of a team run. The run is known by its result-changing settings and its
    folder's name, the same on every machine.

    Raises:
        ShardTaken: another process runs this shard.
    """
    team = prepared.spec.team
    if prepared.shard is None or team is None:
        return None
    require_team_client(str(prepared.spec_path))
    from runner.team import team_url
    from runner.team.link import Outage
    from runner.team.shards import ShardClaim

    run = {"settings": prepared.spec.result_fields(), "folder": run_dir.parent.name}
    url = team_url(team.url_env, str(prepared.spec_path))
    return await ShardClaim.take(url, run, str(prepared.shard), Outage(url, team.outage_s))


async def _run_pending(session: Session, plan: ResumePlan, watch: Watch, grace_s: float,
                       spread: Spread | None) -> str:
    """Runs the plan's pending rollouts (here, or where `spread` chooses: a Ray cluster's actors, a replay's worker
    processes), storing each as it finishes; returns the outcome (`runner.engine.scheduler`)."""
    prepared, spec, spend_cap, report = session.prepared, session.prepared.spec, session.spend_cap, session.report
    tasks = {task.id: task for task in prepared.tasks}
    # Once the cap refused a call with nothing else reserved, no new rollout starts; those running end on their own.
    scheduler = Scheduler(spec.concurrency, {m.label: m.rollout_bound for m in spec.models},
                          admit=lambda: not spend_cap.exhausted, grace_s=grace_s)
    stats = RunStats(spend_cap, batches=session.gateway.batch_counts,
                     spent_before=await asyncio.to_thread(_spent_by_model, session.store.path.parent))
    totals = {m.label: 0 for m in spec.models}
    done_before = dict.fromkeys(totals, 0)
    for key in prepared.keys:
        totals[key.model] += 1
        done_before[key.model] += key in plan.finished
    live = LiveProgress(stats, totals, done_before, watch.console, disable=not watch.live,
                        log_every_s=watch.log_every_s)

    async def save(record: RolloutRecord) -> None:
        await session.store.save_rollout(record, session.id)
        report.ran += 1
        report.statuses[record.result.status] += 1
        live.done(record)

    async def run_one(key: RolloutKey) -> None:
        await save(await run_rollout(key, tasks[key.task], prepared.strategies[key.strategy],
                                     bind_model(prepared, session.gateway, key), session.tools,
                                     stats.observer(key.model)))

    async def save_run_elsewhere(record: RolloutRecord) -> None:
        observe = stats.observer(record.key.model)  # its calls, seen here only now
        for call in record.calls:
            observe(call)
        await save(record)

    loop = asyncio.get_running_loop()

    def stop() -> None:
        live.stopping(scheduler.in_flight, grace_s, again=scheduler.outcome == INTERRUPTED)
        scheduler.stop()
    for signum in SIGNALS:
        loop.add_signal_handler(signum, stop)
    finished_running = asyncio.Event()
    evaluator = loop.create_task(_evaluate_every(prepared, session.store, EVALUATE_EVERY_S, finished_running))
    try:
        with live:
            if (remote := spread(prepared, len(plan.pending)) if spread is not None else None) is None:
                outcome = await scheduler.run(plan.pending, run_one)
            else:
                outcome, note = await remote(prepared, plan.pending, booked(session, save_run_elsewhere), scheduler)
                report.notes.append(note)
    finally:
        finished_running.set()
        await evaluator
        for signum in SIGNALS:
            loop.remove_signal_handler(signum)
    return BUDGET if outcome == COMPLETED and spend_cap.exhausted else outcome


def _spent_by_model(run_dir: Path) -> dict[str, float]:
    """What each model label's stored rollouts cost (model rows count money as the total row does: all sessions)."""
    spent: dict[str, float] = {}
    with load_run(run_dir) as results:
        for rollout in results.rollouts:
            spent[rollout.key.model] = spent.get(rollout.key.model, 0.0) + rollout.cost_usd
    return spent


async def _evaluate_every(prepared: Prepared, store: ResultsStore, every_s: float, done: asyncio.Event) -> None:
    """Scores the rollouts finished so far every `every_s` seconds until `done`, so a report on a run still going
    has pass rates for what finished (the last pass, after the rollouts, is `execute`'s)."""
    while not done.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), every_s)
        if not done.is_set():
            await _evaluate(prepared, store, store.path.parent)


async def evaluate_stored(benchmark: Benchmark, options: BaseModel, modes: Sequence[str], tasks: Sequence[Task],
                          split: str, store: ResultsStore, run_dir: Path) -> list[str]:
    """Scores the stored rollouts of `split` that have no evaluation yet, once per evaluator mode in `modes`.

    Returns:
        Notes on modes the benchmark refused (the rollouts stay stored; `tripbench` can score them later).
    """
    by_id = {task.id: task for task in tasks}
    notes: list[str] = []
    with load_run(run_dir) as results:
        for mode in modes:
            scored = results.evaluated(mode)
            todo = [r for r in results.rollouts if r.id not in scored and r.key.task in by_id
                    and r.key.benchmark == benchmark.name and r.key.split == split]
            if not todo:
                continue
            stored = [results.result(r) for r in todo]
            try:
                evaluations = await asyncio.to_thread(
                    benchmark.evaluate, [by_id[r.key.task] for r in todo], stored, mode, options)
            except UserError as exc:
                notes.append(f"evaluation {mode!r} skipped: {exc}")
                continue
            await store.save_evaluations(mode, [(r.id, ev) for r, ev in zip(todo, evaluations, strict=True)
                                                if ev is not None])
    return notes


async def _evaluate(prepared: Prepared, store: ResultsStore, run_dir: Path) -> list[str]:
    """`evaluate_stored` for the run's split, tasks and evaluator modes."""
    return await evaluate_stored(prepared.benchmark, prepared.options, prepared.spec.evaluate, prepared.tasks,
                                 prepared.split, store, run_dir)
