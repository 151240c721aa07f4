"""Why a rollout ended: the error taxonomy of TravelPlanner rollouts (docs/fidelity/travelplanner.md §10, paper Figure
2).

A rollout's terminal status is one of `STATUSES` (TravelPlanner's own, set by the strategies) or a generic status
of `benchmarks.base` (set by the runner: provider errors, the spend cap, ...). For two-stage runs the dead-loop
type is derived from the step log as docs/fidelity/travelplanner.md §10 says: the last step's `state` names the early
stop (which tool's failure counter, invalid actions, or the repetition rule); a run that stopped without one hit the
step or prompt-length limit. `classify` also maps each rollout to the paper's four tool-use error labels and counts the
step-level states (`Successful`, `invalidAction`, `Illegal args. ...`, null actions) for the report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks import base

MAX_STEPS = "max_steps"
ARGUMENT_ERROR_DEAD_LOOP = "argument_error_dead_loop"
INVALID_ACTION_DEAD_LOOP = "invalid_action_dead_loop"
SAME_ACTION_DEAD_LOOP = "same_action_dead_loop"
PLANNER_TOKEN_LIMIT = "planner_token_limit"
EMPTY_ANSWER = "empty_answer"
PARSE_FAILURE = "parse_failure"
COSTENQUIRY_CRASH = "costenquiry_crash"

STATUSES: Mapping[str, str] = {
    MAX_STEPS: "stopped at the step limit (30) without an answer",
    ARGUMENT_ERROR_DEAD_LOOP: "a tool failed 3 times since the last success and was called again (argument error)",
    INVALID_ACTION_DEAD_LOOP: "3 invalid actions since the last success, then another (or an AccommodationSearch)",
    SAME_ACTION_DEAD_LOOP: "the same action 3 times in a row",
    PLANNER_TOKEN_LIMIT: "the Planner prompt exceeded 12,000 tokens (`Max Token Length Exceeded.`)",
    EMPTY_ANSWER: "the planner answered with an empty text",
    PARSE_FAILURE: "the answer could not be turned into a structured plan",
    COSTENQUIRY_CRASH: "a CostEnquiry argument on which the official code aborts (non-literal, no people_number)",
}
"""TravelPlanner's terminal statuses besides the generic ones; `token_limit` (generic) also covers the agents'
own prompt-length halts (15,000 / 30,000 / 14,000 tokens)."""

# Paper Figure 2 labels (docs/fidelity/travelplanner.md §10); the prompt-length halt is part of "Max Step Limit" there.
PAPER_LABELS: Mapping[str, str] = {
    MAX_STEPS: "Max Step Limit",
    base.TOKEN_LIMIT: "Max Step Limit",
    ARGUMENT_ERROR_DEAD_LOOP: "Argument Error",
    INVALID_ACTION_DEAD_LOOP: "Invalid Action Dead Loop",
    SAME_ACTION_DEAD_LOOP: "Same Action Dead Loop",
}

_EARLY_STOP = re.compile(r"^(\w+) early stop due to \d+ max retries\.$")
_SAME_ACTION = "same action 3 times repeated"
_PLANNER_TOO_LONG = "Max Token Length of Planner Exceeded."
NULL_ACTION = "null action"
"""How a null action's empty step state is counted in `state_counts`."""


@dataclass(frozen=True, slots=True)
class RolloutError:
    """The classification of one rollout."""

    category: str
    """`delivered`, a generic status, or one of `STATUSES`."""
    tool: str | None = None
    """For an argument-error dead loop: the failing tool's counter (`flights`, `restaurants`, ...)."""
    paper_label: str | None = None
    """The paper's Figure 2 label for tool-use failures, None for everything else."""
    state_counts: Mapping[str, int] = field(default_factory=dict)
    """Step-level states of the trajectory (two-stage runs), null actions counted as `null action`."""


def stop_from_steps(steps: Sequence[Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """The dead-loop category and tool named by the last logged state, or (None, None) (docs/fidelity/travelplanner.md
    §10).

    Entries without a `state` (reflections, the plan-parsing note) are not steps of the agent and are skipped.
    """
    logged = [step for step in steps if isinstance(step, Mapping) and "state" in step]
    if not logged:
        return None, None
    state = logged[-1]["state"] or ""
    if state == _SAME_ACTION:
        return SAME_ACTION_DEAD_LOOP, None
    if state == _PLANNER_TOO_LONG:
        return PLANNER_TOKEN_LIMIT, None
    match = _EARLY_STOP.match(state)
    if match is None:
        return None, None
    if match.group(1) == "invalidAction":
        return INVALID_ACTION_DEAD_LOOP, None
    return ARGUMENT_ERROR_DEAD_LOOP, match.group(1)


def state_counts(steps: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Counts the step states of a two-stage trajectory (reflection entries and other step kinds are skipped)."""
    counts: Counter[str] = Counter()
    for step in steps:
        if not isinstance(step, Mapping) or "state" not in step:
            continue
        counts[step["state"] or NULL_ACTION] += 1
    return dict(counts)


def classify(status: str, steps: Sequence[Mapping[str, Any]]) -> RolloutError:
    """Classifies one stored rollout.

    Args:
        status: The rollout's terminal status.
        steps: Its trajectory. For two-stage runs the dead-loop type is re-derived from it
            (docs/fidelity/travelplanner.md §10), so a stored status and its log cannot disagree silently: the log wins.

    Returns:
        The category, the tool of an argument-error dead loop, the paper label and the step-state counts.
    """
    category, tool = stop_from_steps(steps)
    if category is None or status not in STATUSES:
        category, tool = status, None
    return RolloutError(category=category, tool=tool, paper_label=PAPER_LABELS.get(category),
                        state_counts=state_counts(steps))
