"""What a run has done so far, read from its results store: `tripbench status` and the end-of-run summary."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.base import CRASHED, DELIVERED
from runner.outcomes import FAILURE_NOTES, failure_counts, failure_kind, runs_again
from runner.store.results import RunResults, SessionInfo, StoredRollout

WIDE = 130
"""Console columns below which the summary is a few lines per (model, strategy) instead of a table (which wraps)."""


@dataclass(slots=True)
class GroupSummary:
    """One (model, strategy) of a run."""

    model: str
    strategy: str
    planned: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    hits: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    saved_usd: float = 0.0

    stored: int = 0
    """Rollouts stored, from every session (a later session may plan fewer: `--limit`)."""
    done: int = 0
    """Rollouts stored that a resumed run would not run again (not cut by the spend cap, not missed in replay mode,
    not ended by an unavailable provider: see `runner.outcomes.runs_again`)."""


def without_result(results: RunResults) -> Counter[str]:
    """Stored rollouts without a result of their own, by status: those a resumed run runs again (spend-cap cuts,
    replay-mode misses, errors of an unavailable provider) and strategy crashes. A permanent provider error (a bad
    request, a refusal) is the rollout's result, like a delivered plan. A completed run holding any exits non-zero."""
    return Counter(r.status for r in results.rollouts if r.status == CRASHED or runs_again(r.status, r.error_type))


def failures(rollouts: Iterable[StoredRollout]) -> Counter[str]:
    """Stored rollouts that did not deliver, by `failure_kind`: the agent's own apart from the provider's errors."""
    return Counter(kind for r in rollouts if (kind := failure_kind(r.status)) is not None)


def failures_line(kinds: Counter[str]) -> str:
    """`not delivered: N agent failures · N provider errors · ...`, each kind but the agent's explained once."""
    notes = "; ".join(f"{kind}: {FAILURE_NOTES[kind]}" for kind in kinds if kind in FAILURE_NOTES)
    return f"not delivered: {failure_counts(kinds)}" + (f" ({notes})" if notes else "")


TOP_REASONS = 3
"""Failure reasons shown per model by the summary, `status` and the report."""
REASON_CHARS = 200
"""A reason longer than this (a provider's whole error page) is cut here."""


def failure_reason(rollout: StoredRollout) -> str | None:
    """Why a rollout did not deliver, in one line: its status and the first line of its error (a provider's message,
    the agent's own words), None when it delivered."""
    if rollout.status == DELIVERED:
        return None
    error = (rollout.error or rollout.error_type or "").strip().splitlines()
    said = error[0] if error else ""
    reason = said if said.startswith(rollout.status) else f"{rollout.status}: {said}" if said else rollout.status
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"


def failure_reasons(rollouts: Iterable[StoredRollout], top: int = TOP_REASONS) -> dict[str, list[tuple[str, int]]]:
    """Per model label, its `top` most frequent failure reasons with their counts, most frequent first; models
    whose rollouts all delivered are left out."""
    counts: dict[str, Counter[str]] = {}
    for rollout in rollouts:
        if (reason := failure_reason(rollout)) is not None:
            counts.setdefault(rollout.key.model, Counter())[reason] += 1
    return {model: reasons.most_common(top) for model, reasons in counts.items()}


def summarize(results: RunResults) -> list[GroupSummary]:
    """Per (model, strategy): planned (by the latest session) and finished rollouts, statuses, calls and money."""
    groups: dict[tuple[str, str], GroupSummary] = {}
    for model, strategies in results.planned.items():
        for strategy, count in strategies.items():
            groups[model, strategy] = GroupSummary(model, strategy, planned=count)
    for rollout in results.rollouts:
        group = groups.setdefault((rollout.key.model, rollout.key.strategy),
                                  GroupSummary(rollout.key.model, rollout.key.strategy))
        group.statuses[rollout.status] += 1
        group.stored += 1
        group.done += not runs_again(rollout.status, rollout.error_type)
        group.calls += rollout.calls
        group.hits += rollout.cache_hits
        group.retries += rollout.retries
        group.input_tokens += rollout.usage.input_tokens
        group.output_tokens += rollout.usage.output_tokens
        group.cost_usd += rollout.cost_usd
        group.saved_usd += rollout.saved_usd
    for group in groups.values():  # its own count: never fewer than it has stored (done/planned never reads 5/3)
        group.planned = max(group.planned, group.stored)
    return list(groups.values())


def session_state(session: SessionInfo) -> str:
    """`running`, the recorded outcome, or `killed` for a session that ended without saying so."""
    if session.outcome is not None:
        return session.outcome
    try:
        os.kill(session.pid, 0)
    except ProcessLookupError:
        return "killed"
    except PermissionError:  # alive, but another user's
        return "running"
    return "running"


STATE_ORDER = ("running", "failed", "killed", "interrupted", "budget", "completed")
"""A sharded run's state is its shards' first state in this order (still going, then the worst way one ended)."""


def run_state(results: RunResults) -> str | None:
    """The run's state (`session_state` of its latest session; of a sharded run, the first of its shards' states in
    `STATE_ORDER`, naming the shards missing from its folder), None before any session."""
    states = [session_state(session) for session in results.latest.values()]
    state = min(states, key=lambda state: STATE_ORDER.index(state) if state in STATE_ORDER else len(STATE_ORDER),
                default=None)
    if state is not None and results.shards is not None and results.shards.missing:
        return f"{state} (shards missing: {results.shards.missing_text()})"
    return state


