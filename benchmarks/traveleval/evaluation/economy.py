"""Economy (`economy` in the results), as the official `core/metrics/economy.py` computes it.

- `cost_distribution`: the recomputed cost by category (`extract.actual_costs`), in the official order.
- `budget_efficiency`: experience value (`utility.experience_value`) / recomputed total cost x 1000; a plan whose
  recomputed cost is 0 fails (division by zero; the accuracy dimension has already failed it by then).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.traveleval.evaluation.extract import Stop, actual_costs, attraction_names, total_cost
from benchmarks.traveleval.evaluation.utility import experience_value
from benchmarks.traveleval.sandbox.sandbox import Attraction


def economy_metrics(itinerary: Any, days: Mapping[Any, list[Stop]], query: Mapping[str, Any],
                    attractions: Mapping[str, Attraction], *, fixed: bool = False) -> dict[str, Any]:
    """The `economy` dimension; `days`: `extract.daily_stops(itinerary)`."""
    experience = experience_value(attraction_names(days), attractions, query, fixed=fixed)
    return {"cost_distribution": actual_costs(itinerary),
            "budget_efficiency": experience / total_cost(itinerary) * 1000}
