"""Read a TravelPlanner request back out of its natural-language text (the offline models see only the prompt).

The official queries were verbalised from a JSON record by an LLM (docs/fidelity/travelplanner.md §9); these rules cover
the phrasings of the 45 train and 180 validation queries and of the demo world's templates.
`tests/benchmarks/travelplanner/test_query_facts.py` measures the agreement with the structured fields on the
staged splits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date as Date
from datetime import timedelta

from benchmarks.travelplanner.offline.plan_search import Request

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10, "single": 1, "solo": 1}
_NUMBER = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
# A place name: capitalised words ("St. Petersburg", "West Palm Beach", "Salt Lake City").
_PLACE = r"((?:[A-Z][A-Za-z.'-]*)(?:\s(?:[A-Z][A-Za-z.'-]*))*)"
_CUISINES = ("Chinese", "American", "Italian", "Mexican", "Indian", "Mediterranean", "French")
_NOT_PLACES = {"March", "I", "We", "The", "Our", "My", "Can", "Could", "Please", *_CUISINES}
_ORG_PATTERNS = (
    rf"(?:departing|leaving|starting|originating|beginning|setting off|set off|heading out|traveling|travelling|"
    rf"flying|journeying|commencing|commences|journey|starts|begins)\s+(?:from|in|at|out of)\s+{_PLACE}",
    rf"\b(?:departing|leaving|leave|depart|departs)\s+{_PLACE}",
    rf"\bfrom\s+{_PLACE}\s+(?:to|and|for|heading|visiting|bound)\b",
    rf"\b(?:start|begin)s?\s+(?:in|from|at)\s+{_PLACE}",
    rf"\bfrom\s+{_PLACE}",
)
_DEST_STATE_PATTERNS = (
    rf"cities\s+(?:with)?in\s+(?:the\s+state\s+of\s+)?{_PLACE}",
    rf"\b(?:to|in|across|towards|explore|exploring|visit|visiting)\s+(?:the\s+state\s+of\s+)?{_PLACE}",
)
_DEST_CITY_PATTERNS = (
    rf"\b(?:to|visiting|visit|towards|destination is|explore|exploring|in)\s+{_PLACE}",
)
_NEGATION = re.compile(r"\b(?:not|no|cannot|can't|won't|don't|avoid|avoiding|without|rather not|exclude|excluding)\b"
                       r"|n't\b|\bnon-", re.I)


@dataclass(frozen=True, slots=True)
class QueryFacts:
    """What the text says; None where it could not be read."""

    org: str | None
    dest: str | None
    days: int
    dates: tuple[str, ...]
    people: int
    budget: int | None
    house_rule: str | None
    cuisines: tuple[str, ...]
    room_type: str | None
    transportation: str | None

    @property
    def city_count(self) -> int:
        """Cities to visit: 1 / 2 / 3 for 3 / 5 / 7 days (docs/fidelity/travelplanner.md §1.2)."""
        return {3: 1, 5: 2, 7: 3}.get(self.days, 1)

    def request(self) -> Request:
        return Request(self.org or "", self.days, self.people, self.budget, self.house_rule, self.cuisines,
                       self.room_type, self.transportation)


def read_query(text: str) -> QueryFacts:
    """Extract org, destination, dates, group size, budget and local constraints from a query text."""
    org = _first_place(text, _ORG_PATTERNS, exclude=())
    days = _days(text)
    dest_patterns = _DEST_CITY_PATTERNS if days == 3 else _DEST_STATE_PATTERNS
    after_org = text[text.find(org) + len(org):] if org else text
    dest = _first_place(after_org, dest_patterns, exclude=(org,)) or _first_place(text, dest_patterns, (org,))
    money = re.search(r"\$\s?([\d,]+)", text)
    return QueryFacts(org, dest, days, _dates(text, days), _people(text),
                      int(money.group(1).replace(",", "")) if money else None, _house_rule(text),
                      _cuisines(text), _room_type(text),
                      _transportation(text))


def _clean_place(name: str) -> str:
    words: list[str] = []
    for word in name.split(" "):
        if word.endswith(".") and len(word) > 4:  # a sentence-final period; an abbreviation's stays ("St.", "Ste.")
            words.append(word[:-1])
            break
        words.append(word)
    while words and words[-1] in _NOT_PLACES:
        words.pop()
    return " ".join(words)


def _first_place(text: str, patterns: tuple[str, ...], exclude: tuple[str | None, ...]) -> str | None:
    for pattern in patterns:
        for match in re.finditer(pattern, text):
            name = _clean_place(match.group(1))
            if name and name.split(" ")[0] not in _NOT_PLACES and name not in exclude:
                return name
    return None


def _days(text: str) -> int:
    if re.search(r"\b(?:week-long|one-week|one week|a week)\b", text, re.I):
        return 7
    match = re.search(rf"\b{_NUMBER}[- ](?:day|days)\b", text, re.I)
    if match:
        word = match.group(1).lower()
        return int(word) if word.isdigit() else _WORDS[word]
    ordinals = [int(n) for n in re.findall(r"\b(\d{1,2})(?:st|nd|rd|th)\b", text)]
    return ordinals[1] - ordinals[0] + 1 if len(ordinals) >= 2 and ordinals[1] > ordinals[0] else 3


def _dates(text: str, days: int) -> tuple[str, ...]:
    """Consecutive dates from the first day of March named (every query is in March 2022, docs/fidelity/travelplanner.md
    §1.2)."""
    match = re.search(r"\bMarch (\d{1,2})\b", text) or re.search(r"\b(\d{1,2})(?:st|nd|rd|th)\b", text)
    if not match or not 1 <= int(match.group(1)) <= 31:
        return ()
    start = Date(2022, 3, int(match.group(1)))
    return tuple((start + timedelta(d)).isoformat() for d in range(days))


def _people(text: str) -> int:
    lowered = text.lower()
    for pattern in (rf"(?:group|party|family|team) of {_NUMBER}", rf"\b{_NUMBER} (?:people|persons|individuals|"
                    rf"travell?ers|adults|friends|of us|guests)\b", rf"for {_NUMBER}\b(?! days| cities)"):
        match = re.search(pattern, lowered)
        if match:
            word = match.group(1)
            return int(word) if word.isdigit() else _WORDS[word]
    return 2 if re.search(r"\b(?:couple|pair|two of us|partner|duo)\b", lowered) else 1


def _cuisines(text: str) -> tuple[str, ...]:
    """Cuisines named, in order of first mention ("Indian" inside "Indiana" does not count)."""
    found = [(m.start(), c) for c in _CUISINES if (m := re.search(rf"\b{c}\b", text))]
    return tuple(c for _, c in sorted(found))


def _house_rule(text: str) -> str | None:
    lowered = text.lower()
    # "a party of 3" is a group size, not a house rule
    for rule, pattern in (("smoking", r"smok"), ("parties", r"\bparties\b|\bparty\b(?! of)"),
                          ("children under 10", r"child"), ("visitors", r"visitor"),
                          ("pets", r"\bpets?\b|pet-friendly")):
        if re.search(pattern, lowered):
            return rule
    return None


def _room_type(text: str) -> str | None:
    lowered = text.lower()
    if re.search(r"(?:not|neither|non-?|n't)[\s-]*(?:be\s+)?shared|not share", lowered):
        return "not shared room"
    if "shared room" in lowered or "shared accommodation" in lowered:
        return "shared room"
    if "private room" in lowered:
        return "private room"
    if re.search(r"entire (?:room|home|apartment|place|propert)", lowered):
        return "entire room"
    return None


def _transportation(text: str) -> str | None:
    for sentence in re.split(r"(?<=[.?!])\s+", text):
        if not _NEGATION.search(sentence):
            continue
        lowered = sentence.lower()
        if re.search(r"self[- ]?driv|drive ourselves|driving", lowered):
            return "no self-driving"
        if re.search(r"flight|fly|flying|air travel|plane|airline", lowered):
            return "no flight"
    return None
