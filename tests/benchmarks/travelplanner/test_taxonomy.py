"""The error taxonomy: statuses and Figure 2 labels derived from the step states (docs/fidelity/travelplanner.md
§10)."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.travelplanner import taxonomy


def log(*states: str) -> list[dict]:
    return [{"step": n, "thought": "", "action": "", "observation": "", "state": s} for n, s in enumerate(states, 1)]


@pytest.mark.parametrize(("status", "steps", "category", "tool", "label"), [
    ("argument_error_dead_loop", log("Illegal args. City Error", "flights early stop due to 3 max retries."),
     "argument_error_dead_loop", "flights", "Argument Error"),
    ("invalid_action_dead_loop", log("invalidAction", "invalidAction early stop due to 3 max retries."),
     "invalid_action_dead_loop", None, "Invalid Action Dead Loop"),
    ("same_action_dead_loop", log("Successful", "same action 3 times repeated"),
     "same_action_dead_loop", None, "Same Action Dead Loop"),
    ("max_steps", log("Successful", ""), "max_steps", None, "Max Step Limit"),
    ("token_limit", log("Successful"), "token_limit", None, "Max Step Limit"),
    ("planner_token_limit", log("Successful", "Max Token Length of Planner Exceeded."), "planner_token_limit", None,
     None),
    ("delivered", [*log("Successful"), {"parse": "rules", "error": None}], "delivered", None, None),
    ("provider_error", [], "provider_error", None, None),
])
def test_classify(status, steps, category, tool, label):
    error = taxonomy.classify(status, steps)
    assert (error.category, error.tool, error.paper_label) == (category, tool, label)


def test_the_log_wins_over_a_stale_status():
    steps = log("Illegal args. Other Error", "googleDistanceMatrix early stop due to 3 max retries.")
    assert taxonomy.classify("max_steps", steps).tool == "googleDistanceMatrix"


def test_classify_counts_categories_tools_labels_and_step_states():
    rollouts = [
        ("argument_error_dead_loop", log("Illegal args. City Error", "restaurants early stop due to 3 max retries.")),
        ("argument_error_dead_loop", log("Illegal args. DateError", "flights early stop due to 3 max retries.")),
        ("same_action_dead_loop", log("", "", "same action 3 times repeated")),
        ("delivered", log("Successful", "Successful")),
        ("budget_exhausted", []),
    ]
    errors = [taxonomy.classify(status, steps) for status, steps in rollouts]
    assert Counter(e.category for e in errors) == {"argument_error_dead_loop": 2, "same_action_dead_loop": 1,
                                                   "delivered": 1, "budget_exhausted": 1}
    assert Counter(e.tool for e in errors if e.tool) == {"restaurants": 1, "flights": 1}
    assert Counter(e.paper_label for e in errors if e.paper_label) == {"Argument Error": 2, "Same Action Dead Loop": 1}
    states = sum((Counter(e.state_counts) for e in errors), Counter())
    assert states["null action"] == 2 and states["Successful"] == 2
