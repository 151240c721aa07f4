"""TravelPlanner's own tables from stored rollouts: paper Table 3, Table 4, the Figure 2 tool-use errors, Table 5.

The rates are `evaluation.metrics.compute_scores` over the verdicts the run stored, so a report row equals
`tripbench evaluate` on the same run's submission file. Groups whose tasks hide their constraints (the test split)
get delivery only; their submission file is what the leaderboard takes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks import base
from benchmarks.base import Task
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
    slug,
)
from benchmarks.travelplanner import taxonomy
from benchmarks.travelplanner.dataset import Query, query_from_record
from benchmarks.travelplanner.evaluation import PlanVerdict
from benchmarks.travelplanner.evaluation.metrics import (
    HARD_TOTALS,
    RATE_NAMES,
    Scores,
    compute_scores,
    constraint_rates,
    hard_denominator,
)
from benchmarks.travelplanner.tools import SUCCESSFUL, parse_action

_LOGGED_ACTION = re.compile(r"^Action \d+: ")
RATE_HEADERS = ("Delivery", "Commonsense micro", "Commonsense macro", "Hard micro", "Hard macro", "Final pass")
SHORT_HEADERS = ("Deliv.", "CS micro", "CS macro", "Hard micro", "Hard macro", "Final")
FIGURE2_LABELS = ("Argument Error", "Invalid Action Dead Loop", "Same Action Dead Loop", "Max Step Limit")
# Paper Table 5 tools and the reference-information entries that answer the same look-up (docs/fidelity/travelplanner.md
# §5).
TOOL_REFERENCE = {
    "FlightSearch": ("Flight from",),
    "GoogleDistanceMatrix": ("Self-driving from", "Taxi from"),
    "AccommodationSearch": ("Accommodations in",),
    "AttractionSearch": ("Attractions in",),
    "RestaurantSearch": ("Restaurants in",),
    "CitySearch": (),
}


@dataclass(frozen=True, slots=True)
class GroupScores:
    """A group's official figures: None for `scores` when its tasks hide their constraints."""

    group: GroupView
    scores: Scores | None
    delivered: int
    """Rollouts with a non-empty plan (the official delivery count)."""
    hidden: bool = False
    """The tasks hide their constraints (test split); else a None `scores` means: not evaluated in this mode."""
    n: int | None = None
    """Tasks the rates divide by: the group's planned tasks, or those scored so far in a partial run."""


def plan_verdict(view: RolloutView) -> PlanVerdict:
    """The stored verdict of one rollout (undelivered when it was not evaluated)."""
    stored = view.evaluation.details.get("verdict") if view.evaluation is not None else None
    if not isinstance(stored, Mapping):
        return PlanVerdict(None, None, None)

    def box(value: Any) -> dict[str, tuple[bool | None, str | None]] | None:
        return None if value is None else {key: (pair[0], pair[1]) for key, pair in value.items()}
    return PlanVerdict(box(stored.get("commonsense")), box(stored.get("hard")), stored.get("total_cost"),
                       stored.get("error"))


def parser_of(options: Mapping[str, Any]) -> str:
    """How a run's answers became plans, as its `parser` option says (`rules`, or `llm:MODEL` as in the paper)."""
    parser = str(options.get("parser", "rules"))
    return "the rules parser" if parser == "rules" else f"the official extraction prompt sent to {parser[4:]}"


def run_queries(tasks: Sequence[Task]) -> list[Query]:
    """A run's tasks as queries, parsed once for all its groups (query records in the Hugging Face layout)."""
    return [query_from_record(task.input, f"task {task.id}") for task in tasks]


