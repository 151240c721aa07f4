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
from benchmarks.reporting import Radar, Section, StackedShares, Table
from benchmarks.traveleval import dataset, report
from benchmarks.traveleval.evaluation import evaluate_plan
from benchmarks.traveleval.evaluation.distance import open_distances
from benchmarks.traveleval.offline.mistakes import NOISY, noisy_plan
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.offline.world import generate_world
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
        return f"{self.model} / {self.strategy}"

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


def _view(task: Task, plan: Mapping[str, Any] | None, sandbox: Sandbox, folder: Path) -> View:
    if plan is None:
        details: dict[str, Any] = {"query_uid": task.id, "error": "no plan: parse_failure"}
        return View(task, "parse_failure", None, Evaluation(tuple(Verdict("constraint", key, False)
                                                                  for key in report.CONSTRAINTS), details))
    details = evaluate_plan(plan, task.input, sandbox, distances=open_distances("offline", folder))
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
            made.append(Run(split, tasks, [Group(split, "oracle", split, oracle), Group(split, "noisy", split, noisy)]))
    return made


def _table(sections: list[Section], name: str) -> Table:
    return next(table for section in sections for table in section.tables if table.name == name)


def _num(cell: object) -> float:
    assert isinstance(cell, int | float)
    return float(cell)


def _column(table: Table, header: str) -> list[Any]:
    index = [column.name for column in table.columns].index(header)
    return [row[index] for row in table.rows]


def test_constraint_rates_per_model(runs: list[Run]) -> None:
    sections = report.report_sections(runs[:1], "official", with_run=False)
    table = _table(sections, "te_constraint")
    oracle, noisy = table.rows
    assert oracle[:4] == ("oracle", "direct", "all", 9) and all(rate == 1.0 for rate in oracle[4:])
    assert noisy[3] == 9 and _column(table, "all seven")[1] < 1.0
    # the rollout without a plan fails every constraint: no rate of the noisy model is above 8/9
    assert all(_num(rate) <= 8 / 9 for rate in noisy[4:])
    accuracy = _table(sections, "te_accuracy")
    assert accuracy.rows[0][2] == 9 and accuracy.rows[1][2] == 8  # plans scored: the missing one is left out
    assert _column(accuracy, "fictitious")[0] == 0.0


def test_dimension_scores_and_one_radar_per_model(runs: list[Run]) -> None:
    sections = report.report_sections(runs, "official", with_run=True)
    scores = _table(sections, "te_dimensions")
    assert [row[:3] for row in scores.rows] == [("all", "oracle", "direct"), ("all", "noisy", "direct"),
                                                ("progressive", "oracle", "direct"),
                                                ("progressive", "noisy", "direct")]
    assert all(value is None or 0 <= _num(value) <= 1 for row in scores.rows for value in row[3:])
    assert scores.rows[0][3 + report.DIMENSIONS.index("constraint")] == 1.0
    radars = [chart for section in sections for chart in section.charts if isinstance(chart, Radar)]
    assert [chart.title for chart in radars] == ["Six dimensions: all: oracle", "Six dimensions: all: noisy",
                                                 "Six dimensions: progressive: oracle",
                                                 "Six dimensions: progressive: noisy"]
    assert list(radars[0].labels) == list(report.DIMENSIONS)
    plot = draw(radars[0])
    assert plot is not None and plot.png.startswith(b"\x89PNG")


def test_tiers_and_progressive_steps_with_deltas(runs: list[Run]) -> None:
    sections = report.report_sections(runs, "official", with_run=False)
    tiers = _table(sections, "te_tiers")
    assert [(row[0], row[2], row[3]) for row in tiers.rows[:3]] == [("oracle", "easy", 3), ("oracle", "medium", 3),
                                                                   ("oracle", "hard", 3)]
    steps = _table(sections, "te_progressive")
    oracle = [row for row in steps.rows if row[0] == "oracle"]
    assert [row[2] for row in oracle] == ["G1", "G2", "G3"]
    delta = [column.name for column in steps.columns].index("Δ all seven")
    assert oracle[0][delta] is None and oracle[1][delta] == 0.0  # the oracle keeps every constraint at each step
    noisy = [row for row in steps.rows if row[0] == "noisy"]
    rate = [column.name for column in steps.columns].index("all seven")
    assert noisy[1][delta] == pytest.approx(_num(noisy[1][rate]) - _num(noisy[0][rate]))


def test_budget_and_cost_composition(runs: list[Run]) -> None:
    sections = report.report_sections(runs[:1], "official", with_run=False)
    budget = _table(sections, "te_budget")
    assert budget.rows[0][2:4] == (9, 1.0) and budget.rows[0][4] == 1.0
    costs = _table(sections, "te_costs")
    oracle_views = runs[0].groups[0].rollouts
    totals = [sum(v.evaluation.details["metrics"]["economy"]["cost_distribution"].values())  # type: ignore[union-attr]
              for v in oracle_views]
    assert _column(costs, "total")[0] == pytest.approx(fmean(totals))
    shares = next(chart for section in sections for chart in section.charts if isinstance(chart, StackedShares))
    assert shares.rows[0][0] == "oracle / direct" and sum(shares.rows[0][1].values()) == pytest.approx(
        fmean(totals), abs=6)


def test_notes_name_the_distance_source_and_our_prompts(runs: list[Run]) -> None:
    notes = report.report_sections(runs, "official", with_run=True)[0].notes
    assert "Evaluator: official." in notes
    assert any(note.startswith("Distances for the space and transfer metrics: offline (") for note in notes)
    assert report.PROMPTS_NOTE in notes


def test_rollout_categories_and_compare_rates(runs: list[Run]) -> None:
    run = runs[0]
    oracle, noisy = run.groups
    assert {report.rollout_category(view) for view in oracle.rollouts} == {"all constraints met"}
    assert report.rollout_category(noisy.rollouts[0]) == "parse_failure"
    rates = report.group_rates(run, [oracle, None])
    assert rates[1] is None and rates[0] is not None and rates[0]["all seven"] == 1.0
    assert list(rates[0]) == [*report.CONSTRAINT_HEADERS, "all seven"]


def test_a_report_without_evaluations_says_so(runs: list[Run]) -> None:
    bare = Run("bare", runs[0].tasks, [Group("bare", "oracle", "all", [
        View(view.task, view.status, view.plan, None) for view in runs[0].groups[0].rollouts])], evaluated=False)
    sections = report.report_sections([bare], "official", with_run=False)
    assert any("No `official` evaluations are stored" in note for note in sections[0].notes)
    assert _table(sections, "te_constraint").rows[0][3] == 0
