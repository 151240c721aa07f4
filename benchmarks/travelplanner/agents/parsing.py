"""Natural-language plan -> structured plan (the submission format of docs/fidelity/travelplanner.md §6.4).

The official pipeline always asks an LLM to convert the plan (docs/fidelity/travelplanner.md §6.1-§6.2): `parser =
"llm:MODEL"` does the same, with that prompt byte for byte (the paper used `llm:openai:gpt-4-1106-preview`). `parser =
"rules"` (the default) instead reads plans written in the official day format that every TravelPlanner prompt asks for
(docs/fidelity/travelplanner.md §4.9):

    Day 1:
    Current City: from Ithaca to Charlotte
    Transportation: Flight Number: F3633413, from Ithaca to Charlotte, ...
    Breakfast: ... / Attraction: ... / Lunch: ... / Dinner: ... / Accommodation: ...

including the newline-free form the sole-planning Finish answers take (docs/fidelity/travelplanner.md §5: `Day 1:Current
City: from A to
BTransportation: ...`), and applies every rule the extraction prompt states (`_follow_the_extraction_rules`). It
accepts only text it can read without guessing: every day has each of the seven fields exactly once and days are
numbered 1, 2, 3, ...; anything else is a parse failure. The parser's output has
the shape the official extraction example produces: key `days`, and attraction lists as `Name, City;` items each
ending with `;` (the extraction prompt asks for `;`-separated attractions and shows a trailing `;`; the evaluator
drops the text after the last `;`, docs/fidelity/travelplanner.md §7.2). `$` signs are deleted, as that prompt asks.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.travelplanner.plan_fields import extract_from_to
from benchmarks.travelplanner.prompts import EXTRACTION_SYSTEM_MESSAGE, extraction_prompt
from providers.interface import ChatModel, ChatRequest, Message

# (label as written in the official day format, key in the structured plan), in the official order
# (docs/fidelity/travelplanner.md §4.9).
FIELDS: tuple[tuple[str, str], ...] = (
    ("Current City", "current_city"),
    ("Transportation", "transportation"),
    ("Breakfast", "breakfast"),
    ("Attraction", "attraction"),
    ("Lunch", "lunch"),
    ("Dinner", "dinner"),
    ("Accommodation", "accommodation"),
)
PLAN_KEYS: tuple[str, ...] = ("days",) + tuple(key for _, key in FIELDS)
"""Key order of one structured day, as in the official extraction example and the annotated plans."""

NO_PLAN_ANSWERS = ("", "Max Token Length Exceeded.")
"""Answers the official element extraction never parses (docs/fidelity/travelplanner.md §6.2)."""

# A label is recognised anywhere (newline-free answers glue it to the previous value: `CharlotteLunch: ...`), but
# only with its colon; `Day: 1` is the header the sole-planning Finish example uses (docs/fidelity/travelplanner.md §5).
# The lookahead, the first letters of the labels, changes no match: it lets the search skip a position at the cost of
# one test instead of trying every label there (half the time of a plan's parse).
_LABEL = re.compile(
    r"(?=[DCTBAL])(?:(?P<day>Day\s*(?P<n1>\d+)\s*:|Day\s*:\s*(?P<n2>\d+))"
    r"|(?P<field>Current City|Transportation|Breakfast|Attractions?|Lunch|Dinner|Accommodations?)\s*:)",
    re.IGNORECASE,
)
_FIELD_KEYS = {label.lower(): key for label, key in FIELDS} | {"attractions": "attraction",
                                                                "accommodations": "accommodation"}
# Markdown around labels (`**Day 1:**`, `- Breakfast: ...`, `### Day 2`) carries no content; values keep every
# character (an accommodation is called `*Fresh Budget Room`) except the closing `**` of a bold label.
_DECORATION = " \t*#_`>"
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?=\S)")
_BOLD_CLOSER = re.compile(r"^(?:\*\*|__)\s+")
# The extraction prompt's rules (docs/fidelity/travelplanner.md §6.1): "Flight Number:" and "Cost:" take a colon;
# non-specific information ("eat at home/on the road") becomes "-".
_COLON_AFTER = re.compile(r"\b(Flight Number(?=\s*:?\s*F?\d)|Cost(?=\s*:?\s*\$?\d))\s*:?\s*", re.IGNORECASE)
_NON_SPECIFIC = re.compile(
    r"\s*(?:(?:eat|dine|have (?:a )?(?:meal|breakfast|lunch|dinner)|stay|rest|sleep)\s+)?"
    r"(?:at home|on the road|on the way|on the plane|in the air|in transit|during the (?:flight|drive|trip)"
    r"|none|n/?a|not needed|not required|nothing|no (?:meal|breakfast|lunch|dinner|attraction|accommodation)s?"
    r"(?: needed)?)\s*\.?\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedPlan:
    """The outcome of turning one answer into a structured plan."""

    plan: list[dict[str, Any]] | None
    """Day dicts in the submission format; None when there is no plan or it could not be parsed."""
    method: str | None
    """`rules` (the rules parser, no LLM call), `llm` (the official extraction prompt) or None (nothing to parse)."""
    error: str | None = None
    """Why `plan` is None although the answer was a plan (a parse failure); None otherwise."""


def parse_plan_text(text: str) -> list[dict[str, Any]] | None:
    """Parses a plan written in the official day format, with or without newlines.

    Args:
        text: The answer as the model wrote it (text before `Day 1:` such as `Travel Plan:` is ignored, and
            so are lines after the last complete day).

    Returns:
        The day dicts (keys `PLAN_KEYS`), or None when the text is not unambiguously in the official format.
    """
    matches = list(_LABEL.finditer(text))
    days: list[dict[str, Any]] = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        if match.group("day"):
            if days and len(days[-1]) != len(PLAN_KEYS):
                return None
            number = int(match.group("n1") or match.group("n2"))
            if number != len(days) + 1 or not _is_decoration(text[match.end():end]):
                return None
            days.append({"days": number})
            continue
        key = _FIELD_KEYS[match.group("field").lower()]
        if not days or key in days[-1]:
            return None
        value, rest = _split_value(text[match.end():end])
        last = index + 1 == len(matches)
        if not last and not _is_decoration(rest):
            return None  # free text inside a day: ambiguous, leave it to the extraction prompt
        days[-1][key] = _normalise(key, value)
    if not days or len(days[-1]) != len(PLAN_KEYS):
        return None
    return [_follow_the_extraction_rules({key: day[key] for key in PLAN_KEYS}) for day in days]


def _with_colon(match: re.Match[str]) -> str:
    # "Flight Number:" as the evaluator reads it (case-sensitive); a cost keeps its own case (`cost: 71` is the tools')
    label = match.group(1)
    return ("Flight Number" if label.lower() == "flight number" else label) + ": "


def _follow_the_extraction_rules(day: dict[str, Any]) -> dict[str, Any]:
    """A day as the official extraction prompt asks the LLM to write it (docs/fidelity/travelplanner.md §6.1, one rule
    per line there):

    - a day whose transportation goes from A to B has current_city `from A to B`, whatever it said;
    - `Flight Number` and `Cost` are followed by a colon;
    - non-specific information (`eat at home`, `on the road`, ...) is `-`;
    - no `$` (`_normalise`), attractions `;`-separated `Name, City` items (`_normalise`).
    """
    for key, value in day.items():
        if isinstance(value, str):
            if _NON_SPECIFIC.fullmatch(value):
                day[key] = "-"
            else:
                day[key] = _COLON_AFTER.sub(_with_colon, value)
    origin, destination = extract_from_to(day["transportation"])  # official regex: `from A to B`
    if origin is not None and destination is not None and "from" not in day["current_city"]:
        day["current_city"] = f"from {origin} to {destination}"
    return day


def render_plan(plan: Sequence[Mapping[str, Any]]) -> str:
    """Writes a structured plan in the official day format (the Planner prompt's example, docs/fidelity/travelplanner.md
    §4.9).

    Empty day dicts (the `{}` padding of the annotated plans) are skipped.
    """
    blocks = []
    for position, day in enumerate((d for d in plan if d), start=1):
        number = day.get("days", day.get("day", position))
        lines = [f"Day {number}:"] + [f"{label}: {day.get(key, '-')}" for label, key in FIELDS]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def parse_answer(answer: str | None, extractor: ChatModel | None) -> ParsedPlan:
    """Turns a final answer into a structured plan, with the rules parser or, as the paper did, an LLM.

    Args:
        answer: The plan text as the agent delivered it.
        extractor: The model the official extraction prompt goes to (official: `gpt-4-1106-preview`, one call,
            temperature 0, system message `You are a helpful assistant.`, docs/fidelity/travelplanner.md §6.1) for every
            answer; None for the rules parser (`parse_plan_text`), which never calls an LLM.

    Returns:
        The parsed plan; `plan` is None with an `error` when the answer was a plan that could not be parsed, and
        with no error when there was no plan to parse (empty answer, `Max Token Length Exceeded.`).
    """
    if answer is None or answer in NO_PLAN_ANSWERS:
        return ParsedPlan(plan=None, method=None)
    if extractor is None:
        plan = parse_plan_text(answer)
        if plan is None:
            return ParsedPlan(plan=None, method="rules", error="not in the official day format")
        return ParsedPlan(plan=plan, method="rules")
    model = extractor
    request = ChatRequest(
        model="",
        messages=(Message("system", EXTRACTION_SYSTEM_MESSAGE), Message("user", extraction_prompt(answer))),
        temperature=0.0,
    )
    reply = await model.complete(request)
    plan, error = read_extraction_reply(reply.text)
    return ParsedPlan(plan=plan, method="llm", error=error)


def read_extraction_reply(reply: str) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Reads the structured plan out of an extraction reply (docs/fidelity/travelplanner.md §6.2).

    Official: the text between the first "```json" and the next "```", `eval`ed as a Python literal; anything
    else stops the official script for a manual fix. We take that block (or, failing it, the outermost `[...]`
    of the reply, the manual fix the script asks for), read it with `ast.literal_eval` (never `eval`), and, where
    a JSON literal such as `null` makes that fail, with `json.loads`.

    Returns:
        (plan, None) or (None, reason).
    """
    if "```json" in reply:
        block = reply.split("```json", 1)[1].split("```", 1)[0]
    else:
        start, end = reply.find("["), reply.rfind("]")
        if start < 0 or end < start:
            return None, "extraction reply has no ```json block"
        block = reply[start:end + 1]
    try:
        value = ast.literal_eval(block.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        try:
            value = json.loads(block)
        except ValueError:
            return None, "extraction reply is not a Python or JSON literal"
    if not isinstance(value, list) or not value or not all(isinstance(day, dict) for day in value):
        return None, "extraction reply is not a non-empty list of day objects"
    return value, None


def _split_value(segment: str) -> tuple[str, str]:
    """The value on the label's line, and whatever follows it up to the next label."""
    first, _, rest = segment.partition("\n")
    return _BOLD_CLOSER.sub("", first.strip()), rest


def _is_decoration(segment: str) -> bool:
    """True when a segment holds nothing but line breaks and Markdown (bullets, emphasis, headings)."""
    return all(not _BULLET.sub("", line).strip(_DECORATION + "-") for line in segment.split("\n"))


def _normalise(key: str, value: str) -> str:
    value = value.replace("$", "").strip()
    if key != "attraction" or value in ("", "-"):
        return value
    # `A, X;B, X.` (the Planner example's style) -> `A, X;B, X;`: what the extraction example produces.
    items = [item.strip() for item in value.rstrip(".").split(";")]
    return "".join(f"{item};" for item in items if item)