def group_scores(group: GroupView, tasks: Sequence[Task], queries: Sequence[Query], evaluated: bool = True, *,
                 partial: bool = False) -> GroupScores:
    """Table 3 figures of one group over every task of its run (a task without a rollout counts as undelivered).

    Args:
        group: The group.
        tasks: The run's tasks in split order.
        queries: `run_queries(tasks)`.
        evaluated: Whether the run stored verdicts in the report's mode (if not, only delivery is known).
        partial: The run has not finished: the rates cover only the tasks whose rollout finished and was scored
            (counting the others as undelivered would read as failures).
    """
    by_task = {view.task_id: view for view in group.rollouts}
    delivered = sum(bool(view.plan) for view in group.rollouts)
    if not queries or not all(query.has_labels for query in queries):
        return GroupScores(group, None, delivered, hidden=True)
    if not evaluated:
        return GroupScores(group, None, delivered)
    if partial:
        kept = [(task, query) for task, query in zip(tasks, queries, strict=True)
                if task.id in by_task and by_task[task.id].evaluation is not None]
        tasks, queries = [task for task, _ in kept], [query for _, query in kept]
        delivered = sum(bool(by_task[task.id].plan) for task in tasks)
        if not tasks:
            return GroupScores(group, None, delivered)  # nothing scored yet
    verdicts = [plan_verdict(by_task[task.id]) if task.id in by_task else PlanVerdict(None, None, None)
                for task in tasks]
    split = group.split if group.split in HARD_TOTALS and not partial else None
    return GroupScores(group, compute_scores(queries, verdicts, split=split), delivered, n=len(tasks))


def table3(scored: Sequence[GroupScores], *, with_run: bool) -> Table:
    """Paper Table 3: one row per (model, strategy) with the six official rates."""
    columns = (*group_columns(with_run), Column("split"), Column("N", Kind.INT),
               *(Column(header, Kind.PCT, short) for header, short in zip(RATE_HEADERS, SHORT_HEADERS)))
    table = Table("pass_rates", "Pass rates (paper Table 3, %)", columns)
    hidden: list[str] = []
    unscored: list[str] = []
    for item in scored:
        g = item.group
        n = g.planned if item.n is None else item.n
        if item.scores is None:
            rates: list[float | None] = [item.delivered / n if n else 0.0, None, None, None, None, None]
            (hidden if item.hidden else unscored).append(g.label)
        else:
            rates = [item.scores.rates[name] for name in RATE_NAMES]
        strategy = g.strategy + (f" #{g.sample}" if g.samples > 1 else "")
        table.add(*((g.run,) if with_run else ()), g.model, strategy, g.split, n, *rates)
    table.note = ("Undelivered plans count as failures; micro rates divide by 8·N and by the "
                  "requested hard constraints.")
    if hidden:
        table.note += (f" Constraints are hidden for {', '.join(hidden)} (test split): delivery only; upload the "
                       "submission file to the leaderboard for the rest.")
    if unscored:
        table.note += f" Not evaluated in this mode: {', '.join(unscored)} (delivery only; see the summary)."
    return table


def table4(item: GroupScores, name: str) -> Table | None:
    """Paper Table 4 for one group: each constraint's pass rate by level and trip length; None without labels."""
    if item.scores is None:
        return None
    rates = constraint_rates(item.scores.detailed)
    table = Table(name, f"Constraint pass rates, {item.group.label} (paper Table 4, %)",
                  (Column("group"), Column("constraint"), *(Column(c, Kind.PCT) for c in rates.columns)))
    for group, constraint, values in rates.rows:
        table.add(group.removesuffix(" Constraint"), constraint, *values)
    table.note = "true / queries asking for the constraint; delivered or not (a dash: no query of the column asks)."
    return table


def categories(group: GroupView) -> Counter[str]:
    """How the group's rollouts ended, in the error taxonomy (dead-loop types re-derived from the step logs)."""
    return Counter(taxonomy.classify(view.status, view.steps).category for view in group.rollouts)


def errors(counted: Sequence[tuple[GroupView, Counter[str]]], *, with_run: bool) -> Table:
    """The full error taxonomy: every terminal category per (model, strategy), counts and shares.

    Args:
        counted: Each group with its `categories`.
        with_run: Whether a run column leads.
    """
    return outcome_table("error_taxonomy", "How rollouts ended (error taxonomy)", "category", counted,
                         {**base.GENERIC_STATUSES, **taxonomy.STATUSES}, with_run=with_run)


