"""The official TravelPlanner metrics (docs/fidelity/travelplanner.md §7.5): pass rates with fixed denominators, and the
detail table.

Denominators. Every rate divides by N, the number of queries (undelivered plans count as failures), except
the two micro rates: commonsense micro divides by 8·N; hard micro divides by the number of hard constraints
the query set requests, Σ over queries of (1 budget + number of non-None local constraints). The official
driver hard-codes that sum for its splits (105 / 420 / 2290 for train / validation / test, with N = 45 /
180 / 1000); those constants are used whenever a whole official split is scored, and the general rule
(which gives 105 and 420 on the staged train and validation files) for any other query set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.travelplanner.dataset import SPLIT_SIZES, Query
from benchmarks.travelplanner.evaluation import COMMONSENSE_KEYS, HARD_KEYS, PAPER_NAMES, PlanVerdict

HARD_TOTALS = {"train": 105, "validation": 420, "test": 2290}
"""eval.py's hard-coded hard-constraint micro denominators."""

RATE_NAMES = (
    "Delivery Rate",
    "Commonsense Constraint Micro Pass Rate",
    "Commonsense Constraint Macro Pass Rate",
    "Hard Constraint Micro Pass Rate",
    "Hard Constraint Macro Pass Rate",
    "Final Pass Rate",
)
LEVELS = ("easy", "medium", "hard")
# hard key -> the local_constraint field it scores (valid_cost, the budget, applies to every query)
HARD_FIELDS = {"valid_cuisine": "cuisine", "valid_room_rule": "house_rule", "valid_transportation": "transportation",
               "valid_room_type": "room_type"}


@dataclass(frozen=True, slots=True)
class Scores:
    """The six official rates (fractions) and the per-level x per-duration table."""

    rates: dict[str, float]
    """Keyed by the official names of `RATE_NAMES`, in that order."""
    detailed: dict[str, dict[str, dict[int, dict[str, dict[str, int]]]]]
    """`{"Commonsense Constraint" | "Hard Constraint": {level: {days: {paper name: {"true", "false", "total"}}}}}`."""
    queries: int
    hard_total: int


def hard_denominator(queries: Sequence[Query]) -> int:
    """Σ over queries of (1 + requested local constraints): the general hard micro denominator."""
    return sum(1 + (q.local_constraint.requested() if q.local_constraint else 0) for q in queries)


def compute_scores(queries: Sequence[Query], verdicts: Sequence[PlanVerdict], *, split: str | None = None) -> Scores:
    """Aggregate per-plan verdicts into the official metrics.

    Args:
        queries: the scored queries, with labels.
        verdicts: one per query, same order.
        split: the official split these are, when the whole split is scored (selects eval.py's constants).
    """
    if len(queries) != len(verdicts):
        raise ValueError(f"{len(queries)} queries but {len(verdicts)} verdicts")
    n = len(queries)
    whole_split = split is not None and split in HARD_TOTALS and SPLIT_SIZES[split] == n
    hard_total = HARD_TOTALS[split] if split is not None and whole_split else hard_denominator(queries)
    commonsense_true = hard_true = commonsense_macro = hard_macro = final = delivered = 0
    for verdict in verdicts:
        if not verdict.delivered or verdict.commonsense is None:
            continue
        delivered += 1
        commonsense_true += sum(result is True for result, _ in verdict.commonsense.values())
        all_commonsense = all(result is True for result, _ in verdict.commonsense.values())
        commonsense_macro += all_commonsense
        if verdict.hard is not None:
            hard_true += sum(result is True for result, _ in verdict.hard.values())
            no_hard_failure = all(result is not False for result, _ in verdict.hard.values())
            hard_macro += no_hard_failure
            final += all_commonsense and no_hard_failure
    rates = dict(zip(RATE_NAMES, (
        _ratio(delivered, n), _ratio(commonsense_true, 8 * n), _ratio(commonsense_macro, n),
        _ratio(hard_true, hard_total), _ratio(hard_macro, n), _ratio(final, n),
    )))
    return Scores(rates, detailed_table(queries, verdicts), n, hard_total)


