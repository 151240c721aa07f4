"""Hostile replies to TravelEval's prompts, one kind per query (the mock server's reply function for
`test_hostile_replies.py`): the oracle's plan spoiled so that reading or storing it would fail if unguarded."""

from __future__ import annotations

import re
from collections.abc import Callable

from benchmarks.offline import OfflineModels
from providers.scripted_replies import MockRequest

HUGE_INTEGER = "9" * 5000
"""Past the interpreter's 4,300-digit limit for reading an integer."""


def _spoiled(plan: str, uid: str) -> str:
    if uid == "T0001":  # an integer Python will not read
        return re.sub(r'"total_days":\s*\d+', f'"total_days":{HUGE_INTEGER}', plan, count=1)
    if uid == "T0002":  # read, validated, but beyond what a result file holds (64 bits)
        return re.sub(r'"details":\{', '"details":{"seats":' + "7" * 40 + ",", plan, count=1)
    if uid == "T0003":  # nesting within the parser's reach, past what a result file holds (255 levels)
        return re.sub(r'"details":\{', '"details":{"x":' + "[" * 400 + "]" * 400 + ",", plan, count=1)
    # a 3 MB answer with a "{" every few characters: minutes of searching, unbounded
    return '{"a":1,' + '"{":1,' * 500_000


def hostile(models: OfflineModels) -> Callable[[MockRequest], str]:
    """A mock server's reply function: the oracle's reply from `models`, spoiled by the kind of the query the prompt
    names."""
    def reply(request: MockRequest) -> str:
        prompt = "\n".join(message.content for message in request.messages)
        uid = next((uid for uid in ("T0001", "T0002", "T0003", "T0004") if uid in prompt), "T0004")
        return _spoiled(models.reply_as("oracle", request), uid)
    return reply
