"""Scoring TravelPlanner plans: the official evaluator (default, quirks included) and a strict mode."""

from __future__ import annotations

from benchmarks.travelplanner.evaluation.lookups import EvaluationSandbox
from benchmarks.travelplanner.evaluation.official import OfficialEvaluator
from benchmarks.travelplanner.evaluation.strict import StrictEvaluator
from benchmarks.travelplanner.evaluation.verdict import COMMONSENSE_KEYS, HARD_KEYS, PAPER_NAMES, PlanVerdict, Result

MODES: dict[str, type[OfficialEvaluator]] = {"official": OfficialEvaluator, "strict": StrictEvaluator}
"""Evaluation modes by name; `official` is the default everywhere."""


def make_evaluator(sandbox: EvaluationSandbox, mode: str = "official") -> OfficialEvaluator:
    """The evaluator of `mode` over an open sandbox.

    Raises:
        ValueError: for an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown evaluation mode {mode!r} (expected one of {', '.join(MODES)})")
    return MODES[mode](sandbox)


__all__ = ["COMMONSENSE_KEYS", "HARD_KEYS", "MODES", "PAPER_NAMES", "EvaluationSandbox", "OfficialEvaluator",
           "PlanVerdict", "Result", "StrictEvaluator", "make_evaluator"]
