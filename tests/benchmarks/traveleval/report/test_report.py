"""TravelEval's report sections over runs of the oracle and the noisy model on the generated world, each plan scored
by the real evaluator; the views are small stand-ins for what `reports.collect` reads from a run directory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from benchmarks.base import DELIVERED, Evaluation, Task, Verdict
from benchmarks.reporting import GroupedRates, Heatmap, Radar, Section, StackedShares, Table
from benchmarks.traveleval import dataset, report
from benchmarks.traveleval.evaluation import evaluate_plan
from benchmarks.traveleval.evaluation.distance import open_distances
from benchmarks.traveleval.metric_names import METRICS
from benchmarks.traveleval.offline.mistakes import NOISY, noisy_plan
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.offline.world import generate_world
from benchmarks.traveleval.report import aggregate, paper
from benchmarks.traveleval.report.feasible import unsatisfiable
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox
from reports.plots import draw


@dataclass
class View:
    task: Task | None
    status: str
    plan: Any
    evaluation: Evaluation | None
    answer: str | None = None
    steps: Sequence[Mapping[str, Any]] = ()

    @property
    def task_id(self) -> str:
        return self.task.id if self.task else ""


@dataclass
class Group:
    run: str
    model: str
    split: str
    rollouts: list[View]
    strategy: str = "direct"
    benchmark: str = "traveleval"
    sample: int = 0
    samples: int = 1

    @property
    def planned(self) -> int:
        return len(self.rollouts)

    @property
    def label(self) -> str:
        return f"{self.model} / {self.strategy}" + (f" #{self.sample}" if self.samples > 1 else "")

    def cells(self, with_run: bool) -> tuple[str, ...]:
        return ((self.run,) if with_run else ()) + (self.model, self.strategy)


@dataclass
class Run:
    label: str
    tasks: list[Task]
    groups: list[Group]
    evaluated: bool = True
    partial: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    sampling: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def _view(task: Task, plan: Mapping[str, Any] | None, sandbox: Sandbox, folder: Path, mode: str = "official") -> View:
    if plan is None:
        details: dict[str, Any] = {"query_uid": task.id, "error": "no plan: parse_failure"}
        return View(task, "parse_failure", None, Evaluation(tuple(Verdict("constraint", key, False)
                                                                  for key in report.CONSTRAINT_KEYS), details))
    details = evaluate_plan(plan, task.input, sandbox, mode=mode, distances=open_distances("offline", folder))
    verdicts = tuple(Verdict("constraint", key, value == 1) for key, value in details["metrics"]["constraint"].items())
    return View(task, DELIVERED, plan, Evaluation(verdicts, details))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    folder = generate_world(tmp_path_factory.mktemp("world")).folder
    made: list[Run] = []
    with Sandbox.open(ensure_index(folder)) as sandbox:
        for split in ("all", "progressive"):
            tasks = dataset.load_tasks(folder, split)
            oracle = [_view(t, build_plan(sandbox, t.input), sandbox, folder) for t in tasks]
            noisy = [_view(t, noisy_plan(sandbox, t.input, NOISY.default)[0], sandbox, folder) for t in tasks]
            noisy[0] = _view(tasks[0], None, sandbox, folder)  # one rollout without a plan
            made.append(Run(split, tasks, [Group(split, "oracle", split, oracle), Group(split, "noisy", split, noisy)],
                            options={"data_dir": str(folder)}))
        tasks = dataset.load_tasks(folder, "all")
        corrected = [_view(t, build_plan(sandbox, t.input), sandbox, folder, "corrected") for t in tasks]
        made.append(Run("corrected", tasks, [Group("corrected", "oracle", "all", corrected)],
                        options={"data_dir": str(folder)}))
        samples = [Group("sampled", "noisy", "all",
                         [_view(t, noisy_plan(sandbox, t.input, NOISY.parse(f"seed={seed}"))[0], sandbox, folder)
                          for t in tasks], sample=seed, samples=2)
                   for seed in (0, 1)]
        made.append(Run("sampled", tasks, samples, options={"data_dir": str(folder)}))
    return made


def _table(sections: list[Section], name: str) -> Table:
    return next(table for section in sections for table in section.tables if table.name == name)


def _charts(sections: list[Section], kind: type) -> list[Any]:
    return [chart for section in sections for chart in section.charts if isinstance(chart, kind)]


def _num(cell: object) -> float:
    assert isinstance(cell, int | float)
    return float(cell)


def _column(table: Table, header: str) -> list[Any]:
    index = [column.name for column in table.columns].index(header)
    return [row[index] for row in table.rows]


def test_means_are_over_scored_plans_beside_counts_and_delivery(runs: list[Run]) -> None:
    sections = report.report_sections(runs[:1], "official", with_run=False)
    table = _table(sections, "te_constraint")
    oracle, noisy = table.rows
    assert oracle[:6] == ("oracle", "direct", "all", 9, 9, 1.0) and all(rate == 1.0 for rate in oracle[6:])
    assert noisy[2:6] == ("all", 9, 8, 8 / 9)  # the rollout without a plan is counted, not averaged
    views = runs[0].groups[1].rollouts[1:]
    met = [view.evaluation.details["metrics"]["constraint"]["budget_satisfaction"]  # type: ignore[union-attr]
           for view in views]
    assert _column(table, "BCS budget")[1] == pytest.approx(fmean(met))
    every = [all(v == 1 for v in view.evaluation.details["metrics"]["constraint"].values())  # type: ignore[union-attr]
             for view in views]
    assert _column(table, "all seven")[1] == pytest.approx(fmean(every))
    assert _column(table, "all seven / rollouts")[1] == pytest.approx(sum(every) / 9)
    accuracy = _table(sections, "te_accuracy")
    assert _column(accuracy, "plans") == [9, 8] and _column(accuracy, "FAR fictitious")[0] == 0.0


def test_unmeasured_space_is_never_a_score(runs: list[Run]) -> None:
    official = report.report_sections(runs[:1], "official", with_run=False)
    assert set(_column(_table(official, "te_space"), "SSR route penalty")) == {aggregate.NOT_MEASURED}
    scores = _table(official, "te_dimensions")
    assert set(_column(scores, "space")) == {aggregate.NOT_MEASURED}
    radars = _charts(official, Radar)
    assert radars and all("space" not in chart.labels and "space not measured" in chart.title for chart in radars)
    assert any(note.startswith("Not measured: space.RP on 17 of 17 scored plans (a Gaode driving distance was "
                               "missing") and "AMAP_API_KEY" in note for note in official[0].notes)
    # the corrected mode measures distances offline: space is a score there, and on the radar
    corrected = report.report_sections([runs[2]], "corrected", with_run=False)
    assert all(isinstance(value, float) for value in _column(_table(corrected, "te_dimensions"), "space"))
    assert all("space" in chart.labels for chart in _charts(corrected, Radar))
    assert not any(note.startswith("Not measured") for note in corrected[0].notes)


def test_dimension_scores_do_not_depend_on_the_rest_of_the_report(runs: list[Run]) -> None:
    alone = _table(report.report_sections(runs[:1], "official", with_run=False), "te_dimensions").rows
    together = _table(report.report_sections(runs[:2], "official", with_run=True), "te_dimensions").rows
    assert [row[1:] for row in together[:2]] == alone
    assert all(value == aggregate.NOT_MEASURED or 0 <= _num(value) <= 1 for row in alone for value in row[3:])
    economy = report.DIMENSIONS.index("economy")
    plans = [view for view in runs[0].groups[0].rollouts]
    efficiency = [view.evaluation.details["metrics"]["economy"]["budget_efficiency"]  # type: ignore[union-attr]
                  for view in plans]
    from benchmarks.traveleval.report.scores import BE_HALF
    assert alone[0][3 + economy] == pytest.approx(fmean(be / (be + BE_HALF) for be in efficiency))


def test_samples_are_labelled_rows_with_their_spread(runs: list[Run]) -> None:
    sections = report.report_sections([runs[3]], "official", with_run=False)
    table = _table(sections, "te_constraint")
    assert [row[2] for row in table.rows] == ["#0", "#1", "mean", "sd", "95% CI ±"]
    rate = [column.name for column in table.columns].index("all seven")
    first, second = _num(table.rows[0][rate]), _num(table.rows[1][rate])
    assert first != second  # two seeds, two samples
    assert table.rows[2][rate] == pytest.approx((first + second) / 2)
    sd = abs(first - second) / 2 ** 0.5
    assert table.rows[3][rate] == pytest.approx(sd)
    assert table.rows[4][rate] == pytest.approx(12.706 * sd / 2 ** 0.5)
    assert table.rows[2][3] == "all"  # the splits column keeps its word
    # the radar is over both samples' plans: one outline per strategy, not one per sample
    radar = _charts(sections, Radar)[0]
    assert [name for name, _ in radar.series] == ["direct"]


def _both(runs: list[Run]) -> Run:
    """One run holding both splits (`all` and `progressive`), as a run of the `full` split does."""
    groups = [Group("both", g.model, g.split, g.rollouts) for n in (0, 1) for g in runs[n].groups]
    return Run("both", runs[0].tasks + runs[1].tasks, groups, options=runs[0].options)


def test_paper_tiers_with_every_dimension_and_table4(runs: list[Run]) -> None:
    sections = report.report_sections([_both(runs)], "official", with_run=False)
    tiers = _table(sections, "te_tiers")
    oracle = [row for row in tiers.rows if row[0] == "oracle"]
    # by uid, as the official analysis: the world's T0001-T0009 are all in T0001-T0200, so Easy with G01-1
    assert [(row[2], row[3]) for row in oracle] == [("Easy", 10), ("Medium", 1), ("Hard", 1), ("Overall", 12)]
    assert [column.name for column in tiers.columns][-6:] == list(report.DIMENSIONS)
    table4 = [table for section in sections for table in section.tables if table.name.startswith("te_table4_")]
    assert len(table4) == 2 and [row[0] for row in table4[0].rows][:len(METRICS)] == [
        m.acronym + (" %" if paper._is_rate(m) else "") for m in METRICS]
    assert len(table4[0].rows) == len(METRICS) + 6
    assert [c.name for c in table4[0].columns][3:] == ["Easy", "Medium", "Hard", "Overall"]
    radars = [chart.title for chart in _charts(sections, Radar)]
    assert [title for title in radars if "tier" in title] == [
        f"Six dimensions, {tier} tier (space not measured)" for tier in ("Easy", "Medium", "Hard")]
    costs = _table(sections, "te_cost_tiers")
    shares = [row[4:10] for row in costs.rows]
    assert all(sum(_num(share) for share in row) == pytest.approx(1.0) for row in shares)


def test_the_tier_of_every_staged_query_is_its_tag_or_step_but_for_one(traveleval_data: Path) -> None:
    """The official analysis's uid ranges agree with the tags (easy + G1, ...) on every staged query but T1002, a hard
    query outside T0601-T1000, which that analysis leaves out of every tier."""
    tasks = dataset.load_tasks(traveleval_data, "full")
    assert len(tasks) == 1150
    differ = []
    for task in tasks:
        item = aggregate.Scored(View(task, DELIVERED, None, None), False, None)
        wanted = paper.TIERS[task.input["step"] - 1] if task.input.get("step") else task.input["tag"].capitalize()
        if paper.tier(item) != wanted:
            differ.append((task.id, paper.tier(item)))
    assert differ == [("T1002", None)]


def test_progressive_steps_and_table3(runs: list[Run]) -> None:
    sections = report.report_sections(runs, "official", with_run=True)
    steps = _table(sections, "te_progressive")
    oracle = [row for row in steps.rows if row[:2] == ("progressive", "oracle")]
    assert [row[3] for row in oracle] == ["G1", "G2", "G3"]
    delta = [column.name for column in steps.columns].index("Δ all seven")
    assert oracle[0][delta] is None and oracle[1][delta] == 0.0  # the oracle keeps every constraint at each step
    noisy = [row for row in steps.rows if row[:2] == ("progressive", "noisy")]
    rate = [column.name for column in steps.columns].index("all seven")
    # the noisy model's G1 has no plan (counted, not averaged): no rate, so no delta after it
    assert noisy[0][5:8] == (1, 0, None) and noisy[1][delta] is None  # (rows carry "#0": the report has samples)
    assert noisy[2][delta] == pytest.approx(_num(noisy[2][rate]) - _num(noisy[1][rate]))
    table3 = _table(sections, "te_table3")
    names = [column.name for column in table3.columns]
    row = next(row for row in table3.rows if row[:2] == ("progressive", "oracle"))
    g1, g2, g3 = (_num(row[names.index(f"OTU G{s}")]) for s in (1, 2, 3))
    assert g2 != g3  # so that a change against G1 would differ from the paper's, against the step before
    # the paper's changes are consecutive: G2 against G1, G3 against G2 (its FAR 0.020 -> 0.179 -> 0.104: -41.7 %)
    assert row[names.index("OTU Δ% G2")] == pytest.approx((g2 - g1) / g1)
    assert row[names.index("OTU Δ% G3")] == pytest.approx((g3 - g2) / g2)
    assert names[4:7] == ["FAR G1", "FAR G2", "FAR G3"]
    noisy_row = next(row for row in table3.rows if row[:2] == ("progressive", "noisy"))
    # G1 has no plan: no change at G2; G3 against G2, both measured
    assert noisy_row[names.index("OTU G1")] is None and noisy_row[names.index("OTU Δ% G2")] is None
    assert noisy_row[names.index("OTU Δ% G3")] == pytest.approx(
        (_num(noisy_row[names.index("OTU G3")]) - _num(noisy_row[names.index("OTU G2")]))
        / _num(noisy_row[names.index("OTU G2")]))


def test_budget_figure_and_cost_composition(runs: list[Run]) -> None:
    sections = report.report_sections(runs[:1], "official", with_run=False)
    fig3 = _table(sections, "te_fig3")
    compliance = _table(sections, "te_constraint")
    assert [row[1] for row in fig3.rows] == _column(compliance, "BCS budget")
    chart = _charts(sections, GroupedRates)[0]
    assert list(chart.labels) == ["oracle", "noisy"] and [name for name, _ in chart.series] == ["direct"]
    costs = _table(sections, "te_costs")
    oracle_views = runs[0].groups[0].rollouts
    totals = [sum(v.evaluation.details["metrics"]["economy"]["cost_distribution"].values())  # type: ignore[union-attr]
              for v in oracle_views]
    assert _column(costs, "total")[0] == pytest.approx(fmean(totals))
    shares = [_num(cell) for cell in costs.rows[0][-6:]]
    assert len(shares) == 6 and sum(shares) == pytest.approx(1.0)
    stacked = next(c for c in _charts(sections, StackedShares) if c.name == "te_costs")
    assert stacked.axis.startswith("% of the recomputed cost") and sum(stacked.rows[0][1].values()) == pytest.approx(
        fmean(totals), abs=6)


def test_correlations_between_metrics(runs: list[Run]) -> None:
    sections = report.report_sections(runs[:2], "official", with_run=True)
    table = _table(sections, "te_correlations")
    labels = [row[0] for row in table.rows]
    assert labels == [column.name for column in table.columns][1:] and "RP" not in labels  # never measured
    for i, row in enumerate(table.rows):
        assert row[1 + i] == pytest.approx(1.0)
        assert all(row[1 + j] == table.rows[j][1 + i] for j in range(len(labels)))
    heatmap = _charts(sections, Heatmap)[0]
    assert list(heatmap.labels) == labels
    plot = draw(heatmap)
    assert plot is not None and plot.png.startswith(b"\x89PNG")


def test_unsatisfiable_queries_of_the_staged_data(traveleval_data: Path, traveleval_sandbox: Sandbox) -> None:
    """The counts issue #29 gives: 0 easy, 36 medium, 78 hard, 28 progressive."""
    counts: dict[str, int] = {}
    for task in dataset.load_tasks(traveleval_data, "full"):
        if unsatisfiable(traveleval_sandbox, task.input):
            key = "progressive" if task.input.get("step") else str(task.input["tag"])
            counts[key] = counts.get(key, 0) + 1
    assert counts == {"medium": 36, "hard": 78, "progressive": 28}


