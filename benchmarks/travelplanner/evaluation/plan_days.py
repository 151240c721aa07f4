"""Read access to the days of an untrusted plan, turning every official crash into `Unscorable`.

The official evaluator has no exception handling: a missing key, a non-dict day, a `null` where it parses
text, an unparsable "from A to B" or a flight without the exact `Flight Number: ` abort the whole run
(docs/fidelity/travelplanner.md §7.6). Our rule: where the official code would raise, the check that was reading raises
`Unscorable` with the reason, and that check alone is scored `(False, "Could not check: <reason>")`. Every other check
of the plan, and every other plan, is scored normally. Besides the official crash cases, a few inputs are
declared unscorable because model output is untrusted text:
* a field value that is neither a string nor null, wherever a check reads it as text;
* a field longer than `MAX_FIELD_CHARS` (the official regexes are quadratic on long text; real fields are
  well under 300 characters).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

MAX_FIELD_CHARS = 2000
"""Longest field value a check will parse."""


class Unscorable(Exception):
    """A check cannot be computed on this plan; `str(self)` says why."""


def present(value: str | None) -> TypeGuard[str]:
    """The official "is filled" test: truthy and not `-`."""
    return bool(value) and value != "-"


class PlanDays:
    """The first `D = min(query days, len(plan))` days of a plan, as every official check visits them.

    Args:
        plan: the submission's `plan` value (untrusted JSON).
        days: the query's `days`.
    """

    def __init__(self, plan: Any, days: int) -> None:
        if not isinstance(plan, list):
            raise Unscorable(f"the plan is not a list of day objects ({type(plan).__name__})")
        self.plan = plan
        self.count = min(days, len(plan))

    def __len__(self) -> int:
        return self.count

    def day(self, i: int) -> Mapping[str, Any]:
        """Day `i` (0-based) as a mapping."""
        unit = self.plan[i]
        if not isinstance(unit, dict):
            raise Unscorable(f"day {i + 1} is not an object ({type(unit).__name__})")
        return unit

    def field(self, i: int, key: str) -> str | None:
        """A key the official code reads directly (`unit[key]`): missing is unscorable, null stays None."""
        unit = self.day(i)
        if key not in unit:
            raise Unscorable(f"day {i + 1} has no {key!r}")
        return _checked_text(unit[key], i, key)

    def optional(self, i: int, key: str) -> str | None:
        """A key the official code guards with `key in unit`: missing or null gives None."""
        return _checked_text(self.day(i).get(key), i, key)

    def text(self, i: int, key: str) -> str:
        """A key the official code uses as a string right away (`'from' in unit['current_city']`)."""
        value = self.field(i, key)
        if value is None:
            raise Unscorable(f"day {i + 1} {key} is null")
        return value


def _checked_text(value: Any, i: int, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise Unscorable(f"day {i + 1} {key} is not text ({type(value).__name__})")
    if len(value) > MAX_FIELD_CHARS:
        raise Unscorable(f"day {i + 1} {key} is {len(value):,} characters long (limit {MAX_FIELD_CHARS:,})")
    return value
