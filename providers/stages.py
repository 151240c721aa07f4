"""Stages of a strategy's work, as its calls are marked: what a run spec's `batch = "planner"` sends to a batch API.

An agent's steps wait for each other, so through a batch API every step costs a batch round (minutes to hours); a
strategy marks the call that ends its work, the Planner's, with `with stage(PLANNER):`, and a model with
`batch = "planner"` sends only the calls so marked through its batch, the rest online. The mark travels in a context
variable, beside the request and never in it: it changes no answer and no cache key, so a call is the same cache entry
whichever way it was sent.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

PLANNER = "planner"
"""The call that writes the plan from what the agent gathered (TravelPlanner's Planner tool): one per rollout, after
all of the agent's steps."""

_stage: contextvars.ContextVar[str | None] = contextvars.ContextVar("call_stage", default=None)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Marks the calls made inside the block (in this task, and tasks it starts) as of stage `name`."""
    token = _stage.set(name)
    try:
        yield
    finally:
        _stage.reset(token)


def current_stage() -> str | None:
    """The stage of a call made now (None: unmarked)."""
    return _stage.get()
