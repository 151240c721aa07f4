"""The paper's Table A3: the queue model's one-factor-at-a-time sensitivity, computed from the parameters the
evaluator uses (the paper's Table A5, `evaluation.time`), not copied.

The estimated wait is B(category) x K(date) x K(time slot) minutes. Each factor in turn runs over all its values
while the other two stay at the baseline: the lowest category base (3.0 min), a weekday (1.00) and the afternoon
slot (1.10), a wait of 3.3 min, which is the baseline the paper's ranges imply (its minimum for B and its maximum for
K(time) are both 3.3).
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.reporting import Column, Kind, Table
from benchmarks.traveleval.evaluation.time import CATEGORY_MINUTES, DATE_FACTORS, SLOT_FACTORS

BASELINE = (min(CATEGORY_MINUTES.values()), DATE_FACTORS["Weekday"],
            next(factor for label, _, _, factor in SLOT_FACTORS if label == "12:00-16:00"))
"""(B, K(date), K(time)) of the baseline visit."""
PAPER_RANGE_SHARE = {"B(category)": 2.3333, "K(date)": 9.06, "K(time)": 0.3636}
"""The paper's Table A3 range / baseline, for the comparison column."""


def factors() -> list[tuple[str, Sequence[float]]]:
    """Each factor's name and the values the evaluator gives it."""
    return [("B(category)", list(CATEGORY_MINUTES.values())), ("K(date)", list(DATE_FACTORS.values())),
            ("K(time)", [factor for _, _, _, factor in SLOT_FACTORS])]


def sensitivity() -> list[tuple[str, float, float]]:
    """(factor, the least wait, the greatest wait) in minutes, the other two factors at the baseline."""
    found = []
    for n, (name, values) in enumerate(factors()):
        waits = []
        for option in values:
            parts = list(BASELINE)
            parts[n] = option
            waits.append(parts[0] * parts[1] * parts[2])
        found.append((name, min(waits), max(waits)))
    return found


def table_a3() -> Table:
    baseline = BASELINE[0] * BASELINE[1] * BASELINE[2]
    table = Table("te_table_a3", "The queue model's one-factor sensitivity (Table A3; minutes of estimated wait)",
                  (Column("parameter"), Column("minimum", Kind.FLOAT), Column("maximum", Kind.FLOAT),
                   Column("range", Kind.FLOAT), Column("range / baseline", Kind.PCT),
                   Column("paper: range / baseline", Kind.PCT)))
    for name, low, high in sensitivity():
        table.add(name, low, high, high - low, (high - low) / baseline, PAPER_RANGE_SHARE[name])
    b, k_date, k_time = BASELINE
    table.note = (f"Computed from the evaluator's queue parameters (the paper's Table A5): wait = B x K(date) x "
                  f"K(time) minutes; each factor over all its values, the others at the baseline B = {b:g} min "
                  f"(the lowest category), K(date) = {k_date:g} (a weekday), K(time) = {k_time:g} (12:00-16:00): "
                  f"{baseline:.1f} min. The last column is the paper's figure.")
    return table
