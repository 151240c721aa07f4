"""What scoring one answer says: solved or not, the official per-example score, the parsed answer, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

UNPARSEABLE = "unparseable answer"
"""The error kind of an answer the official parser finds nothing in."""


@dataclass(frozen=True, slots=True)
class Scored:
    """The verdict on one answer."""

    solved: bool
    score: float
    """The official script's per-example number: 1.0 or 0.0 (trip, calendar), valid meetings (meeting)."""
    parsed: Any
    """What the official parser read from the answer (JSON): stays, the (day, start, end) slot, or the steps."""
    reason: str
    """Why it is (not) solved, in words: the first failing position or step."""
    error: str | None = None
    """The error kind reports count (e.g. `wrong order`, `invalid meeting step: wait goes backward`); None if
    solved."""

    def to_json(self) -> dict[str, Any]:
        return {"solved": self.solved, "score": self.score, "parsed": self.parsed, "reason": self.reason,
                "error": self.error}
