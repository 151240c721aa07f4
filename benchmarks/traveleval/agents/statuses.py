"""How a TravelEval rollout can end besides `delivered` and the runner's generic statuses."""

from __future__ import annotations

from collections.abc import Mapping

PARSE_FAILURE = "parse_failure"
MAX_STEPS = "max_steps"
INVALID_ACTION_DEAD_LOOP = "invalid_action_dead_loop"
ARGUMENT_ERROR_DEAD_LOOP = "argument_error_dead_loop"
SAME_ACTION_DEAD_LOOP = "same_action_dead_loop"
NO_PLAN = "no_plan"

STATUSES: Mapping[str, str] = {
    PARSE_FAILURE: "the final answer is not a valid FinalTravelPlan (JSON or schema; the reason is recorded)",
    MAX_STEPS: "the ReAct agent reached its step limit (max_steps) without finishing",
    INVALID_ACTION_DEAD_LOOP: "max_retries invalid actions (no Action line, bad JSON, an unknown tool) since the last "
                              "successful tool call",
    ARGUMENT_ERROR_DEAD_LOOP: "max_retries tool calls with bad arguments since the last successful one",
    SAME_ACTION_DEAD_LOOP: "the same tool call same_action_limit times in a row",
    NO_PLAN: "a rule-based planner found no leg, station or hotel for the trip in the sandbox (the reason is recorded)",
}
"""TravelEval's terminal statuses (names shared with TravelPlanner's where they mean the same)."""
