"""A comparison as report tables (`reports.table.Table`): what the terminal, `compare.md`, the CSVs and
`compare.html` show alike."""

from __future__ import annotations

from reports.paired.analysis import ALPHA, Comparison, PairResult
from reports.table import Column, Kind, Table

SIDES = (Column("A"), Column("B"))


def method_notes(comparison: Comparison) -> list[str]:
    return [f"Pairs are rollouts of the same (split, task, sample) in A and B; differences are B - A. Binary metrics: "
            "McNemar's exact test on the discordant pairs, the 95 % interval of the difference by Newcombe's "
            "method 10 for paired proportions (in points). Continuous metrics: the Wilcoxon signed-rank test, "
            f"the 95 % interval of the mean difference by a paired percentile bootstrap ({comparison.resamples:,} "
            f"resamples, seed {comparison.seed}). p Holm: Holm's correction over a group pair's binary metrics, "
            f"and separately over its continuous ones; * marks p Holm < {ALPHA}."]


def binary_table(comparison: Comparison) -> Table:
    table = Table("compare_binary", "Pass/fail metrics, paired (%; Δ and its 95 % interval in points)",
                  (*SIDES, Column("metric"), Column("N", Kind.INT), Column("A %", Kind.PCT), Column("B %", Kind.PCT),
                   Column("A only", Kind.INT), Column("B only", Kind.INT), Column("Δ", Kind.DELTA),
                   Column("CI low", Kind.DELTA), Column("CI high", Kind.DELTA), Column("p", Kind.P_VALUE),
                   Column("p Holm", Kind.P_VALUE), Column("sig.")))
    for result in comparison.results:
        for m in (m for m in result.metrics if m.binary):
            table.add(result.pairing.a.label, result.pairing.b.label, m.metric, m.n, m.mean_a, m.mean_b,
                      m.counts[1], m.counts[2], m.difference, *m.ci95, m.p_value, m.p_holm, _mark(m.significant))
    table.note = "A only: pairs passed in A and failed in B (B only: the reverse); p: McNemar's exact test."
    return table


def continuous_table(comparison: Comparison) -> Table:
    table = Table("compare_continuous", "Continuous metrics, paired (means; Δ with a bootstrap 95 % interval)",
                  (*SIDES, Column("metric"), Column("N", Kind.INT), Column("mean A", Kind.NUMBER),
                   Column("mean B", Kind.NUMBER), Column("Δ", Kind.NUMBER), Column("CI low", Kind.NUMBER),
                   Column("CI high", Kind.NUMBER), Column("p", Kind.P_VALUE), Column("p Holm", Kind.P_VALUE),
                   Column("sig.")))
    for result in comparison.results:
        for m in (m for m in result.metrics if not m.binary):
            table.add(result.pairing.a.label, result.pairing.b.label, m.metric, m.n, m.mean_a, m.mean_b,
                      m.difference, *m.ci95, m.p_value, m.p_holm, _mark(m.significant))
    table.note = f"p: Wilcoxon signed-rank; interval: paired bootstrap, seed {comparison.seed}."
    return table


def per_task_table(comparison: Comparison) -> Table | None:
    """With several samples per task: each metric's difference over task means, and how much of the differences'
    variance lies between samples of a task."""
    table = Table("compare_per_task", "Per-task mean differences (several samples per task)",
                  (*SIDES, Column("metric"), Column("tasks", Kind.INT), Column("Δ", Kind.NUMBER),
                   Column("CI low", Kind.NUMBER), Column("CI high", Kind.NUMBER),
                   Column("between samples", Kind.PCT)))
    for result in comparison.results:
        for m in result.metrics:
            if m.per_task is not None:
                scale = 100.0 if m.binary else 1.0
                table.add(result.pairing.a.label, result.pairing.b.label, m.metric, m.per_task.tasks,
                          scale * m.per_task.difference, scale * m.per_task.ci95[0], scale * m.per_task.ci95[1],
                          m.per_task.within_share)
    table.note = ("Each task's samples averaged first (binary metrics in points); 'between samples': the share of "
                  "the paired differences' variance that lies between samples of one task.")
    return table if table.rows else None