def test_notes_name_the_evaluator_distances_and_protocol(runs: list[Run]) -> None:
    notes = report.report_sections(runs, "official", with_run=True)[0].notes
    assert "Evaluator: official." in notes
    assert any(note.startswith("Distances for the space and transfer metrics: offline (") for note in notes)
    assert report.PROTOCOL_NOTE in notes


def test_rollout_categories_facts_and_compare_rates(runs: list[Run]) -> None:
    run = runs[0]
    oracle, noisy = run.groups
    assert {report.rollout_category(view) for view in oracle.rollouts} == {"all constraints met"}
    assert report.rollout_category(noisy.rollouts[0]) == "parse_failure"
    facts = dict(report.rollout_facts(oracle.rollouts[0]))
    assert facts["FAR fictitious (accuracy.fictitious_attraction_rate)"] == "0"
    assert facts["SSR route penalty (space.RP)"] == aggregate.NOT_MEASURED
    assert report.rollout_facts(noisy.rollouts[0]) == []
    rates = report.group_rates(run, [oracle, None])
    assert rates[1] is None and rates[0] is not None and rates[0]["all seven"] == 1.0
    assert len(rates[0]) == 8


def test_a_report_without_evaluations_says_so(runs: list[Run]) -> None:
    bare = Run("bare", runs[0].tasks, [Group("bare", "oracle", "all", [
        View(view.task, view.status, view.plan, None) for view in runs[0].groups[0].rollouts])], evaluated=False)
    sections = report.report_sections([bare], "official", with_run=False)
    assert any("No `official` evaluations are stored" in note for note in sections[0].notes)
    assert _table(sections, "te_constraint").rows[0][3:5] == (9, 0)


