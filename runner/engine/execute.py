"""A run from spec to stored results: prepare, check the run directory, run every pending rollout, evaluate, export.

    prepare(spec_path)          spec -> benchmark -> tasks -> strategies -> rollout keys (`runner.engine.prepared`)
    execute(prepared, run_dir)  resume check -> engine session -> scheduler -> results store -> evaluation -> files

Everything the engine knows about a benchmark comes through `benchmarks.base.Benchmark`; every LLM call goes
through one `Gateway` (cache, spend cap, rate limits, retries), opened with the rest of what the rollouts need by
one `EngineSession` (`runner.engine.session`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError
from rich.console import Console

from benchmarks.base import Benchmark, Task
from errors import UsageError, UserError
from runner.engine.identity import Identity, bind, planned_keys, save_identity
from runner.engine.prepared import Prepared, require_team_client
from runner.engine.progress import LiveProgress, RunStats
from runner.engine.scheduler import BUDGET, COMPLETED, INTERRUPTED, Scheduler
from runner.engine.session import EngineSession, Purpose
from runner.engine.spec import RunSpec, changed_fields
from runner.store.outputs import write_outputs
from runner.store.provenance import stamp_session
from runner.store.records import RolloutKey, RolloutRecord
from runner.store.results import StoredResults, load_run
from runner.store.writer import ResultsStore

if TYPE_CHECKING:  # psycopg is an extra (`tripbench[team]`): imported only by runs with `[team]`
    from runner.team.shards import ShardClaim

FAILED = "failed"
EVALUATE_EVERY_S = 30.0
"""How often finished rollouts are scored while a run goes on (for reports on a live run)."""
EVALUATE_BATCH = 200
"""Stored rollouts scored and saved at a time (`evaluate_stored`)."""


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
    calls: int = 0
    """LLM calls of this session's rollouts, cache hits included."""
    hits: int = 0
    """Those the cache answered."""
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_resume(previous: dict[str, Any] | None, spec: RunSpec, source: str, force: bool) -> None:
    """Refuses to resume a run whose results-relevant settings changed (unless `force`), naming the fields: a usage
    error (exit 2), as the same conflict given by flags is."""
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
        raise UsageError(f"{source}: the run directory was started with other settings for {', '.join(changed)} "
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

    engine: EngineSession
    """The gateway, spend cap and tools (`runner.engine.session`)."""
    store: ResultsStore
    id: int
    """The session's id in the results store."""
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
        stamp_session(run_dir, session, spec.public_dump(), spec.cache.value, prepared.prices, prepared.replay_of)
        opened.push_async_callback(lambda: store.end_session(session, report.outcome))
        # fails closed: a team run whose database cannot be reached sends nothing
        engine = await opened.enter_async_context(EngineSession(prepared, Purpose.RUN, store=store,
                                                                session_id=session, claim=claim))
        await store.save_tasks(prepared.benchmark.name, prepared.split, prepared.tasks)
        outcome = await _run_pending(Session(engine, store, session, report), plan, watch, grace_s, spread)
        interrupts.install()
        report.notes += await _evaluate(prepared, store, run_dir)
        if (batches := engine.gateway.batch_counts) is not None and (twice := batches.maybe_twice):
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
    with load_run(run_dir, plans=False) as results:  # each plan read as its line is written
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
    engine, report = session.engine, session.report
    prepared, spec, spend_cap = engine.prepared, engine.prepared.spec, engine.spend_cap
    # Once the cap refused a call with nothing else reserved, no new rollout starts; those running end on their own.
    scheduler = Scheduler(spec.concurrency, {m.label: m.rollout_bound for m in spec.models},
                          admit=lambda: not spend_cap.exhausted, grace_s=grace_s)
    stats = RunStats(spend_cap, batches=engine.gateway.batch_counts,
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
        await save(await engine.rollout(key, stats.observer(key.model)))

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
        report.calls, report.hits = stats.total.calls, stats.total.hits
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
    """Scores the stored rollouts of `split` that have no evaluation yet, once per evaluator mode in `modes`: a batch
    of `EVALUATE_BATCH` at a time through one evaluator (`Benchmark.open_evaluator`), each batch saved before the
    next is read, so memory holds a batch's plans and evaluations, never the run's.

    Returns:
        Notes on modes the benchmark refused (the rollouts stay stored; `tripbench` can score them later).
    """
    by_id = {task.id: task for task in tasks}
    notes: list[str] = []
    evaluator = benchmark.open_evaluator(options)
    try:
        with load_run(run_dir, plans=False) as results:
            for mode in modes:
                scored = results.evaluated(mode)
                todo = [r for r in results.rollouts if r.id not in scored and r.key.task in by_id
                        and r.key.benchmark == benchmark.name and r.key.split == split]
                try:
                    for start in range(0, len(todo), EVALUATE_BATCH):
                        batch = todo[start:start + EVALUATE_BATCH]  # plans parsed one at a time (`StoredResults`)
                        evaluations = await asyncio.to_thread(evaluator.evaluate, [by_id[r.key.task] for r in batch],
                                                              StoredResults(results, batch), mode)
                        saved = [(r.id, ev) for r, ev in zip(batch, evaluations, strict=True) if ev is not None]
                        await store.save_evaluations(mode, saved)
                except UserError as exc:
                    notes.append(f"evaluation {mode!r} skipped: {exc}")
    finally:
        await asyncio.to_thread(evaluator.close)
    return notes


async def _evaluate(prepared: Prepared, store: ResultsStore, run_dir: Path) -> list[str]:
    """`evaluate_stored` for the run's split, tasks and evaluator modes."""
    return await evaluate_stored(prepared.benchmark, prepared.options, prepared.spec.evaluate, prepared.tasks,
                                 prepared.split, store, run_dir)