def changes_table(comparison: Comparison) -> Table:
    table = Table("compare_changes", "Tasks whose headline outcome changed",
                  (*SIDES, Column("metric"), Column("change"), Column("split"), Column("task"),
                   Column("sample", Kind.INT), Column("verdicts changed (A → B)"), Column("first differing call",
                                                                                        Kind.INT)))
    for result in comparison.results:
        for change_kind, changes in (("regressed", result.regressed), ("improved", result.improved)):
            for change in changes:
                split, task, sample = change.key
                verdicts = "; ".join(f"{name} ({group}): {_passed(x)} → {_passed(y)}"
                                     for group, name, x, y in change.changed)
                table.add(result.pairing.a.label, result.pairing.b.label, result.headline, change_kind, split, task,
                          sample, verdicts, change.first_difference)
    table.note = "Regressed: passed in A, failed in B; improved: the reverse. Calls count from 0."
    return table


def categories_table(comparison: Comparison) -> Table:
    table = Table("compare_categories", "How rollouts ended (the benchmark's error categories), matched pairs",
                  (*SIDES, Column("category"), Column("A", Kind.INT), Column("B", Kind.INT), Column("Δ", Kind.INT)))
    for result in comparison.results:
        for category, a, b in result.categories:
            table.add(result.pairing.a.label, result.pairing.b.label, category, a, b, b - a)
    return table


def divergence_table(comparison: Comparison) -> Table:
    table = Table("compare_divergence", "Where the runs part: the first LLM call whose request differs",
                  (*SIDES, Column("pairs", Kind.INT), Column("same requests", Kind.INT),
                   Column("first differing call: pairs"), Column("B calls", Kind.INT),
                   Column("in A's cache", Kind.PCT), Column("re-run B from A's cache", Kind.USD),
                   Column("tokens to send", Kind.INT)))
    for result in comparison.results:
        firsts = ", ".join(f"#{index}: {count}" for index, count in
                           sorted(((i, c) for i, c in result.first_differences.items() if i is not None)))
        found = result.divergence
        table.add(result.pairing.a.label, result.pairing.b.label, len(result.pairing.pairs),
                  result.first_differences.get(None, 0), firsts, found.calls, found.share, found.new_usd,
                  found.new_tokens)
    table.note = ("Calls count from 0: '#2: 40' is 40 pairs whose first two requests were the same and whose third "
                  "differed (a prompt changed at step 3). 'In A's cache': B's calls whose request A's run made; the "
                  "others cost what B paid for them, which is what re-running B from A's cache would spend.")
    return table


def unmatched_table(result: PairResult) -> Table:
    pairing = result.pairing
    table = Table("compare_unmatched", "Rollouts without a partner",
                  (Column("side"), Column("group"), Column("split"), Column("task"), Column("sample", Kind.INT)))
    for side, keys in ((pairing.a, pairing.a_unmatched), (pairing.b, pairing.b_unmatched)):
        for split, task, sample in keys:
            table.add("A" if side is pairing.a else "B", side.label, split, task, sample)
    return table


def all_tables(comparison: Comparison) -> list[Table]:
    tables = [binary_table(comparison), continuous_table(comparison)]
    if (per_task := per_task_table(comparison)) is not None:
        tables.append(per_task)
    tables += [changes_table(comparison), categories_table(comparison), divergence_table(comparison)]
    unmatched = [unmatched_table(result) for result in comparison.results]
    if any(table.rows for table in unmatched):
        merged = unmatched[0]
        merged.rows = [row for table in unmatched for row in table.rows]
        tables.append(merged)
    return tables


def _mark(significant: bool) -> str:
    return "*" if significant else ""


def _passed(value: bool | None) -> str:
    return "–" if value is None else "pass" if value else "fail"
