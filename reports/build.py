"""A report as values: sections of tables, plots and notes, built from run directories (no rendering here).

`build_report` reads the runs (`reports.collect`), asks each benchmark of the runs for its own sections
(`benchmarks.reporting.ReportSections`: tables and charts as values; a benchmark without them gets the generic
status table), adds the cost section and, with `--compare`, the side-by-side deltas. `markdown.py`, `csv_out.py`
and `html.py` render the same `Report`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks import base
from benchmarks.reporting import Section as BenchmarkSection
from errors import UsageError
from reports import plots
from reports.collect import Group, RunData, benchmarks_of, collect_runs, load_benchmark
from reports.compare import compare_tables
from reports.oracle import ORACLE, oracle_table
from reports.paired.analysis import compare as compare_pairs
from reports.paired.pairing import baseline_pairings
from reports.paired.tables import all_tables as paired_tables
from reports.paired.tables import method_notes
from reports.plots import Plot
from reports.table import Column, Kind, Table
from reports.usage import cost_table, status_table, usage_of
from runner.store.summary import failure_reasons

CHANGES_SHOWN = 100
"""Tasks whose outcome changed between two groups of a run, listed in the report (the rest are counted)."""


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
    warnings: list[str] = field(default_factory=list)
    """What a reader must know before trusting the figures (compared runs over other tasks); also in the sections."""

    def tables(self) -> list[Table]:
        return [table for section in self.sections for table in section.tables]

    def plots(self) -> list[Plot]:
        return [plot for section in self.sections for plot in section.plots]


def build_report(run_dirs: Sequence[str | os.PathLike[str]], compare: Sequence[str | os.PathLike[str]] = (),
                 mode: str = "official", baseline: str | None = None) -> Report:
    """Reads the runs and builds every section.

    Args:
        run_dirs: The runs reported (their groups share the tables); `str`s from a notebook work as well as `Path`s.
        compare: Runs compared with the first of `run_dirs`, side by side with deltas.
        mode: Evaluator mode whose stored verdicts are read (`official` or `strict`).
        baseline: The group (`MODEL/STRATEGY`) a run's other groups are compared with pair by pair (default: its
            first group); the paired section appears for runs of several groups.

    Raises:
        UserError: a directory is not a run, or holds no finished rollout; UsageError: a mode no run evaluated,
        or a baseline a run of several groups does not have.
    """
    main = collect_runs([*run_dirs, *compare], mode)
    reported, compared = main[: len(run_dirs)], main[len(run_dirs):]
    groups = [group for run in reported for group in run.groups]
    with_run = len(reported) > 1
    sections = [_summary(reported)]
    named = benchmarks_of(reported)
    for name, reference in named.items():
        benchmark = load_benchmark(reference)
        modes = benchmark.modes
        if mode not in modes:
            raise UsageError(f"benchmark {name} has no evaluator mode {mode!r} (expected {', '.join(modes)})")
        runs = [run for run in reported if any(g.benchmark == name for g in run.groups)]
        if benchmark.report is not None:
            own = [_drawn(section) for section in benchmark.report.report_sections(runs, mode, with_run=with_run)]
            sections += [_titled(section, name) for section in own] if len(named) > 1 else own
        else:
            sections.append(Section(f"Statuses: {name}", [status_table(
                [g for run in runs for g in run.groups], {**base.GENERIC_STATUSES, **benchmark.statuses},
                with_run=with_run)]))
    for run in main:  # asked for a mode the run's spec did not evaluate: empty tables would read as zeros
        if not run.evaluated and run.spec_modes and mode not in run.spec_modes:
            raise UsageError(f"{run.run_dir}: no `{mode}` evaluation is stored, only {', '.join(run.spec_modes)}: "
                             f"report those (--mode {run.spec_modes[0]}), or add \"{mode}\" to the spec's `evaluate` "
                             "and run it again (finished rollouts are not re-run)")
    if (oracle := oracle_table(reported, with_run=with_run)) is not None:
        sections.append(Section(f"Where {ORACLE} failed", [oracle]))
    if failures := _failures(reported, with_run=with_run):
        sections.append(failures)
    sections.append(_cost_section(groups, with_run=with_run))
    if compared:
        comparison = compare_tables(reported[0], compared, mode)
        warnings = comparison.warnings
        sections.append(Section("Comparison", comparison.tables,
                                notes=[f"Deltas are each run minus {reported[0].label}, in percentage points "
                                       "(rates) or dollars (cost), for the (model, strategy) pairs both ran.",
                                       *warnings]))
    if by_pairs := _paired(reported, baseline):
        sections.append(by_pairs)
    sections.append(_submissions(groups))
    sections.append(_provenance(reported, with_run=with_run))
    title = "tripbench report: " + ", ".join(run.label for run in reported)
    return Report(title, main, sections, warnings if compared else [])


def _paired(runs: Sequence[RunData], baseline: str | None) -> Section | None:
    """Each run's groups against its baseline, pair by pair (`tripbench compare`'s tables), for runs of several."""
    found = compare_pairs([pairing for run in runs for pairing in baseline_pairings(run, baseline)])
    if not found.results:
        if baseline is not None:
            raise UsageError(f"--baseline {baseline}: the run has no other group to compare with it")
        return None
    bases = ", ".join(dict.fromkeys(result.pairing.a.label for result in found.results))
    tables = [table for table in paired_tables(found) if table.rows]
    for table in tables:  # the report stays small at 10,000s of rollouts: `tripbench compare` lists every change
        if table.name == "compare_changes" and len(table.rows) > CHANGES_SHOWN:
            more = len(table.rows) - CHANGES_SHOWN
            table.rows = table.rows[:CHANGES_SHOWN]
            table.note = (f"{table.note} The first {CHANGES_SHOWN} shown, {more:,} more: `tripbench compare "
                          "RUN:MODEL/STRATEGY RUN:MODEL/STRATEGY` lists them all, each with its side-by-side page.")
    return Section("Groups compared pair by pair", tables,
                   notes=[f"Each group (B) against {bases} (A), matched by (split, task, sample); `--baseline "
                          "MODEL/STRATEGY` names another A, `tripbench compare` the side-by-side pages.",
                          *method_notes(found)])


def _drawn(section: BenchmarkSection) -> Section:
    """A benchmark's section with its charts drawn."""
    drawn = [plot for chart in section.charts if (plot := plots.draw(chart)) is not None]
    return Section(section.title, list(section.tables), drawn, list(section.notes))


