"""`--dry-run`: what a run would call, and cost, per model, before anything is spent.

Every pending rollout is played against the cache only (a gateway in mode `replay`, no provider behind it): the
calls the cache answers are free and counted as such; the first call it cannot answer stops the rollout, and the
rest of that rollout is estimated as its strategy's expected calls minus the cached ones, each the size of that
first uncached prompt (counted with tiktoken) plus its `max_tokens`. Cache modes `refresh` and `off` read nothing, so
every call is estimated. A strategy's expected calls come from the spec's `expected_calls`, else the mean of the
strategy's rollouts finished in this run, else the strategy's own count (`benchmarks.base.ExpectedCalls`: one for a
single-call strategy), else `max_calls`, else `DEFAULT_EXPECTED_CALLS`; the report says which.

A batch model's batched calls are priced at its batch rate: every new call, or for `batch = "planner"` the
strategy's Planner calls, with the share of the tokens the strategy says they hold (`benchmarks.base.PlannerCalls`;
by default their share of the calls). Each rollout waits for one batch round per batched call,
and rollouts run `min(concurrency, batch_size)` at a time, so the run takes about that many rounds per rollout times
the waves of rollouts (the run's longest rollouts set the real count); each round is the spec's `batch_flush_s` plus
`batch_round_s`, the assumed time a provider takes to process a batch (its online calls' own time comes on top).

That is an expectation, not a bound: agents' prompts grow as they work, rollouts may make more calls than the mean,
retries are billed again. What bounds the money is the spend cap (every request's worst case is booked before it is
sent, crashes included), so "at most" is printed only for a run with a cap, and it is the cap. A dry run needs no
API key: nothing is sent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.base import ExpectedCalls, PlannerCalls
from providers.errors import ReplayMiss
from providers.interface import ChatModel, ChatRequest, ChatResponse, Usage
from providers.tokens import count_prompt_tokens
from runner.engine.prepared import Prepared
from runner.engine.rollout import run_rollout
from runner.engine.scheduler import Scheduler
from runner.engine.session import EngineSession, Purpose, bind_model
from runner.ladder.gateway import DEFAULT_OUTPUT_TOKENS
from runner.outcomes import runs_again
from runner.store.records import RolloutKey
from runner.store.results import load_run
from runner.store.writer import RESULTS_FILE

DEFAULT_EXPECTED_CALLS = 10.0


@dataclass(slots=True)
class ModelEstimate:
    """What one model's pending rollouts would do."""

    model: str
    rollouts: int = 0
    cached_calls: int = 0
    new_calls: float = 0.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float | None = 0.0
    """None when the price table does not know the model and the spec gives no price."""
    batched_tokens: float = 0.0
    """The part of the new calls' tokens sent through the batch API (at the batch price)."""
    rounds_per_rollout: int = 0
    """Batch rounds the rollout with the most batched calls waits for, one after the other."""
    waves: int = 0
    """Groups of rollouts that run one after the other (`min(concurrency, batch_size)` at a time)."""
    round_s: float = 0.0
    """The time of one batch round assumed: the spec's `batch_flush_s` plus `batch_round_s`."""

    @property
    def rounds(self) -> int:
        """Batch rounds the run's rollouts of this model wait for, one after the other."""
        return self.rounds_per_rollout * self.waves


class _Probe:
    """Answers from the cache; remembers the first request it could not answer, then fails like a replay miss."""

    def __init__(self, cached: ChatModel | None) -> None:
        self._cached = cached
        self.hits = 0
        self.miss: ChatRequest | None = None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if self._cached is not None:
            try:
                response = await self._cached.complete(request)
            except ReplayMiss:
                pass
            else:
                self.hits += 1
                return response
        self.miss = request
        raise ReplayMiss("dry run: not cached", key="")


def _expected_calls(prepared: Prepared, run_dir: Path) -> dict[str, tuple[float, str]]:
    """Strategy -> (calls per rollout, where that figure comes from)."""
    spec = prepared.spec
    if spec.expected_calls is not None:
        return dict.fromkeys(spec.strategies, (spec.expected_calls, "expected_calls in the spec"))
    done: dict[str, list[int]] = {}
    if (run_dir / RESULTS_FILE).is_file():
        with load_run(run_dir) as results:
            for r in results.rollouts:
                if not runs_again(r.status, r.error_type):
                    done.setdefault(r.key.strategy, []).append(r.calls)
    expected: dict[str, tuple[float, str]] = {}
    for name in spec.strategies:
        strategy = prepared.strategies[name]
        own = strategy.expected_calls if isinstance(strategy, ExpectedCalls) else None
        if calls := done.get(name):
            expected[name] = sum(calls) / len(calls), "the mean of the strategy's rollouts finished in this run"
        elif own is not None:
            expected[name] = float(own), "the strategy's own count"
        elif spec.max_calls is not None:
            expected[name] = float(spec.max_calls), "max_calls (set expected_calls for a closer estimate)"
        else:
            expected[name] = DEFAULT_EXPECTED_CALLS, "a default (set expected_calls in the spec for a real estimate)"
    return expected


