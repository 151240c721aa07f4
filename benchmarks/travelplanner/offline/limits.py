"""Why `offline:oracle` cannot pass a query: what the sandbox lacks, found by running the oracle's own searches on it.

The oracle plans from what its searches return (`oracle._agenda`, `plan_search.build_plan`). Where the sandbox has no
flight, taxi or road for a leg (the staged flights table is a sample of the official one), no acceptable
accommodation, no restaurant of a required cuisine, or no plan within the budget, its plan fails a constraint that
no plan built from that sandbox could pass. Reports say so (issue 31), so a user does not suspect the evaluator.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.base import Task
from benchmarks.travelplanner.agents.strategies import reference_text
from benchmarks.travelplanner.offline.notebook_reader import Collected, collect, notebook_contents
from benchmarks.travelplanner.offline.oracle import MAX_STEPS, keeps, plan_from_collected, simulate_agenda
from benchmarks.travelplanner.query_facts import QueryFacts, read_query
from benchmarks.travelplanner.tools import execute_action, parse_action
from sandbox_index import Sandbox

TOOL_AGENT = "two-stage"
"""The strategy that searches the sandbox itself; the others plan from the reference information in their prompt."""


def why_no_passing_plan(sandbox: Sandbox, task: Task, strategy: str) -> str | None:
    """What keeps the oracle's plan for `task` under `strategy` from passing, in words; None when it should pass.

    The two-stage agent's oracle plans from what its own searches of `sandbox` return; a sole-planning strategy's
    from the reference information its prompt shows (`reference_text`: the dataset's, or rebuilt from the sandbox).
    """
    query = str(task.input.get("query", ""))
    facts = read_query(query)
    if strategy == TOOL_AGENT:
        found, steps = _searched(sandbox, facts)
    else:
        found, steps = collect(notebook_contents(reference_text(task, sandbox))), 0
    result = plan_from_collected(facts, found)
    reasons = [f"the sandbox has no flight, taxi or self-driving route {day['current_city']} (day {day['days']})"
               for day in result.plan[0::2] if day["transportation"] == "-" and day["current_city"].startswith("from")]
    reasons += [f"the sandbox has no accommodation in {city} that the query accepts" for city in dict.fromkeys(
        day["current_city"].rpartition(" to ")[2] for day in result.plan[:-1] if day["accommodation"] == "-")]
    reasons += [f"the sandbox has {problem} in the cities visited" for problem in result.problems
                if problem.startswith("no ")]
    charged = task.input.get("people_number")
    if isinstance(charged, int) and charged != facts.people and result.complete:
        reasons.append(f"the request does not say {charged} people travel, which the evaluator charges for (the "
                       f"oracle, reading the request, plans for {facts.people})")
    if result.cost > (facts.budget or float("inf")):
        reasons.append(f"the oracle's plan costs ${result.cost:,.0f}, over the budget of ${facts.budget:,}")
    if not reasons and not result.complete:
        reasons.append("the sandbox has no option for an attraction or a meal of the plan")
    if steps > MAX_STEPS:
        reasons.append(f"the searches the plan needs take {steps} steps, beyond the agent's {MAX_STEPS}")
    return "; ".join(reasons) or None


def _searched(sandbox: Sandbox, facts: QueryFacts) -> tuple[Collected, int]:
    """What the oracle's searches keep (`oracle.simulate_agenda` against the sandbox) and the steps they take."""
    request = facts.request()
    kept: list[str] = []

    def judge(action: str, rule: str) -> object:
        observation = execute_action(sandbox, *parse_action(action)).observation
        if rule == "listing":
            return observation
        if keeps(rule, observation, request):
            kept.append(observation)
            return True
        return False

    _, steps = simulate_agenda(facts, judge)
    return collect(kept), steps


def explain(tasks: Sequence[Task], strategies: Sequence[str], sandbox: Sandbox) -> list[str | None]:
    """`why_no_passing_plan` for each (task, strategy) (the `Responder.explain` of TravelPlanner's offline part).

    The tasks are of one split (one run's), so an id names one task: each pair is explained once, however many of
    its samples failed."""
    whys: dict[tuple[str, str], str | None] = {}
    for task, strategy in zip(tasks, strategies, strict=True):
        if (task.id, strategy) not in whys:
            whys[task.id, strategy] = why_no_passing_plan(sandbox, task, strategy)
    return [whys[task.id, strategy] for task, strategy in zip(tasks, strategies, strict=True)]
