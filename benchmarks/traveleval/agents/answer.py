"""A strategy's final answer turned into the rollout's result: the plan when it parses, `parse_failure` when not."""

from __future__ import annotations

from typing import Any

from benchmarks.base import DELIVERED, RolloutResult
from benchmarks.traveleval.agents.statuses import PARSE_FAILURE
from benchmarks.traveleval.plan import Parsing, PlanError, read_plan

CUT_OFF = frozenset({"length", "max_tokens"})
"""Finish reasons of a reply stopped by its token limit (OpenAI's and Anthropic's words)."""


def conclude(answer: str, steps: list[dict[str, Any]], query_uid: str, finish_reason: str | None = None,
             parsing: Parsing = "official") -> RolloutResult:
    """The result of a finished attempt: `delivered` with the validated plan (as JSON, the schema's fields only, as
    the official pipeline saves `plan.dict()`), or `parse_failure` with the reason.

    Args:
        answer: The model's final answer (untrusted text).
        steps: The trajectory so far.
        query_uid: Filled into a plan that leaves `query_uid` out (`lenient` parsing only).
        finish_reason: Why the reply ended; a reply cut off at its token limit says so in a parse failure's reason.
        parsing: How the plan is read out of the answer (`plan.read_plan`).
    """
    if not answer.strip():
        return RolloutResult(PARSE_FAILURE, answer=answer, steps=steps, error="empty answer")
    try:
        plan = read_plan(answer, parsing, query_uid=query_uid)
    except PlanError as exc:
        cut = " (the reply was cut off at max_tokens)" if finish_reason in CUT_OFF else ""
        return RolloutResult(PARSE_FAILURE, answer=answer, steps=steps, error=exc.reason + cut)
    return RolloutResult(DELIVERED, answer=answer, plan=plan.model_dump(mode="json"), steps=steps)