def _assumption(expected: dict[str, tuple[float, str]]) -> str:
    """`2 calls per rollout, from SOURCE`; where strategies differ, `direct 1, react 2 calls per rollout, from
    SOURCE` for each source."""
    if len(set(expected.values())) == 1:
        calls, source = next(iter(expected.values()))
        return f"{calls:g} calls per rollout, from {source}"
    by_source: dict[str, list[str]] = {}
    for name, (calls, source) in expected.items():
        by_source.setdefault(source, []).append(f"{name} {calls:g}")
    return "; ".join(f"{', '.join(figures)} calls per rollout, from {source}" for source, figures in by_source.items())


def spent_before(run_dir: Path, prepared: Prepared) -> tuple[float, str]:
    """What the spend cap already holds, open charges at their worst case, and whose it is: the team budget's (every
    process booking under it: its database is read) for a run with `[team]`, else the run directory's earlier
    sessions' (0 for a new run)."""
    if (team := prepared.spec.team) is not None:
        from runner.team import team_url  # psycopg: only a team run's dry run
        from runner.team.budget import budget_spent

        url = team_url(team.url_env, str(prepared.spec_path))
        return budget_spent(url, team.budget), f"spent before by the team budget {team.budget}"
    if not (run_dir / RESULTS_FILE).is_file():
        return 0.0, "spent before"
    with load_run(run_dir) as results:
        return results.spent_usd + results.reserved_usd, "spent before"


def _finished(run_dir: Path) -> set[RolloutKey]:
    if not (run_dir / RESULTS_FILE).is_file():
        return set()
    with load_run(run_dir) as results:
        return {r.key for r in results.rollouts if not runs_again(r.status, r.error_type)}


async def estimate(prepared: Prepared, run_dir: Path) -> tuple[list[ModelEstimate], str]:
    """Plays the pending rollouts against the cache and estimates the rest.

    Returns:
        One estimate per model, and where the expected calls per rollout came from.
    """
    spec = prepared.spec
    expected = _expected_calls(prepared, run_dir)
    finished = _finished(run_dir)
    pending = [key for key in prepared.keys if key not in finished]
    estimates = {m.label: ModelEstimate(m.label) for m in spec.models}
    index = {task.id: position for position, task in enumerate(prepared.tasks)}
    async with EngineSession(prepared, Purpose.DRY_RUN) as session:
        async def probe(key: RolloutKey) -> None:
            probe = _Probe(session.reader)
            model = bind_model(prepared, probe, key)
            await run_rollout(key, prepared.tasks[index[key.task]], prepared.strategies[key.strategy], model,
                              session.tools)
            _add(estimates[key.model], prepared, key, probe, expected[key.strategy][0])

        await Scheduler(spec.concurrency).run(pending, probe)
    for model in spec.models:
        if model.model in prepared.batched and (e := estimates[model.label]).rounds_per_rollout:
            e.waves = math.ceil(sum(1 for key in pending if key.model == model.label)
                                / min(spec.concurrency, spec.batch_size))
            e.round_s = spec.batch_flush_s + spec.batch_round_s
    return list(estimates.values()), _assumption(expected)


def _add(estimate: ModelEstimate, prepared: Prepared, key: RolloutKey, probe: _Probe, expected: float) -> None:
    estimate.rollouts += 1
    estimate.cached_calls += probe.hits
    if probe.miss is None:
        return  # answered entirely from the cache (or made no call at all)
    calls = max(expected - probe.hits, 1.0)
    prompt = count_prompt_tokens((m.role, m.content) for m in probe.miss.messages)
    output = probe.miss.max_tokens if probe.miss.max_tokens is not None else DEFAULT_OUTPUT_TOKENS
    estimate.new_calls += calls
    estimate.input_tokens += calls * prompt
    estimate.output_tokens += calls * output
    model = prepared.model(key.model)
    batched, share = _batched(prepared, key, calls)
    estimate.batched_tokens += share * calls * (prompt + output)
    estimate.rounds_per_rollout = max(estimate.rounds_per_rollout, math.ceil(batched))
    overrides = {model.model: model.prices} if model.prices is not None else None
    cost: float | None = 0.0
    for part_of, batch in ((1.0 - share, False), (share, True)):  # the batched tokens at the batch rate
        usage = Usage(input_tokens=round(part_of * calls * prompt), output_tokens=round(part_of * calls * output))
        part = prepared.prices.cost_usd(usage, model.model, overrides=overrides, batch=batch)
        cost = None if part is None or cost is None else cost + part
    estimate.cost_usd = None if cost is None or estimate.cost_usd is None else estimate.cost_usd + cost


