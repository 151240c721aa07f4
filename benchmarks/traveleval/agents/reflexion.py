"""The reflection step of `reflexion-tools`: when an attempt counts as failed, and the call that reflects on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.base import DELIVERED, RolloutResult
from benchmarks.traveleval import prompts
from providers.interface import ChatModel, ChatRequest, Message


def plan_problems(plan: Mapping[str, Any], query: Mapping[str, Any]) -> list[str]:
    """What a delivered plan gets wrong that the query states outright: days, travellers, budget.

    The plan has passed `plan.parse_plan`, so the fields exist with their schema types. These are the checks an
    agent can make from its own query (no evaluator, no hidden data).
    """
    summary = plan["itinerary"]["summary"]
    days, people, budget = query["days"], query["people_number"], query["budget"]
    problems = []
    if summary["total_days"] != days or len(plan["itinerary"]["daily_plans"]) != days:
        problems.append(f"the plan has total_days {summary['total_days']} and "
                        f"{len(plan['itinerary']['daily_plans'])} daily plans; the trip lasts {days} days")
    if summary["total_travelers"] != people:
        problems.append(f"the plan is for {summary['total_travelers']} travellers; the group has {people}")
    if summary["calculated_total_cost"] > budget:
        problems.append(f"the plan costs {summary['calculated_total_cost']:g} RMB; the budget is {budget:g} RMB")
    return problems


def failure_of(result: RolloutResult, query: Mapping[str, Any]) -> str | None:
    """Why an attempt failed, in words for the reflection prompt; None when it delivered a plausible plan."""
    if result.status != DELIVERED:
        return f"{result.status.replace('_', ' ')}: {result.error}"
    problems = plan_problems(result.plan, query)
    return "; ".join(problems) or None


async def reflect(model: ChatModel, query: Mapping[str, Any], scratchpad: str, failure: str) -> str:
    """The model's reflection on a failed attempt (one call)."""
    request = ChatRequest(model="", messages=(
        Message("system", prompts.PLANNER_ROLE), Message("user", prompts.reflect_prompt(query, scratchpad, failure))))
    return (await model.complete(request)).text.strip()