def test_the_sampling_used_is_said(runs: list[Run]) -> None:
    official = Run("paper", runs[0].tasks, runs[0].groups, options={**runs[0].options, "sampling": "official"},
                   sampling={"oracle": {"max_tokens": 16000}, "noisy": {}})
    notes = report.report_sections([official], "official", with_run=False)[0].notes
    assert ("Sampling (paper): oracle: max_tokens = 16000 (spec), unset: the official values of the model "
            "(temperature 1.3, 1.0 for Claude, none for qwen3; max_tokens 8192); noisy: unset: the official values"
            ) in " ".join(notes)
    older = Run("older", runs[0].tasks, runs[0].groups, options=runs[0].options, sampling={"oracle": {}})
    assert "Sampling (older): oracle: unset: the provider's defaults." in report.report_sections(
        [older], "official", with_run=False)[0].notes


def test_an_evaluator_error_keeps_the_dimensions_before_it_and_is_counted(runs: list[Run]) -> None:
    """A plan the evaluator failed on in its time dimension: its accuracy and compliance values are averaged (the
    official analysis's mean over its rows), its time and later ones are not, and the notes count the error."""
    whole = runs[0].groups[0]
    broken = whole.rollouts[0]
    assert broken.evaluation is not None
    details = {**broken.evaluation.details, "error": "time: AttributeError: 'NoneType' object has no attribute 'x'",
               "metrics": {key: broken.evaluation.details["metrics"][key] for key in ("accuracy", "constraint")}}
    details["metrics"]["accuracy"] = {**details["metrics"]["accuracy"], "people_deviation": 50.0}
    failed = View(broken.task, DELIVERED, broken.plan, Evaluation(broken.evaluation.verdicts, details))
    group = Group("all", "oracle", "all", [failed, *whole.rollouts[1:]])
    notes = report.report_sections([Run("all", runs[0].tasks, [group])], "official", with_run=False)[0].notes
    assert f"Evaluator errors: 1 of {len(group.rollouts)} scored plans (in time on 1)." in " ".join(notes)
    items = [aggregate.scored(view) for view in group.rollouts]
    pd, str_ = (next(m for m in METRICS if m.key == key) for key in ("people_deviation", "average_tour_ratio"))
    others = [aggregate.value(item, pd) for item in items[1:]]
    assert aggregate.metric_mean(items, pd) == pytest.approx(fmean([50.0, *others]))  # the kept accuracy counts
    assert aggregate.value(items[0], str_) is None and aggregate.all_seven(items[0]) == 1.0
    assert aggregate.metric_mean(items, str_) == pytest.approx(fmean(aggregate.value(i, str_) for i in items[1:]))