def shard_states(results: RunResults) -> dict[str, str]:
    """`I/N` -> the state of each shard of a sharded run with a store here, and `I-J/N` (or `I/N`) -> `missing` for
    each range of shards without one, in shard order (as many entries as folders, however large N is); empty for a
    run directory."""
    if results.shards is None:
        return {}
    states = {first: (name, "missing") for first, name in results.shards.missing_names().items()}
    for index, folder in results.shards.dirs.items():
        session = results.latest.get(folder.name)
        states[index] = (f"{index}/{results.shards.count}",
                         session_state(session) if session is not None else "starting")
    return dict(states[first] for first in sorted(states))


def render_summary(results: RunResults, console: Console) -> None:
    """Prints the run's state and one table row per (model, strategy) (on a narrow console, a few lines each)."""
    if not results.sessions:
        console.print(f"{results.run_dir}: no session recorded yet")
        return
    first = results.sessions[0]
    started = datetime.fromtimestamp(first.started_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    cap = results.spec.max_cost
    reserved = results.reserved_usd
    money = (f"${results.spent_usd:.4f}" + (f" + ${reserved:.4f} reserved" if reserved else "")
             + (f" of a ${cap:.2f} cap" if cap is not None else ""))
    head = f"run {results.run_dir}: {run_state(results)} · {len(results.sessions)} session(s) since {started}"
    if console.width < WIDE:
        console.print(head, soft_wrap=True)  # a long run directory stays one copyable line
        console.print(f"spent {money}")
        _render_narrow(summarize(results), console)
    else:
        console.print(f"{head} · spent {money}")
        _render_table(summarize(results), console)
    if shards := shard_states(results):
        console.print("shards: " + ", ".join(f"{shard} {state}" for shard, state in shards.items()), highlight=False)
    if live := [b for b in results.batches() if b.live]:
        ids = ", ".join(f"{b.provider_id or '(id not yet known)'} ({b.model}, {b.requests} requests)" for b in live)
        console.print(f"{len(live)} batch(es) live at the provider: {ids}")
    if kinds := failures(results.rollouts):
        console.print(failures_line(kinds), highlight=False, markup=False, soft_wrap=True)
    if missing := without_result(results):
        counts = ", ".join(f"{status} {n}" for status, n in missing.most_common())
        console.print(f"{missing.total()} rollouts have no result of their own: {counts}")
    if reasons := failure_reasons(results.rollouts):
        console.print("most frequent failure reasons, per model (rollouts):")
        for model, top in reasons.items():
            for reason, count in top:
                console.print(f"  {model}: {count} × {reason}", highlight=False, markup=False, soft_wrap=True)
    if untrusted := results.untrusted_calls():
        console.print(f"{untrusted} calls had no trustworthy usage (missing, malformed or impossible): charged at "
                      "their worst case")


def _others(g: GroupSummary) -> str:
    return ", ".join(f"{status} {n}" for status, n in g.statuses.most_common() if status != DELIVERED)


def _render_narrow(groups: list[GroupSummary], console: Console) -> None:
    """A few short lines per (model, strategy), for a terminal too narrow for the table's eleven columns."""
    for g in groups:
        hits = f"{g.hits / g.calls:.0%}" if g.calls else "-"
        console.print(f"{g.model} · {g.strategy}: {g.done}/{g.planned} done, {g.statuses[DELIVERED]} delivered",
                      highlight=False)
        console.print(f"  {g.calls:,} calls, {hits} cache hits, {g.retries:,} retries · ${g.cost_usd:.4f} spent, "
                      f"${g.saved_usd:.4f} saved", highlight=False)
        console.print(f"  tokens {g.input_tokens:,} in / {g.output_tokens:,} out", highlight=False)
        if others := _others(g):
            console.print(f"  other statuses: {others}", highlight=False)


def _render_table(groups: list[GroupSummary], console: Console) -> None:
    table = Table(show_edge=False, pad_edge=False)
    for column in ("model", "strategy", "done", "delivered", "other statuses", "calls", "cache hits", "retries",
                   "tokens in/out", "$ spent", "$ saved"):
        table.add_column(column, justify="left" if column in ("model", "strategy", "other statuses") else "right")
    for g in groups:
        table.add_row(g.model, g.strategy, f"{g.done}/{g.planned}", str(g.statuses[DELIVERED]), _others(g) or "-",
                      f"{g.calls:,}", f"{g.hits / g.calls:.0%}" if g.calls else "-", f"{g.retries:,}",
                      f"{g.input_tokens:,}/{g.output_tokens:,}", f"{g.cost_usd:.4f}", f"{g.saved_usd:.4f}")
    console.print(table)


def summary_json(results: RunResults) -> dict[str, Any]:
    """What `render_summary` prints, as JSON values (`tripbench status --json`)."""
    return {
        "run_dir": str(results.run_dir),
        "state": run_state(results),
        "shards": shard_states(results) or None,
        "sessions": len(results.sessions),
        "spent_usd": results.spent_usd,
        "reserved_usd": results.reserved_usd,
        "max_cost": results.spec.max_cost,
        "without_result": dict(without_result(results)),
        "failures": dict(failures(results.rollouts)),
        "untrusted_usage_calls": results.untrusted_calls(),
        "failure_reasons": {model: [{"reason": reason, "count": count} for reason, count in top]
                            for model, top in failure_reasons(results.rollouts).items()},
        "batches": [{"id": b.provider_id, "model": b.model, "state": b.state, "requests": b.requests}
                    for b in results.batches()],
        "groups": [{"model": g.model, "strategy": g.strategy, "planned": g.planned, "done": g.done,
                    "statuses": dict(g.statuses), "calls": g.calls, "cache_hits": g.hits, "retries": g.retries,
                    "input_tokens": g.input_tokens, "output_tokens": g.output_tokens, "cost_usd": g.cost_usd,
                    "saved_usd": g.saved_usd} for g in summarize(results)],
    }
