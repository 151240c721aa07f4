"""A report as values: sections of tables, plots and notes, built from run directories (no rendering here).

`build_report` reads the runs (`reports.collect`), asks the benchmark-specific module for its tables (TravelPlanner
for now; any other benchmark gets the generic status and cost tables), adds the cost section and, with
`--compare`, the side-by-side deltas. `markdown.py`, `csv_out.py` and `html.py` render the same `Report`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks import base
from reports import plots, travelplanner
from reports.collect import Group, RunData, collect_runs
from reports.compare import compare_tables
from reports.plots import Plot
from reports.table import Column, Kind, Table
from reports.usage import cost_table, status_table, usage_of
from runner.outputs import slug


@dataclass(slots=True)
class Section:
    title: str
    tables: list[Table] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    title: str
    runs: list[RunData]
    """The reported runs (first the main ones, then those of `--compare`)."""
    sections: list[Section]

    def tables(self) -> list[Table]:
        return [table for section in self.sections for table in section.tables]

    def plots(self) -> list[Plot]:
        return [plot for section in self.sections for plot in section.plots]


def build_report(run_dirs: Sequence[str | os.PathLike[str]], compare: Sequence[str | os.PathLike[str]] = (),
                 mode: str = "official") -> Report:
    """Reads the runs and builds every section.

    Args:
        run_dirs: The runs reported (their groups share the tables); `str`s from a notebook work as well as `Path`s.
        compare: Runs compared with the first of `run_dirs`, side by side with deltas.
        mode: Evaluator mode whose stored verdicts are read (`official` or `strict`).

    Raises:
        UserError: a directory is not a run, or holds no finished rollout.
    """
    main = collect_runs([*run_dirs, *compare], mode)
    reported, compared = main[: len(run_dirs)], main[len(run_dirs):]
    groups = [group for run in reported for group in run.groups]
    with_run = len(reported) > 1
    sections = [_summary(reported)]
    travel = [g for g in groups if g.benchmark == travelplanner.NAME]
    if travel:
        sections += _travelplanner_sections(reported, mode, with_run=with_run)
    other = [g for g in groups if g.benchmark != travelplanner.NAME]
    if other:
        sections.append(Section("Statuses", [status_table(other, base.GENERIC_STATUSES, with_run=with_run)]))
    sections.append(_cost_section(groups, with_run=with_run))
    if compared:
        sections.append(Section("Comparison", compare_tables(reported[0], compared, mode),
                                notes=[f"Deltas are each run minus {reported[0].label}, in percentage points "
                                       "(rates) or dollars (cost), for the (model, strategy) pairs both ran."]))
    sections.append(_submissions(groups))
    title = "tripbench report: " + ", ".join(run.label for run in reported)
    return Report(title, main, sections)


def _summary(runs: Sequence[RunData]) -> Section:
    table = Table("runs", "Runs", (Column("run"), Column("directory"), Column("state"), Column("tasks", Kind.INT),
                                   Column("rollouts", Kind.INT), Column("spent", Kind.USD), Column("evaluator")))
    for run in runs:
        table.add(run.label, str(run.run_dir), run.state, len(run.tasks),
                  sum(len(g.rollouts) for g in run.groups), run.spent_usd, run.mode if run.evaluated else "none")
    notes = [f"{run.label}: partial report: the run is {'still going' if run.state == 'running' else run.state}, "
             f"{run.finished:,} of {run.planned:,} planned rollouts finished; rates cover the finished rollouts "
             "scored so far (a running run scores them every half minute)" for run in runs if run.partial]
    notes += [f"{run.label}: no `{run.mode}` evaluation is stored; add \"{run.mode}\" to the spec's `evaluate` and "
              "run it again (finished rollouts are not re-run), or score its submission with `tripbench evaluate`."
              for run in runs if not run.evaluated and run.mode not in run.spec_modes
              and any(g.benchmark == travelplanner.NAME for g in run.groups)]
    return Section("Summary", [table], notes=notes)


def _travelplanner_sections(runs: Sequence[RunData], mode: str, *, with_run: bool) -> list[Section]:
    scored = []
    for run in runs:
        travel = [g for g in run.groups if g.benchmark == travelplanner.NAME]
        if travel:
            queries = travelplanner.run_queries(run.tasks)  # parsed once per run, not per group
            scored += [travelplanner.group_scores(g, run.tasks, queries, run.evaluated, partial=run.partial)
                       for g in travel]
    groups = [item.group for item in scored]
    parsers = ", ".join(f"{run.label}: {travelplanner.parser_of(run.options)}" for run in runs
                        if any(g.benchmark == travelplanner.NAME for g in run.groups))
    rates = Section("Pass rates", [travelplanner.table3(scored, with_run=with_run)],
                    notes=[f"Evaluator: {mode}. Plans parsed by: {parsers}."])
    for n, item in enumerate(scored):
        table = travelplanner.table4(item, f"constraints_{n + 1}_{slug(item.group.label)}")
        if table is None:
            continue
        rates.tables.append(table)
        if item.group.sample > 0:
            continue  # one plot per (model, strategy): further samples have their tables, not more figures
        levels = [c.name for c in table.columns[2:] if not c.name.endswith("-day")]
        plot = plots.grouped_rates(
            f"constraints_{n + 1}", f"Pass rate per constraint and level: {item.group.label}",
            [str(row[1]) for row in table.rows],
            [(level, [row[2 + i] for row in table.rows]) for i, level in enumerate(levels)])  # type: ignore[misc]
        if plot is not None:
            rates.plots.append(plot)
    counted = [(g, travelplanner.categories(g)) for g in groups]
    errors = Section("Errors", [travelplanner.errors(counted, with_run=with_run),
                                travelplanner.tool_use_errors(groups, with_run=with_run),
                                travelplanner.step_states(groups, with_run=with_run)])
    plot = plots.stacked_shares("errors", "How rollouts ended, per model and strategy",
                                [(_label(g, with_run), dict(counts)) for g, counts in counted])
    if plot is not None:
        errors.plots.append(plot)
    usage = Section("Tool usage", [travelplanner.tool_usage(groups, with_run=with_run)])
    return [rates, errors, usage]


def _cost_section(groups: Sequence[Group], *, with_run: bool) -> Section:
    section = Section("Cost and usage", [cost_table(groups, with_run=with_run)])
    plot = plots.money("cost", "Cost per model and strategy",
                       [(_label(g, with_run), u.spent_usd, u.saved_usd) for g in groups for u in [usage_of(g)]])
    if plot is not None:
        section.plots.append(plot)
    return section


def _submissions(groups: Sequence[Group]) -> Section:
    table = Table("submissions", "Submission files (the benchmark's official format)",
                  (Column("model"), Column("strategy"), Column("split"), Column("file")))
    for g in groups:
        path = g.submission
        table.add(g.model, g.strategy + (f" #{g.sample}" if g.samples > 1 else ""), g.split,
                  str(path) if path.is_file() else "not written yet (unfinished rollouts)")
    return Section("Submissions", [table])


def _label(group: Group, with_run: bool) -> str:
    return f"{group.run}: {group.label}" if with_run else group.label