def test_no_queue_does_not_say_the_queue_is_deducted(runs: list[Run]) -> None:
    for mode, says in (("official", "minus the official queuing estimate"), ("no-queue", "switches the queuing")):
        sections = report.report_sections(runs[:1], mode, with_run=False)
        assert says in str(_table(sections, "te_time").note)
    assert "minus" not in str(_table(report.report_sections(runs[:1], "no-queue", with_run=False), "te_time").note)


def test_table2_puts_the_papers_rule_based_approaches_beside_every_agent(runs: list[Run]) -> None:
    sections = report.report_sections(runs[:1], "official", with_run=False)
    table = _table(sections, "te_table2")
    assert [column.name for column in table.columns][3:] == ["BCS", "TTCS", "STR", "DTU", "OTU", "EDI", "ADS", "AQE",
                                                             "Profit"]
    approach_a, approach_b, oracle, noisy = table.rows
    assert approach_a[:2] == ("paper (Table 2)", "Approach A = rule-based") and approach_a[3] == 0.6273
    assert approach_b[1] == "Approach B = rule-based-strict" and approach_b[-1] == 5.502
    assert approach_b[4] == 0.4487  # TTCS 44.87 %, a fraction as every rate of the report
    assert [oracle[:3], noisy[:3]] == [("oracle", "direct", 9), ("noisy", "direct", 8)]
    # each agent's value is the report's own mean of the metric (the compliance table's BCS, the time table's STR)
    assert [oracle[3], noisy[3]] == _column(_table(sections, "te_constraint"), "BCS budget")
    assert [oracle[5], noisy[5]] == _column(_table(sections, "te_time"), "STR tour ratio")
    sampled = _table(report.report_sections([runs[3]], "official", with_run=True), "te_table2")
    assert sampled.rows[0][:4] == ("paper", "paper (Table 2)", "Approach A = rule-based", "")
    assert [row[3] for row in sampled.rows[2:]] == ["#0", "#1", "mean", "sd", "95% CI ±"]