def tool_use_errors(groups: Sequence[GroupView], *, with_run: bool) -> Table:
    """Paper Figure 2: why two-stage rollouts ended without a plan, as shares of those failures."""
    table = Table("tool_use_errors", "Tool-use error distribution (paper Figure 2, % of tool-use failures)",
                  (*group_columns(with_run), Column("failures", Kind.INT),
                   *(Column(label, Kind.PCT) for label in FIGURE2_LABELS), Column("argument errors by tool")))
    for g in groups:
        if not _is_tool_agent(g):
            continue
        classified = [taxonomy.classify(view.status, view.steps) for view in g.rollouts]
        labels = Counter(error.paper_label for error in classified if error.paper_label)
        tools = Counter(error.tool for error in classified if error.tool)
        failures = sum(labels.values())
        shares = [labels[label] / failures if failures else None for label in FIGURE2_LABELS]
        table.add(*g.cells(with_run), failures, *shares,
                  ", ".join(f"{tool} {n}" for tool, n in tools.most_common()) or None)
    table.note = ("Derived from each trajectory's last state (docs/fidelity/travelplanner.md §10); Max Step Limit "
                  "includes the agents' prompt-length halt.")
    return table


def step_states(groups: Sequence[GroupView], *, with_run: bool) -> Table:
    """Step-level outcomes of the tool agent (Successful, invalidAction, Illegal args., null actions)."""
    table = Table("step_states", "Tool-agent steps by state",
                  (*group_columns(with_run), Column("state"), Column("steps", Kind.INT), Column("share", Kind.PCT)))
    for g in groups:
        counts: Counter[str] = Counter()
        for view in g.rollouts:
            counts.update(taxonomy.state_counts(view.steps))
        total = sum(counts.values())
        for state, count in counts.most_common():
            table.add(*g.cells(with_run), state, count, count / total)
    return table


def tool_usage(groups: Sequence[GroupView], *, with_run: bool) -> Table:
    """Paper Table 5: successful tool calls per query by trip length, beside the reference information's entries."""
    views = [view for g in groups if _is_tool_agent(g) for view in g.rollouts if view.task is not None]
    lengths = sorted({_days(view) for view in views})
    columns = [Column(f"{days}-day {who}", Kind.FLOAT) for days in lengths for who in ("agent", "reference")]
    table = Table("tool_usage", "Tool calls per query by trip length, agent vs reference (paper Table 5)",
                  (*group_columns(with_run), Column("tool"), *columns))
    for g in groups:
        if not _is_tool_agent(g):
            continue
        by_days: dict[int, list[RolloutView]] = {days: [] for days in lengths}
        for view in g.rollouts:
            if view.task is not None:
                by_days[_days(view)].append(view)
        for tool, prefixes in TOOL_REFERENCE.items():
            cells: list[float | None] = []
            for days in lengths:
                in_cell = by_days[days]
                references = [_reference_entries(view, prefixes) for view in in_cell]
                known = [count for count in references if count is not None]
                cells.append(sum(_successful_calls(view.steps, tool) for view in in_cell) / len(in_cell)
                             if in_cell else None)
                cells.append(sum(known) / len(known) if known and prefixes else None)
            table.add(*g.cells(with_run), tool, *cells)
    table.note = ("Per query: the agent's successful calls; the reference information's entries (one per city or "
                  "leg, distances once per mode). A dash where the queries carry no reference information.")
    return table


def _is_tool_agent(group: GroupView) -> bool:
    """Groups whose trajectories are tool-agent steps (two-stage): Figure 2 and Table 5 are about those."""
    return any("action" in step and "state" in step for view in group.rollouts for step in view.steps)


def _days(view: RolloutView) -> int:
    return int(view.task.input.get("days") or 0) if view.task is not None else 0


def _successful_calls(steps: Sequence[Mapping[str, Any]], tool: str) -> int:
    """Steps whose action (logged as `Action N: Type[...]`, docs/fidelity/travelplanner.md §4.8) is `tool` and whose
    state is Successful."""
    return sum(1 for step in steps if step.get("state") == SUCCESSFUL
               and parse_action(_LOGGED_ACTION.sub("", str(step.get("action", ""))))[0] == tool)


def _reference_entries(view: RolloutView, prefixes: tuple[str, ...]) -> int | None:
    entries = view.task.input.get("reference_information") if view.task is not None else None
    if not isinstance(entries, list):
        return None
    return sum(1 for entry in entries if isinstance(entry, Mapping)
               and str(entry.get("Description", "")).startswith(prefixes))