def detailed_table(queries: Sequence[Query], verdicts: Sequence[PlanVerdict]) -> dict[str, Any]:
    """Per (level, days, constraint) counts of True and False results, and how many queries the cell asks.

    `total` is the number of queries in the cell for the commonsense constraints and Budget, and the number
    of queries requesting it for a local hard constraint; hard constraints no query of a cell requests are
    left out of that cell (so easy cells list Budget only), as in the official totals.
    """
    cells = sorted({(q.level, q.days) for q in queries}, key=_cell_order)
    commonsense = {level: {} for level, _ in cells}  # type: dict[str, dict[int, dict[str, dict[str, int]]]]
    hard = {level: {} for level, _ in cells}  # type: dict[str, dict[int, dict[str, dict[str, int]]]]
    for level, days in cells:
        in_cell = [(q, v) for q, v in zip(queries, verdicts) if (q.level, q.days) == (level, days)]
        commonsense[level][days] = {
            PAPER_NAMES[key]: _counts(key, [v.commonsense for _, v in in_cell], len(in_cell))
            for key in COMMONSENSE_KEYS
        }
        hard[level][days] = {}
        for key in HARD_KEYS:
            field = HARD_FIELDS.get(key)
            asked = len(in_cell) if field is None else sum(
                getattr(q.local_constraint, field) is not None for q, _ in in_cell)
            if asked:
                hard[level][days][PAPER_NAMES[key]] = _counts(key, [v.hard for _, v in in_cell], asked)
    return {"Commonsense Constraint": commonsense, "Hard Constraint": hard}


def _counts(key: str, boxes: list[Any], total: int) -> dict[str, int]:
    results = [box[key][0] for box in boxes if box is not None]
    return {"true": sum(r is True for r in results), "false": sum(r is False for r in results), "total": total}


def _cell_order(cell: tuple[str, int]) -> tuple[int, str, int]:
    level, days = cell
    return (LEVELS.index(level) if level in LEVELS else len(LEVELS), level, days)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


TABLE4_ROWS = (
    ("Commonsense Constraint", ("is_valid_information_in_sandbox", "is_not_absent",
                                "is_valid_information_in_current_city", "is_reasonable_visiting_city",
                                "is_valid_restaurants", "is_valid_attractions", "is_valid_transportation",
                                "is_valid_accommodation")),
    ("Hard Constraint", ("valid_cost", "valid_room_rule", "valid_cuisine", "valid_room_type", "valid_transportation")),
)
"""Row order of the paper's Table 4: (detail-table group, official keys)."""


@dataclass(frozen=True, slots=True)
class ConstraintRates:
    """Paper Table 4 from a detail table: each constraint's pass rate by level, then by trip length."""

    columns: tuple[str, ...]
    """`Easy`, `Medium`, `Hard` (the levels present), then `3-day`, `5-day`, `7-day` (the lengths present)."""
    rows: tuple[tuple[str, str, tuple[float | None, ...]], ...]
    """(group, paper name, one rate per column: true / total, None where no query of the column asks for it)."""


def constraint_rates(detailed: dict[str, Any]) -> ConstraintRates:
    """Pass rate of each constraint by level and by trip length (the layout of the paper's Table 4)."""
    levels = list(detailed["Commonsense Constraint"])
    durations = sorted({days for cells in detailed["Commonsense Constraint"].values() for days in cells})
    rows = []
    for group, keys in TABLE4_ROWS:
        for key in keys:
            name = PAPER_NAMES[key]
            by_level = [_cells_rate(detailed[group][level].values(), name) for level in levels]
            by_days = [_cells_rate([cells[days] for cells in detailed[group].values() if days in cells], name)
                       for days in durations]
            rows.append((group, name, (*by_level, *by_days)))
    columns = (*(level.capitalize() for level in levels), *(f"{days}-day" for days in durations))
    return ConstraintRates(columns, tuple(rows))


def _cells_rate(cells: Any, name: str) -> float | None:
    counts = [cell[name] for cell in cells if name in cell]
    total = sum(count["total"] for count in counts)
    return sum(count["true"] for count in counts) / total if total else None