def test_table_a3_is_computed_from_the_queue_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.traveleval.report import queue_sensitivity
    table = queue_sensitivity.table_a3()
    paper_a3 = {"B(category)": (3.3, 11.0, 7.7, 2.3333), "K(date)": (3.3, 33.198, 29.898, 9.06),
                "K(time)": (2.1, 3.3, 1.2, 0.3636)}
    for name, low, high, spread, share, paper_share in table.rows:
        assert (low, high, spread, share) == pytest.approx(paper_a3[str(name)], abs=1e-3)
        assert paper_share == pytest.approx(share, abs=1e-3)
    # computed, not copied: another category base moves its row
    monkeypatch.setattr(queue_sensitivity, "CATEGORY_MINUTES", {"园林": 3.0, "博物馆/纪念馆": 20.0})
    assert queue_sensitivity.table_a3().rows[0][2] == pytest.approx(22.0)


def test_figure_b1_normalises_every_metric_across_a_models_strategies_on_hard(runs: list[Run]) -> None:
    both = _both(runs)
    # one model, two strategies: the oracle's plans as `direct`, the noisy model's as `cot`
    groups = [Group("both", "m", g.split, g.rollouts, strategy="direct" if g.model == "oracle" else "cot")
              for g in both.groups]
    sections = report.report_sections([Run("both", both.tasks, groups, options=both.options)], "official",
                                      with_run=False)
    radars = [chart for chart in _charts(sections, Radar) if chart.name.startswith("te_fig_b1_")]
    assert len(radars) == 1 and "Hard tier" in radars[0].title
    chart = radars[0]
    assert [name for name, _ in chart.series] == ["direct", "cot"]
    assert "SSR" not in chart.labels and "FAR" in chart.labels  # never measured here: no spoke
    for n, _ in enumerate(chart.labels):
        values = [series[n] for _, series in chart.series if series[n] is not None]
        assert max(values) == 1.0 and all(0.0 <= v <= 1.0 for v in values)
    from benchmarks.traveleval.report.strategy_radar import normalised
    far, aqe = (next(m for m in METRICS if m.key == key) for key in ("fictitious_attraction_rate", "aqe"))
    kept, rows = normalised([[0.0, 0.5], [0.2, 0.9], [0.1, 0.7]], [far, aqe])
    assert kept == [0, 1] and rows == [[1.0, 0.0], [0.0, 1.0], [0.5, pytest.approx(0.5)]]  # lower FAR is better
    assert draw(chart) is not None
    # one strategy per model: nothing to compare, no radar
    alone = report.report_sections([_both(runs)], "official", with_run=False)
    assert not [chart for chart in _charts(alone, Radar) if chart.name.startswith("te_fig_b1_")]