def report_sections(runs: Sequence[RunView], mode: str, *, with_run: bool) -> list[Section]:
    """Pass rates (Table 3, a Table 4 and its chart per group), errors (taxonomy, Figure 2, step states), tool usage."""
    scored = []
    for run in runs:
        queries = run_queries(run.tasks)  # parsed once per run, not per group
        scored += [group_scores(g, run.tasks, queries, run.evaluated, partial=run.partial) for g in run.groups]
    groups = [item.group for item in scored]
    parsers = ", ".join(f"{run.label}: {parser_of(run.options)}" for run in runs)
    rates = Section("Pass rates", [table3(scored, with_run=with_run)],
                    notes=[f"Evaluator: {mode}. Plans parsed by: {parsers}."])
    for n, item in enumerate(scored):
        table = table4(item, f"constraints_{n + 1}_{slug(item.group.label)}")
        if table is None:
            continue
        rates.tables.append(table)
        if item.group.sample > 0:
            continue  # one chart per (model, strategy): further samples have their tables, not more figures
        levels = [c.name for c in table.columns[2:] if not c.name.endswith("-day")]
        rates.charts.append(GroupedRates(
            f"constraints_{n + 1}", f"Pass rate per constraint and level: {item.group.label}",
            [str(row[1]) for row in table.rows],
            [(level, [_rate(row[2 + i]) for row in table.rows]) for i, level in enumerate(levels)]))
    counted = [(g, categories(g)) for g in groups]
    errors_section = Section("Errors", [errors(counted, with_run=with_run), tool_use_errors(groups, with_run=with_run),
                                        step_states(groups, with_run=with_run)],
                             [StackedShares("errors", "How rollouts ended, per model and strategy",
                                            [(_label(g, with_run), dict(counts)) for g, counts in counted])])
    used = tool_usage(groups, with_run=with_run)
    usage = (Section("Tool usage", [used]) if used.rows else  # an empty table would print a blank row
             Section("Tool usage", notes=["No tool-agent (two-stage) rollouts: no tool calls to count."]))
    return [rates, errors_section, usage]


def group_rates(run: RunView, groups: Sequence[GroupView | None]) -> list[Mapping[str, float | None] | None]:
    """The six Table 3 rates of each group (None: no group, or no labels / verdicts), for `report --compare`."""
    queries = run_queries(run.tasks) if any(g is not None for g in groups) else []
    rates: list[Mapping[str, float | None] | None] = []
    for g in groups:
        scores = group_scores(g, run.tasks, queries, run.evaluated).scores if g is not None else None
        rates.append(None if scores is None else {header: scores.rates[name]
                                                  for name, header in zip(RATE_NAMES, RATE_HEADERS)})
    return rates



def rollout_category(view: RolloutView) -> str:
    """How one rollout ended: its error taxonomy category (its page's headline)."""
    return taxonomy.classify(view.status, view.steps).category


def rollout_metrics(view: RolloutView) -> Mapping[str, Outcome]:
    """Table 3's six figures for one rollout, final pass first: the macro rates and delivery as pass/fail, the micro
    rates as its share of constraints passed (commonsense of 8, hard of 1 + those its query asks), an undelivered
    plan failing all; without a stored evaluation (or labels) only delivery."""
    verdict = plan_verdict(view)
    names = ("Final pass", "Delivery", "Commonsense macro", "Hard macro", "Commonsense micro", "Hard micro")
    if view.evaluation is None or view.task is None:
        return dict(zip(names, (None, bool(view.plan), None, None, None, None)))
    commonsense = verdict.commonsense or {}
    hard = verdict.hard or {}
    all_commonsense = verdict.delivered and all(result is True for result, _ in commonsense.values())
    no_hard_failure = verdict.hard is not None and all(result is not False for result, _ in hard.values())
    asked = hard_denominator([query_from_record(view.task.input, f"task {view.task.id}")])
    return dict(zip(names, (all_commonsense and no_hard_failure, verdict.delivered, all_commonsense,
                            verdict.delivered and no_hard_failure,
                            sum(result is True for result, _ in commonsense.values()) / 8,
                            sum(result is True for result, _ in hard.values()) / asked)))

def _rate(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _label(group: GroupView, with_run: bool) -> str:
    return f"{group.run}: {group.label}" if with_run else group.label