def _batched(prepared: Prepared, key: RolloutKey, calls: float) -> tuple[float, float]:
    """How many of a rollout's `calls` new calls its model sends through a batch API, and their share of its tokens:
    all of them, or for a model that batches only the Planner's the strategy's Planner calls and the share it says
    they hold (`benchmarks.base.PlannerCalls`; by default their share of the calls)."""
    model = prepared.model(key.model).model
    if model not in prepared.batched:
        return 0.0, 0.0
    if prepared.batched[model] is None:
        return calls, 1.0
    strategy = prepared.strategies[key.strategy]
    if not isinstance(strategy, PlannerCalls) or not (planner := min(strategy.planner_calls, calls)):
        return 0.0, 0.0
    return planner, strategy.planner_share if strategy.planner_share is not None else planner / calls


def render_estimate(estimates: list[ModelEstimate], assumption: str, console: Console, *,
                    cap_usd: float | None = None, spent_usd: float = 0.0, spent_by: str = "spent before") -> None:
    """Prints the estimate table and what bounds the money.

    Args:
        estimates: `estimate`'s figures.
        assumption: The expected calls per rollout and where they came from (per strategy where they differ).
        console: Where to print.
        cap_usd: The run's spend cap, if any.
        spent_usd: What the cap already holds (`spent_before`).
        spent_by: Whose that is, in words (`spent_before`).
    """
    table = Table(show_edge=False, pad_edge=False, title="dry run: nothing was sent or spent")
    for column in ("model", "rollouts to run", "cached calls (free)", "new calls", "input tokens",
                   "output tokens", "$ expected"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for e in estimates:
        table.add_row(e.model, f"{e.rollouts:,}", f"{e.cached_calls:,}", f"{e.new_calls:,.0f}",
                      f"{e.input_tokens:,.0f}", f"{e.output_tokens:,.0f}",
                      "unknown price" if e.cost_usd is None else f"{e.cost_usd:.2f}")
    known = [e for e in estimates if e.cost_usd is not None]
    expected = sum(e.cost_usd or 0.0 for e in known)
    console.print(table)
    for e in estimates:
        if e.rounds:
            _render_rounds(e, console)
    console.print(f"expected ${expected:.2f}" + ("" if len(known) == len(estimates) else
                                                 " for the models with a known price")
                  + f", assuming {assumption}, each new call's prompt the size of its rollout's first uncached one "
                  "and every output at its max_tokens; agents' prompts grow and retries are billed again, so the "
                  "run may spend more", soft_wrap=True)
    if cap_usd is None:
        console.print("at most: no bound without a spend cap (set max_cost, or --max-cost)", soft_wrap=True)
        return
    left = max(cap_usd - spent_usd, 0.0)
    console.print(f"at most ${left:.2f}: the spend cap (${cap_usd:.2f}, ${spent_usd:.2f} {spent_by}), which no "
                  "call may cross", soft_wrap=True)
    rollouts = sum(e.rollouts for e in known)
    if expected > left and rollouts:
        allowed = int(left / (expected / rollouts))
        console.print(f"the cap is likely to allow about {allowed:,} of the {rollouts:,} rollouts (at the expected "
                      f"${expected / rollouts:.4f} each); the rest end as budget_exhausted and resume with a higher "
                      "cap", soft_wrap=True)


def _render_rounds(e: ModelEstimate, console: Console) -> None:
    """A batch model's rounds, its share of tokens at the batch price and the wall time its rounds take."""
    share = e.batched_tokens / max(e.input_tokens + e.output_tokens, 1.0)
    waves = f" in {e.waves:,} waves of rollouts" if e.waves > 1 else ""
    longer = ", a rollout longer than the expected calls more" if e.rounds_per_rollout > 1 else ""
    console.print(f"batch: {e.model}: about {e.rounds:,} batch rounds one after the other ({e.rounds_per_rollout:,} "
                  f"per rollout{waves}{longer}), {share:.0%} of its new tokens at the batch price; the rounds take "
                  f"about {_duration(e.rounds * e.round_s)} (each {e.round_s:,.0f} s: batch_flush_s plus "
                  "batch_round_s, the assumed processing time of a batch), its online calls' time on top",
                  soft_wrap=True)


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def render_settings(prepared: Prepared, console: Console) -> None:
    """What each planned (model, strategy) sends, where the benchmark chooses settings by model
    (`Benchmark.model_settings`)."""
    settings = prepared.benchmark.model_settings
    for model in prepared.spec.models:
        temperature = model.over(prepared.spec.sampling).temperature
        for strategy, text in settings(prepared.options, model.model).items():
            if strategy in prepared.spec.strategies:
                spec = "" if temperature is None else f" (the spec sets temperature {temperature:g}, which wins)"
                console.print(f"settings: {model.label} · {strategy}: {text}{spec}", soft_wrap=True)
