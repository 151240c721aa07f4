"""Natural Plan's report sections: accuracy per task and model, accuracy by complexity (the paper's figures: number
of cities, people, people x days), and the error breakdown, all from the verdicts the runs stored."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from benchmarks.base import DELIVERED, GENERIC_STATUSES
from benchmarks.natural_plan.dataset import TASKS, group_of, sorted_groups
from benchmarks.natural_plan.offline.models import MISTAKES
from benchmarks.reporting import (
    Column,
    GroupedRates,
    GroupView,
    Kind,
    Outcome,
    RolloutView,
    RunView,
    Section,
    StackedShares,
    Table,
    group_columns,
    outcome_table,
)

COMPLEXITY = {"trip": "cities", "meeting": "people", "calendar": "people x days"}
ERROR_MEANINGS = {
    "unparseable answer": "the official parser finds no plan / slot / step in the answer",
    "wrong order": "a city differs from the plan's at some stay",
    "wrong durations": "the cities match up to a stay whose length differs",
    "missing stays": "every stay given matches, but fewer than the plan's",
    "wrong day": "the slot is on another day",
    "wrong time": "the slot's start or end differs",
    "fewer meetings": "every step valid, but fewer meetings than the gold plan",
    "more meetings": "every step valid, more meetings than the gold plan (the official score still fails it)",
    "invalid meeting step: wait goes backward": "a wait to a time not after the clock",
    "invalid meeting step: meets someone twice": "a second meeting with one person",
    "invalid meeting step: wrong place": "a meeting somewhere the person is not",
    "invalid meeting step: outside the window": "a meeting outside the person's hours",
    "invalid meeting step: unknown step": "a sentence that is not a start, travel, wait or meet step",
    "invalid meeting step: unreadable time": "a wait time not like 9:00AM",
    "official script crash: unknown place": "travel to a place the distances do not know",
    "official script crash: unknown person": "a meeting with someone not in the constraints",
    "official script crash: malformed step": "a step missing the words the script splits on",
    **GENERIC_STATUSES,
}
assert all(kind in ERROR_MEANINGS for kinds in MISTAKES.values() for kind in kinds)


def _task(view: RolloutView) -> str | None:
    return str(view.task.input["task"]) if view.task is not None else None


def _solved(view: RolloutView) -> bool:
    return view.evaluation is not None and bool(view.evaluation.details.get("solved"))


def _scored(run: RunView, group: GroupView, task: str) -> tuple[int, int]:
    """(tasks the accuracy divides by, solved): every task of the kind the group planned, or those scored so far in a
    partial run."""
    views = [view for view in group.rollouts if _task(view) == task]
    if run.partial:
        views = [view for view in views if view.evaluation is not None]
        return len(views), sum(map(_solved, views))
    if group.planned < len(run.tasks):  # a group a run was extended with plans its own tasks, all stored by now
        return len(views), sum(map(_solved, views))
    return sum(1 for t in run.tasks if t.input.get("task") == task), sum(map(_solved, views))


def error_kind(view: RolloutView) -> str | None:
    """Why a rollout is not solved: the scoring's error kind, or the rollout's status when it has no answer."""
    if view.status != DELIVERED:
        return view.status
    if view.evaluation is None:
        return None
    return None if view.evaluation.details.get("solved") else str(view.evaluation.details.get("error"))


def report_sections(runs: Sequence[RunView], mode: str, *, with_run: bool) -> list[Section]:
    pairs = [(run, g) for run in runs for g in run.groups]
    tasks = [task for task in TASKS if any(t.input.get("task") == task for run in runs for t in run.tasks)]
    accuracy = Table("np_accuracy", "Natural Plan accuracy per task (exact match, official rules, %)",
                     (*group_columns(with_run), Column("task"), Column("N", Kind.INT), Column("solved", Kind.INT),
                      Column("accuracy", Kind.PCT)))
    for run, g in pairs:
        for task in tasks:
            n, solved = _scored(run, g, task)
            accuracy.add(*g.cells(with_run), task, n, solved, solved / n if n else None)
    accuracy.note = "Rollouts without an answer count as unsolved; a partial run's rates cover the scored rollouts."
    if not any(run.evaluated for run in runs):
        accuracy.note += f" No `{mode}` verdicts are stored: add it to the spec's `evaluate` and run again."
    sections = [Section("Accuracy", [accuracy], notes=[f"Evaluator: {mode} (the Natural Plan scripts' rules)."])]
    complexity = Section("Accuracy by complexity")
    for task in tasks:
        table, chart = _by_complexity(pairs, task, with_run=with_run)
        complexity.tables.append(table)
        complexity.charts.append(chart)
    sections.append(complexity)
    counted = [(g, Counter(kind for view in g.rollouts if (kind := error_kind(view)))) for _, g in pairs]
    errors = outcome_table("np_errors", "Why answers failed (error breakdown)", "error", counted, ERROR_MEANINGS,
                           with_run=with_run)
    errors.note = ("Shares are of all the group's rollouts; the first failing step or stay of each answer is in its "
                   "page.")
    shares = StackedShares("np_errors", "Why answers failed, per model and strategy",
                           [(f"{g.run}: {g.label}" if with_run else g.label, dict(counts)) for g, counts in counted])
    sections.append(Section("Errors", [errors], [shares]))
    return sections


def _by_complexity(pairs: Sequence[tuple[RunView, GroupView]], task: str, *,
                   with_run: bool) -> tuple[Table, GroupedRates]:
    labels = sorted_groups([group_of(t.input) for run, _ in pairs for t in run.tasks if t.input.get("task") == task])
    table = Table(f"np_{task}_by_{COMPLEXITY[task].replace(' ', '_')}",
                  f"{task.capitalize()} accuracy by {COMPLEXITY[task]} (%)",
                  (*group_columns(with_run), *(Column(label, Kind.PCT) for label in labels)))
    series: list[tuple[str, Sequence[float | None]]] = []
    for _, g in pairs:
        by_label: dict[str, list[bool]] = {label: [] for label in labels}
        for view in g.rollouts:
            if view.task is not None and _task(view) == task and view.evaluation is not None:
                by_label[group_of(view.task.input)].append(_solved(view))
        rates = [sum(found) / len(found) if found else None for found in by_label.values()]
        table.add(*g.cells(with_run), *rates)
        series.append((f"{g.run}: {g.label}" if with_run else g.label, rates))
    table.note = "Over scored answers; the official scripts group the same way (meeting divides by 100 per group, " \
                 "the full file's count)."
    return table, GroupedRates(f"np_{task}_complexity", f"{task.capitalize()} accuracy by {COMPLEXITY[task]}",
                               labels, series)


def group_rates(run: RunView, groups: Sequence[GroupView | None]) -> list[Mapping[str, float | None] | None]:
    """Accuracy per task and overall, per group (for `report --compare`)."""
    rates: list[Mapping[str, float | None] | None] = []
    kinds = [task for task in TASKS if any(t.input.get("task") == task for t in run.tasks)]
    for g in groups:
        if g is None or not run.evaluated:
            rates.append(None)
            continue
        found = {task: _scored(run, g, task) for task in kinds}
        total, solved = sum(n for n, _ in found.values()), sum(s for _, s in found.values())
        rates.append({**{f"{task} accuracy": s / n if n else None for task, (n, s) in found.items()},
                      "accuracy": solved / total if total else None})
    return rates


def rollout_metrics(view: RolloutView) -> Mapping[str, Outcome]:
    """Solved (None when not evaluated), then delivered, for one rollout."""
    return {"solved": _solved(view) if view.evaluation is not None else None, "delivered": view.status == DELIVERED}


def rollout_category(view: RolloutView) -> str:
    """How one rollout ended: why it is not solved, else `solved` (or its status when not evaluated)."""
    return error_kind(view) or ("solved" if view.evaluation is not None else view.status)
