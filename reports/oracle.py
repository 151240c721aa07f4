"""Where `offline:oracle` failed, and why: what the benchmark's data lacks there (issue 31).

The oracle plans from the benchmark's own data, so a task it fails is one whose data allows no passing answer (a
staged flights table that is a sample of the official one, a budget below the cheapest plan). The benchmark's
offline part says why per task (`benchmarks.base.Responder.explain`); the report lists each failure with it, and the
end of a run counts them, so a user does not suspect the evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks.base import DELIVERED, TOKEN_LIMIT
from errors import UserError
from reports.collect import Group, RolloutView, RunData, collect_run, load_benchmark
from reports.table import Column, Table
from runner.store.results import load_run

ORACLE = "offline:oracle"
UNEXPLAINED = "not explained by the data: worth a look"
TOKEN_LIMIT_WHY = ("the strategy's official prompt token limit was reached before an answer (the prompt carries this "
                   "query's data, and the oracle's reasoning adds to it)")


@dataclass(frozen=True, slots=True)
class OracleMiss:
    """One rollout of `offline:oracle` that did not pass, and what in the data keeps it from passing."""

    model: str
    """The model's label in the run."""
    strategy: str
    task: str
    why: str | None
    """None: the data allows a passing answer, as far as the benchmark can tell (a bug somewhere)."""


def _failed(view: RolloutView) -> bool:
    """The oracle answered (a strategy without LLM calls, such as a greedy baseline, never asked it) and the rollout
    did not deliver or its answer failed a check."""
    verdicts = view.evaluation.verdicts if view.evaluation is not None else ()
    answered = view.stored.calls > 0
    return answered and (view.status != DELIVERED or any(verdict.passed is False for verdict in verdicts))


def oracle_misses(run: RunData) -> list[OracleMiss]:
    """Every failed rollout of an `offline:oracle` model of the run, with the benchmark's reason."""
    oracles = {label for label, model in run.models.items() if model.partition("?")[0] == ORACLE}
    failed: list[tuple[Group, RolloutView]] = [(group, view) for group in run.groups if group.model in oracles
                                               for view in group.rollouts if _failed(view)]
    if not failed:
        return []
    benchmark = load_benchmark(run.benchmark or failed[0][0].benchmark)
    tasks = [view.task for _, view in failed]
    whys: list[str | None] = [None] * len(failed)
    if benchmark.offline is None or any(task is None for task in tasks):
        return [OracleMiss(group.model, group.strategy, view.task_id, None) for group, view in failed]
    known = [task for task in tasks if task is not None]
    try:
        options = benchmark.options_model.model_validate(run.options)
        explain = benchmark.offline.responder(known, options).explain
        tools = benchmark.open_tools(options) if explain is not None else None
    except (UserError, ValueError):  # the data moved since the run: the failures are listed unexplained
        explain = tools = None
    if explain is not None and tools is not None:
        try:
            whys = explain(known, [group.strategy for group, _ in failed], tools)
        finally:
            if (close := getattr(tools, "close", None)) is not None:
                close()
    whys = [TOKEN_LIMIT_WHY if why is None and view.status == TOKEN_LIMIT else why
            for (_, view), why in zip(failed, whys, strict=True)]
    return [OracleMiss(group.model, group.strategy, view.task_id, why)
            for (group, view), why in zip(failed, whys, strict=True)]


def oracle_table(runs: list[RunData], *, with_run: bool) -> Table | None:
    """The oracle's failures of the runs, one row each, with why (None: the oracle failed nowhere)."""
    table = Table("oracle_failures", f"Where {ORACLE} failed, and what the data lacks there",
                  (*((Column("run"),) if with_run else ()), Column("model"), Column("strategy"),
                   Column("task"), Column("why")))
    for run in runs:
        for miss in oracle_misses(run):
            table.add(*((run.label,) if with_run else ()), miss.model, miss.strategy, miss.task,
                      miss.why or UNEXPLAINED)
    if not table.rows:
        return None
    table.note = (f"{ORACLE} plans from the benchmark's own data: where it fails, that data allows no passing answer "
                  "(a row the staged tables lack, a budget below the cheapest plan), not an evaluator error.")
    return table


def oracle_note(run_dir: Path) -> str | None:
    """One line for the end of a run: how many of the oracle's rollouts failed, how many the data explains, and one
    example; None when the run has no oracle or it failed nowhere."""
    with load_run(run_dir) as results:
        modes = list(results.spec.evaluate)
        if not any(model.model.startswith(ORACLE) for model in results.spec.models):
            return None  # a run without the oracle is not read again
    run = collect_run(run_dir, modes[0] if modes else "official", trajectories=False)
    misses = oracle_misses(run)
    if not misses:
        return None
    explained = [miss for miss in misses if miss.why is not None]
    example = f"; e.g. task {explained[0].task}: {explained[0].why}" if explained else ""
    return (f"{ORACLE}: {len(misses)} rollouts failed, {len(explained)} of them where the data allows no passing "
            f"answer{example} (`tripbench report` lists each with why)")
