"""Scoring Natural Plan answers exactly as the official scripts do: one module per task, one `Scored` per answer."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchmarks.natural_plan.evaluation import calendar, meeting, trip
from benchmarks.natural_plan.evaluation.scored import Scored

SCORERS: Mapping[str, Callable[[Mapping[str, Any], str], Scored]] = {
    "trip": trip.score, "meeting": meeting.score, "calendar": calendar.score}
"""Task name -> `score(record, answer)`; a record is the official JSON record, the answer the model's text."""

__all__ = ["SCORERS", "Scored"]
