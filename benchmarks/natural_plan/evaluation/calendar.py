"""Calendar Scheduling: the official exact match on the first `Day, H:MM - H:MM` of the answer.

Only the first match counts; a time is its hour plus 0.5 when the minutes are exactly `30` (so `9:15` equals
`9:00`, spec, Calendar Scheduling); the day comparison is case-sensitive. The gold answer is parsed the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchmarks.natural_plan.evaluation.scored import UNPARSEABLE, Scored

_SLOT = re.compile(r"[A-Za-z]+, [0-9]+:[0-9]+ - [0-9]+:[0-9]+")

Slot = tuple[str, float, float]
NO_SLOT: Slot = ("", -1, -1)


def hour_to_num(text: str) -> float:
    """`14:30` -> 14.5, `14:15` -> 14.0: only `:30` is a half hour."""
    hours, minutes = text.split(":")[:2]
    return float(hours) + (0.5 if minutes == "30" else 0.0)


def parse(text: str) -> Slot:
    """(day, start, end) of the first slot in `text`; `("", -1, -1)` when there is none."""
    found = _SLOT.findall(text)
    if not found:
        return NO_SLOT
    day, hours = found[0].split(",")[0].strip(), found[0].split(",")[1].strip()
    start, end = hours.split("-")[0].strip(), hours.split("-")[1].strip()
    return day, hour_to_num(start), hour_to_num(end)


def score(record: Mapping[str, Any], answer: str) -> Scored:
    """The official verdict on `answer` for a calendar record."""
    slot, want = parse(answer), parse(str(record["golden_plan"]))
    shown = list(slot)
    if slot == NO_SLOT:
        return Scored(False, 0.0, shown, "no `Day, H:MM - H:MM` slot in the answer", UNPARSEABLE)
    if slot[0] != want[0]:
        return Scored(False, 0.0, shown, f"day {slot[0]} where the answer is {want[0]}", "wrong day")
    if slot != want:
        return Scored(False, 0.0, shown, f"{_clock(slot)} where the answer is {_clock(want)} (on {want[0]})",
                      "wrong time")
    return Scored(True, 1.0, shown, f"{want[0]}, {_clock(want)} as in the answer")


def _clock(slot: Slot) -> str:
    return f"{clock_text(slot[1])} - {clock_text(slot[2])}"


def clock_text(value: float) -> str:
    """14.5 -> `14:30` (the inverse of `hour_to_num` on whole and half hours)."""
    return f"{int(value)}:{30 if value % 1 else 0:02d}"