def _titled(section: Section, benchmark: str) -> Section:
    """A benchmark's section and its tables named after it, in a report of several benchmarks (two "Errors"
    sections are otherwise told apart only by their rows); the tables' file names too where another may share them."""
    if benchmark.lower() not in section.title.lower():
        section.title = f"{benchmark}: {section.title}"
    for table in section.tables:
        if benchmark.lower() not in table.title.lower():
            table.title = f"{benchmark}: {table.title}"
    return section


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
              for run in runs if not run.evaluated and run.mode not in run.spec_modes]
    return Section("Summary", [table], notes=notes)


def _failures(runs: Sequence[RunData], *, with_run: bool) -> Section | None:
    """Each model's most frequent reasons for not delivering (a provider's message, a dead loop), with counts."""
    table = Table("failure_reasons", "Most frequent failure reasons per model",
                  (*((Column("run"),) if with_run else ()), Column("model"), Column("reason"),
                   Column("rollouts", Kind.INT)))
    for run in runs:
        stored = [view.stored for group in run.groups for view in group.rollouts]
        for model, top in failure_reasons(stored).items():
            for reason, count in top:
                table.add(*((run.label,) if with_run else ()), model, reason, count)
    return Section("Failure reasons", [table]) if table.rows else None


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


def _provenance(runs: Sequence[RunData], *, with_run: bool) -> Section:
    """What made the numbers, one row per fact (all of it in provenance.json beside the report)."""
    table = Table("provenance", "What made these numbers", (*((Column("run"),) if with_run else ()),
                                                              Column("item"), Column("value")))
    for run in runs:
        facts = run.provenance
        rows: list[tuple[str, str]] = [
            ("tripbench", f"{facts.get('tripbench')}" + (f" (git {facts['git_commit']})" if facts.get("git_commit")
                                                          else "")),
            ("spec sha256", str(facts.get("spec_sha256"))),
            *((f"data {name}", f"sha256 {digest}") for name, digest in facts.get("data_sha256", {}).items()),
            ("index schema version", str(facts.get("index_schema_version") or "–")),
            *((f"model {label}", _settings(settings)) for label, settings in facts.get("models", {}).items()),
            ("price table", str(facts.get("price_table") or "–")),
            ("cache mode", str(facts.get("cache") or "–")),
            ("numbers from a pack's replay", "yes" if facts.get("replayed") else "no"),
            *((("data differs between shards", ", ".join(differing)),)
              if (differing := facts.get("data_differs_between_shards")) else ()),
            *((f"session {s['session']}" + (f" of {s['shard']}" if s.get("shard") else ""),
               f"{s['started']} on {s.get('host') or '?'}, {s.get('outcome') or 'open'}"
               + (f", replay of pack sha256 {s['replay_of']}" if s.get("replay_of") else ""))
              for s in facts.get("sessions", [])),
        ]
        for item, value in rows:
            table.add(*((run.label,) if with_run else ()), item, value)
    return Section("Provenance", [table], notes=["All of it, as JSON: provenance.json beside this report."])


def _settings(settings: dict[str, object]) -> str:
    """A model's request settings as sent, the set ones only, and the day its provider shuts it down."""
    shown = ", ".join(f"{name} {json.dumps(value)}" for name, value in settings.items()
                      if value is not None and name not in ("model", "shut_down_on"))
    retires = f"; shut down on {settings['shut_down_on']}" if settings.get("shut_down_on") else ""
    return f"{settings.get('model')}" + (f": {shown}" if shown else "") + retires


def _label(group: Group, with_run: bool) -> str:
    return f"{group.run}: {group.label}" if with_run else group.label