def test_table_b3b_gives_the_official_source_beside_geodesic(runs: list[Run], tmp_path: Path) -> None:
    import json

    from benchmarks.traveleval.evaluation.city import city_facts
    from benchmarks.traveleval.evaluation.distance import cache_key, haversine_km
    from benchmarks.traveleval.evaluation.extract import daily_stops, stop_names
    from benchmarks.traveleval.paths import AMAP_CACHE_FILES, amap_cache_dir
    from benchmarks.traveleval.report.distance_sources import table_b3b
    folder = Path(runs[0].options["data_dir"])
    found = aggregate.agents(runs[0].groups[:1])
    with Sandbox.open(ensure_index(folder)) as sandbox:
        without = table_b3b(found, sandbox, tmp_path, with_run=False)
        # an official cache answering every leg of the oracle's plans with 1.5 x the great-circle km
        answers = {}
        for view in runs[0].groups[0].rollouts:
            itinerary = view.plan["itinerary"]
            facts = city_facts(sandbox, itinerary["summary"]["destination"])
            for names in stop_names(daily_stops(itinerary)).values():
                places = facts.locate(names)
                order = [name for name in names if name in places]
                for here, there in zip(order, order[1:], strict=False):
                    km = 1.5 * haversine_km(places[here], places[there])
                    answers[cache_key("driving", places[here], places[there])] = km
        cache = amap_cache_dir(tmp_path)
        cache.mkdir(parents=True)
        (cache / AMAP_CACHE_FILES[0]).write_text(json.dumps(answers), encoding="utf-8")
        measured = table_b3b(found, sandbox, tmp_path, with_run=False)
    names = [column.name for column in measured.columns]
    assert [row[1] for row in measured.rows[:2]] == ["Approach A = rule-based", "Approach B = rule-based-strict"]
    assert measured.rows[0][names.index("geodesic / source - 1")] == pytest.approx(9.0460 / 13.3085 - 1)
    bare, row = without.rows[2], measured.rows[2]
    legs = _num(row[names.index("legs")])
    assert row[:3] == ("oracle", "direct", 9) and legs > 0
    assert bare[names.index("legs with a source km")] == 0 and bare[names.index("source km")] is None  # no call made
    assert row[names.index("legs with a source km")] == legs
    assert row[names.index("geodesic / source - 1")] == pytest.approx(1 / 1.5 - 1)
    assert row[names.index("source km")] == pytest.approx(1.5 * _num(row[names.index("geodesic km, same legs")]))
    assert bare[names.index("geodesic km, all legs")] == row[names.index("geodesic km, all legs")]


