"""The greedy-search baseline of the paper (Table 3 "Greedy Search"), as `agents/greedy_search.py` does it
(docs/fidelity/travelplanner.md §8).

No LLM: for each leg the cheapest of flight / self-driving / taxi, for each day the cheapest restaurant (for all
three meals) and accommodation of the day's city, one random attraction. It ignores the group size and every
local constraint. Reproduced quirks, each marked where it happens:

* the same restaurant for breakfast, lunch and dinner (fails Diverse Restaurants);
* the attraction is written without a trailing `;`, so the evaluator never checks it (docs/fidelity/travelplanner.md
§7.2 (1));
* people_number is ignored when comparing leg costs (factor 1, docs/fidelity/travelplanner.md §8 step 3);
* the return day's meals and attraction are chosen in the origin city (docs/fidelity/travelplanner.md §8 step 4).

Two deliberate differences from the script:
* the attraction is drawn from `random.Random` seeded by (seed, query text) instead of the unseeded module RNG,
  so a run is reproducible and each query's draw does not depend on the others;
* `date` is parsed as a list first. The script indexes `query['date']` directly; the Hugging Face split stores it
  as the string `"['2022-03-16', ...]"`, where `date[0]` would be `[` and no flight could ever match.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.base import DELIVERED, RolloutResult, Task
from benchmarks.travelplanner.agents.parsing import render_plan
from benchmarks.travelplanner.dataset import Query, query_from_record
from benchmarks.travelplanner.tools import distance_for_evaluation
from providers.interface import ChatModel
from sandbox_index import Frame, Sandbox

UNAVAILABLE = 1e9
"""The script's price for a mode with no data."""
NO_TRANSPORT = "No valid transportation information."


@dataclass(slots=True)
class GreedyPlan:
    """The plan (submission day dicts) and the script's failure notes (`greedy_search_plan_success`)."""

    plan: list[dict[str, Any]]
    reasons: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return not self.reasons


def route_cities(sandbox: Sandbox, query: Query) -> list[str]:
    """[org, c1, ...]: the destination city, or the first cities of the destination state in file order."""
    if query.days == 3:
        return [query.org, query.dest]
    in_state = [c for c in sandbox.state_cities().get(query.dest, ()) if c != query.org]
    return [query.org, *in_state[: {5: 2, 7: 3}.get(query.days, 0)]]


def greedy_plan(sandbox: Sandbox, query: Query, *, seed: int = 0) -> GreedyPlan:
    """The greedy baseline's plan for one query (docs/fidelity/travelplanner.md §8).

    Args:
        sandbox: the database the tools read.
        query: a query; only `org`, `dest`, `days`, `date` and `query` (the RNG key) are used.
        seed: seed of the attraction draw.
    """
    rng = random.Random(f"{seed}\x1f{query.query}")
    stops = route_cities(sandbox, query)
    stops.append(query.org)
    reasons: dict[str, None] = {}  # the script's set of failure notes, kept in insertion order
    plan: list[dict[str, Any]] = []
    city = query.org
    for d in range(query.days):
        day: dict[str, Any] = {key: "-" for key in ("current_city", "transportation", "breakfast", "lunch",
                                                    "dinner", "attraction", "accommodation")}
        day = {"day": d + 1, **day}
        if d % 2 == 0:
            # a state with too few cities leaves later legs without a destination: go home instead
            origin, destination = stops[min(d // 2, len(stops) - 1)], stops[min(d // 2 + 1, len(stops) - 1)]
            day["current_city"] = f"from {origin} to {destination}"
            date = query.date[d] if d < len(query.date) else ""
            leg = _transportation(sandbox, origin, destination, date)
            if leg is None:
                reasons[NO_TRANSPORT] = None
            else:
                day["transportation"] = leg
            city = destination  # the travel day's working city is the arrival city, even on the way home
        else:
            day["current_city"] = city
        meal = _cheapest(sandbox.restaurants(city), "Average Cost", "Name")
        if meal is None:
            reasons["No valid restaurant information."] = None
        else:
            # official quirk, docs/fidelity/travelplanner.md §8 step 5: one restaurant for every meal (the diversity
            # filter is commented out)
            day["breakfast"] = day["lunch"] = day["dinner"] = f"{meal}, {city}"
        sights = sandbox.attractions(city)
        if len(sights):
            name = rng.choice(_column(sights, "Name"))
            # official quirk, docs/fidelity/travelplanner.md §8 step 6: no trailing ";"
            day["attraction"] = f"{name}, {city}"
        else:
            reasons["No valid attraction information."] = None
        if d < query.days - 1:
            stay = _cheapest(sandbox.accommodations(city), "price", "NAME")
            if stay is None:
                reasons["No valid accommodation information."] = None
            else:
                day["accommodation"] = f"{stay}, {city}"
        plan.append(day)
    return GreedyPlan(plan, list(reasons))


def _transportation(sandbox: Sandbox, origin: str, destination: str, date: str) -> str | None:
    """The cheapest mode for one traveller; ties go to Flight, then Self-driving, then Taxi (stable sort)."""
    flights = sandbox.flights(origin, destination, date)
    prices = _column(flights, "Price")
    # official: sort_values("Price") then the first row; numpy's sort is stable on such small frames
    best_flight: int | None = min(range(len(prices)), key=prices.__getitem__, default=None)
    driving = distance_for_evaluation(sandbox, origin, destination, "driving").cost
    taxi = distance_for_evaluation(sandbox, origin, destination, "taxi").cost
    # official quirk, docs/fidelity/travelplanner.md §8 step 3: costs for one person (ceil(1/5) = ceil(1/4) = 1),
    # people_number unused
    candidates = [
        (prices[best_flight] if best_flight is not None else UNAVAILABLE, "Flight"),
        (driving if driving is not None else UNAVAILABLE, "Self-driving"),
        (taxi if taxi is not None else UNAVAILABLE, "Taxi"),
    ]
    cost, mode = min(candidates, key=lambda c: c[0])
    if cost >= UNAVAILABLE:
        return None
    if mode == "Flight":
        assert best_flight is not None  # Flight wins only when it has a price
        number = _column(flights, "Flight Number")[best_flight]
        return f"Flight Number: {number}, from {origin} to {destination}"
    return f"{mode}, from {origin} to {destination}"


def _column(frame: Frame, name: str) -> list[Any]:
    i = frame.columns.index(name)
    return [row[i] for row in frame.rows]


def _cheapest(frame: Frame, cost_column: str, name_column: str) -> str | None:
    """Name of the cheapest row, first in file order on ties."""
    costs = _column(frame, cost_column)
    best = min(range(len(costs)), key=costs.__getitem__, default=None)
    return None if best is None else _column(frame, name_column)[best]


@dataclass(frozen=True, slots=True)
class GreedyStrategy:
    """The `greedy` strategy: needs no model (any model string works, e.g. `offline:oracle`; no call is made)."""

    seed: int = 0
    name: str = "greedy"
    description: str = "the paper's greedy-search baseline, no LLM call"
    expected_calls: float = 0.0

    async def __call__(self, task: Task, model: ChatModel, tools: Any) -> RolloutResult:
        query = query_from_record(task.input, f"task {task.id}")
        result = greedy_plan(tools, query, seed=self.seed)  # ~20 indexed look-ups: well under a millisecond each
        step = {"strategy": "greedy", "success": result.success, "reasons": result.reasons}
        return RolloutResult(status=DELIVERED, answer=render_plan(result.plan), plan=result.plan, steps=[step])
