"""The official string-parsing helpers of docs/fidelity/travelplanner.md §2, reproduced regex for regex.

They are interface facts: the evaluator, CostEnquiry and the submission checker must cut "Name, City",
"from A to B" and "Flight Number: F123" exactly as the official code does, odd results included.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Hashable, Iterable
from typing import TypeVar

_H = TypeVar("_H", bound=Hashable)

# docs/fidelity/travelplanner.md §2: `re.search(r'^(.*?)\([^)]*\)', s)` (utils/func.py:172)
_BEFORE_PARENTHESIS = re.compile(r"^(.*?)\([^)]*\)")
# docs/fidelity/travelplanner.md §2: `re.search(r'(.*?),\s*([^,]+)(\(\w[\w\s]*\))?$', info)` (utils/func.py:127)
_NAME_CITY = re.compile(r"(.*?),\s*([^,]+)(\(\w[\w\s]*\))?$")
# docs/fidelity/travelplanner.md §2: `re.search(r"from\s+(.+?)\s+to\s+([^,]+)(?=[,\s]|$)", text)`
# (commonsense_constraint.py:69)
_FROM_TO = re.compile(r"from\s+(.+?)\s+to\s+([^,]+)(?=[,\s]|$)")

FLIGHT_NUMBER_MARKER = "Flight Number: "
"""The exact text the official code splits on to find a flight id (docs/fidelity/travelplanner.md §7.2 (1))."""


def extract_before_parenthesis(text: str) -> str:
    """Everything before the first `(...)` group, *not* stripped; the text itself when there is none.

    `"Pensacola (Florida)"` gives `"Pensacola "` (official quirk, docs/fidelity/travelplanner.md §2: the space stays).
    """
    match = _BEFORE_PARENTHESIS.search(text)
    return match.group(1) if match else text


def get_valid_name_city(info: str) -> tuple[str, str]:
    """Split `"Name, City"` at the last comma: `(name, city)`, or `("-", "-")` when there is no comma.

    The city loses a `(State)` suffix; `"Catfish Charlie's, Myrtle Beach; Cost: 14"` keeps the junk in the
    city (docs/fidelity/travelplanner.md §2), which then matches nothing in the database.
    """
    match = _NAME_CITY.search(info)
    if match is None:
        return "-", "-"
    return match.group(1).strip(), extract_before_parenthesis(match.group(2).strip()).strip()


def extract_from_to(text: str) -> tuple[str, str] | tuple[None, None]:
    """The `(A, B)` of `"from A to B"`; B runs to the next comma or the end (`"B departure 10:00"`)."""
    match = _FROM_TO.search(text)
    if match is None:
        return None, None
    return match.group(1), match.group(2)


def transportation_match(text: str) -> str | None:
    """The conflict check's mode of a transportation text: taxi first, then self-driving, then flight."""
    lowered = text.lower()
    if "taxi" in lowered:
        return "Taxi"
    if "self-driving" in lowered:
        return "Self-driving"
    if "flight" in lowered:
        return "Flight"
    return None


def flight_number(text: str) -> str | None:
    """The id after the exact `Flight Number: ` up to the next comma, as `split(...)[1].split(',')[0]`.

    None where the official code raises IndexError (`Flight number: F1`, `Flight Number:F1`;
    docs/fidelity/travelplanner.md §7.6).
    """
    parts = text.split(FLIGHT_NUMBER_MARKER)
    if len(parts) < 2:
        return None
    return parts[1].split(",")[0]


def count_consecutive_values(values: Iterable[_H]) -> list[tuple[_H, int]]:
    """Run-length encoding: `[a, a, b, a]` gives `[(a, 2), (b, 1), (a, 1)]`."""
    return [(value, sum(1 for _ in run)) for value, run in itertools.groupby(values)]


def is_valid_city_sequence(route: list[str]) -> bool:
    """The official route-shape test (docs/fidelity/travelplanner.md §7.2 (4)).

    Fewer than 3 stops is invalid; a run of equal cities whose city was seen before is invalid unless it
    starts at the first or the last position; a run of length 1 strictly inside the route is invalid.
    """
    if len(route) < 3:
        return False
    seen: set[str] = set()
    last = len(route) - 1
    position = 0
    for city, run in itertools.groupby(route):
        length = sum(1 for _ in run)
        if city in seen and position not in (0, last):
            return False
        end = position + length - 1
        if length == 1 and 0 < end < last:
            return False
        seen.add(city)
        position += length
    return True