def test_a_metric_measured_on_some_plans_says_on_how_many(runs: list[Run]) -> None:
    """CSM measured only on a plan with at most one attraction (no distance needed) must not read as a mean over all
    the plans: the tables say on how many plans it rests."""
    whole = runs[0].groups[0]
    first = whole.rollouts[0]
    assert first.evaluation is not None and "space.CSM" in first.evaluation.details["not_measured"]
    details = {**first.evaluation.details, "not_measured": {
        key: why for key, why in first.evaluation.details["not_measured"].items() if key != "space.CSM"}}
    details["metrics"] = {**details["metrics"], "space": {"RP": 0.0, "CSM": {"P90": 0.0, "P95": 0.0}}}
    group = Group("all", "oracle", "all", [View(first.task, DELIVERED, first.plan, Evaluation(
        first.evaluation.verdicts, details)), *whole.rollouts[1:]])
    sections = report.report_sections([Run("all", runs[0].tasks, [group])], "official", with_run=False)
    space = _table(sections, "te_space")
    assert _column(space, "CSM P90")[0] == 0.0
    assert "CSM P90 of oracle / direct rests on 1 of 9 plans" in str(space.note)
    assert "CSM P95 of oracle / direct rests on 1 of 9 plans" in str(_table(sections, "te_table4_1").note)
    assert "rests on" not in str(_table(report.report_sections(runs[:1], "official", with_run=False),
                                        "te_space").note)


def test_a_scored_plan_keeps_the_numbers_of_its_metrics_not_its_evaluation(runs: list[Run]) -> None:
    """The report holds a `Scored` per rollout for all its tables: numbers only (a report of a hundred thousand plans
    holds no decoded evaluation), each as the official metrics hold it."""
    views = [view for run in runs for group in run.groups for view in group.rollouts]
    for view in views:
        item = aggregate.scored(view)
        if item.metrics is None:
            continue
        assert all(isinstance(found, int | float | type(None)) for found in item.metrics.values)
        metrics = view.evaluation.details["metrics"]  # type: ignore[union-attr]
        for metric in METRICS:
            found: Any = metrics[metric.dimension]
            for part in metric.key.split("."):
                found = found.get(part) if isinstance(found, Mapping) else None
            measured = aggregate.value(item, metric)
            assert measured == aggregate.NOT_MEASURED or measured == aggregate.number(found)


def test_the_compact_metrics_read_as_the_nested_ones() -> None:
    """True, a string, a list and a missing dimension read as they did from the dicts (`value`: a number or None;
    `all_seven`: `== 1`)."""
    constraint = dict.fromkeys(report.CONSTRAINT_KEYS, 1) | {"budget_satisfaction": True}
    metrics = {"constraint": constraint, "time": {"average_tour_ratio": "0.5", "daily_time_utilization": [0.5]},
               "space": {"RP": 2, "CSM": {"P90": 1.5}}}
    item = aggregate.Scored(View(None, DELIVERED, None, None), True, aggregate.PlanMetrics.of(metrics))
    read = {f"{metric.dimension}.{metric.key}": aggregate.value(item, metric) for metric in METRICS}
    assert read["constraint.budget_satisfaction"] is None and read["constraint.time_compliance"] == 1.0
    assert read["time.average_tour_ratio"] is None and read["time.daily_time_utilization"] is None
    assert read["space.RP"] == 2.0 and read["space.CSM.P90"] == 1.5 and read["space.CSM.P95"] is None
    assert read["utility.aqe"] is None
    assert aggregate.all_seven(item) == 1.0  # True == 1, as the official check counts it
    without = aggregate.Scored(item.view, True, aggregate.PlanMetrics.of({"time": {}}))
    assert aggregate.all_seven(without) is None  # the evaluator failed before the constraints
