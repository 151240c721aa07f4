"""What `offline:oracle` answers: a competent two-stage agent and planner computed from the prompt text alone.

The oracle needs no sandbox and keeps no state between calls: every answer is a function of the prompt, so it
behaves the same called directly or behind the mock server, and a cached rollout replays exactly.

* ReAct prompts (docs/fidelity/travelplanner.md §4.3): the query is read back from its text (`query_facts`); the
  scratchpad is replayed against the oracle's fixed search agenda (`_agenda`) to find the next step. Whether an earlier
  search was kept is read from the scratchpad itself (a `NotebookWrite` right after it), because the agent masks earlier
  tables (docs/fidelity/travelplanner.md §4.5); only the latest observation is judged afresh.
* Planner prompts (docs/fidelity/travelplanner.md §4.9, §5 direct/cot): the notebook or reference information is read
  back into tables (`notebook_reader`) and `plan_search.build_plan` writes the plan in the official day format.
* Sole-planning ReAct / Reflexion prompts: `Finish[<plan>]` at once; extraction prompts (docs/fidelity/travelplanner.md
  §6.1): the plan as JSON when it is in the day format.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass
from string import Formatter

from benchmarks.travelplanner.agents.parsing import parse_plan_text, render_plan
from benchmarks.travelplanner.offline.notebook_reader import (
    Collected,
    collect,
    notebook_contents,
    read_table,
    table_kind,
)
from benchmarks.travelplanner.offline.plan_search import (
    CityOptions,
    Leg,
    PlanResult,
    Request,
    build_plan,
    choose_stay,
    leg_modes,
    pick_cities,
    taxi_from_drive,
)
from benchmarks.travelplanner.prompts import (
    COT_PLANNER_INSTRUCTION,
    EXTRACTION_PREFIX,
    PLANNER_INSTRUCTION,
    REACT_PLANNER_INSTRUCTION,
    REACT_REFLECT_PLANNER_INSTRUCTION,
    REFLECT_INSTRUCTION,
    ZEROSHOT_REACT_INSTRUCTION,
)
from benchmarks.travelplanner.query_facts import QueryFacts, read_query

MAX_STEPS = 30
"""The two-stage agent's step limit (docs/fidelity/travelplanner.md §4.4): the oracle calls the Planner at the latest on
this step."""
NO_ANSWER = "I can only help with TravelPlanner prompts."
REFLECTION = "I should check each item's name and city against the given information, then finish the plan."
_STEP = re.compile(r"\n(Thought|Action|Observation) (\d+):")
_ACTION = re.compile(r"^(\w+)\[(.+)\]$")


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a scratchpad as the model sees it (observations may be masked)."""

    number: int
    thought: str = ""
    action: str = ""
    observation: str = ""


@dataclass(frozen=True, slots=True)
class ReactPrompt:
    """A two-stage ReAct prompt read back: the query, the finished steps, and what the model must write next."""

    query: str
    steps: tuple[Step, ...]
    next_number: int
    wants: str
    """`Thought` or `Action`: what the prompt ends asking for."""


def template_fields(template: str, prompt: str) -> dict[str, str] | None:
    """Invert `template.format(...)`: each field's text, or None when `prompt` is not an instance of `template`.

    A field runs to the first occurrence of the next literal (the last field to the final literal), which is
    unambiguous for these templates: notebooks and reference information are Python reprs with escaped newlines.
    """
    parts: list[tuple[str, str]] = []  # (literal before, field); escaped braces split literals: rejoin
    pending = ""
    for literal, name, _, _ in Formatter().parse(template):
        pending += literal
        if name is not None:
            parts.append((pending, name))
            pending = ""
    trailing = pending
    if not prompt.startswith(parts[0][0]) or not prompt.endswith(trailing):
        return None
    fields: dict[str, str] = {}
    at, limit = len(parts[0][0]), len(prompt) - len(trailing)
    for i, (_, name) in enumerate(parts):
        following = parts[i + 1][0] if i + 1 < len(parts) else None
        if following is None:
            end = limit
        elif following:
            end = prompt.find(following, at, limit)
        else:
            end = at  # adjacent fields: the next one takes the text (fixed up below)
        if end < at:
            return None
        fields[name] = prompt[at:end]
        at = end + len(following or "")
    if "scratchpad" in fields and "query" in fields:  # `{query}{scratchpad}`: the scratchpad starts at Thought 1
        joined = fields["query"] + fields["scratchpad"]
        cut = joined.find("\nThought 1:")
        fields["query"], fields["scratchpad"] = (joined, "") if cut < 0 else (joined[:cut], joined[cut:])
    return fields


def read_react_prompt(prompt: str) -> ReactPrompt | None:
    """The query and the scratchpad of a two-stage ReAct prompt, or None for another prompt."""
    head = ZEROSHOT_REACT_INSTRUCTION.split("{query}")[0]
    if not prompt.startswith(head):
        return None
    rest = prompt[len(head):]
    start = rest.find("\nThought 1:")
    query, scratchpad = (rest, "") if start < 0 else (rest[:start], rest[start:])
    pieces = _STEP.split(scratchpad)
    steps: dict[int, dict[str, str]] = {}
    for i in range(1, len(pieces), 3):
        kind, number, text = pieces[i], int(pieces[i + 1]), pieces[i + 2]
        steps.setdefault(number, {})[kind.lower()] = text[1:] if text.startswith(" ") else text
    if len(pieces) == 1:
        return ReactPrompt(query, (), 1, "Thought")
    # the prompt ends with the marker the model must complete: "Thought n:" or "Action n:"
    wants, current = pieces[-3], int(pieces[-2])
    done = tuple(Step(n, **fields) for n, fields in sorted(steps.items()) if n < current)
    return ReactPrompt(query, done, current, wants)


def _agenda(facts: QueryFacts) -> Generator[tuple[str, str], object, None]:
    """The oracle's searches in order, each with the rule that decides whether to keep its result.

    Receives True/False (kept or not) after each search, and the observation text after `CitySearch`. A city is
    used when its attractions, accommodations (one acceptable) and restaurants all come back; a leg gets the
    first usable mode of `leg_modes`; when some leg needs a flight, the other legs' flights are looked up too,
    so the planner can keep the trip free of flight/self-driving conflicts at a fair price.
    """
    request = facts.request()
    used = 0  # ReAct steps so far: one per search, one more for the NotebookWrite of a kept result

    def search(action: str, rule: str) -> Generator[tuple[str, str], object, bool]:
        nonlocal used
        kept = bool((yield action, rule))
        used += 2 if kept else 1
        return kept

    if facts.days == 3:
        cities = [facts.dest or ""]
        for kind in ("AccommodationSearch", "AttractionSearch", "RestaurantSearch"):
            yield from search(f"{kind}[{cities[0]}]", "table")
    else:
        listing = yield f"CitySearch[{facts.dest}]", "listing"
        used += 1
        cities = []
        for city in (c for c in _city_list(str(listing)) if c != facts.org):
            if len(cities) == facts.city_count:
                break
            # cheapest rejection first: some cities have no attraction at all
            if ((yield from search(f"AttractionSearch[{city}]", "table"))
                    and (yield from search(f"AccommodationSearch[{city}]", "stay"))
                    and (yield from search(f"RestaurantSearch[{city}]", "table"))):
                cities.append(city)
    stops = [facts.org or "", *cities, facts.org or ""]
    legs = [(a, b, facts.dates[2 * i] if 2 * i < len(facts.dates) else "") for i, (a, b) in
            enumerate(zip(stops, stops[1:]))]
    flown = set()
    for leg in legs:
        for mode in leg_modes(request):
            if (yield from search(_leg_action(leg, mode), "table" if mode == "flight" else "drive")):
                if mode == "flight":
                    flown.add(leg)
                break
    if flown and "flight" in leg_modes(request):
        for leg in legs:
            # optional (the drive found is usable as a taxi): only while the Planner step stays in reach
            if leg not in flown and used + 2 < MAX_STEPS:
                yield from search(_leg_action(leg, "flight"), "table")


def _leg_action(leg: tuple[str, str, str], mode: str) -> str:
    a, b, date = leg
    return f"FlightSearch[{a}, {b}, {date}]" if mode == "flight" else f"GoogleDistanceMatrix[{a}, {b}, {mode}]"


def simulate_agenda(facts: QueryFacts, judge: Callable[[str, str], object]) -> tuple[list[str], int]:
    """Run the oracle's agenda against `judge(action, rule)` (kept?, or the city list for `CitySearch`).

    Returns:
        The kept searches in order and the number of ReAct steps the oracle would take, the Planner included.
    """
    agenda, kept, steps = _agenda(facts), [], 0
    action, rule = next(agenda)
    while True:
        answer = judge(action, rule)
        steps += 1 if rule == "listing" or not answer else 2  # a kept result costs a NotebookWrite step
        if rule != "listing" and answer:
            kept.append(action)
        try:
            action, rule = agenda.send(answer)
        except StopIteration:
            return kept, steps + 1


def _city_list(observation: str) -> list[str]:
    try:
        value = ast.literal_eval(observation.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return []
    return [c for c in value if isinstance(c, str)] if isinstance(value, list) else []


def keeps(rule: str, observation: str, request: Request) -> bool:
    """Whether a search result is worth a NotebookWrite."""
    if rule == "drive":
        return re.search(r"cost: \d+", observation) is not None
    if table_kind(observation) is None or not read_table(observation):
        return False
    if rule == "stay":
        found = collect([observation])
        return any(choose_stay(city, request) is not None for city in found.cities().values())
    return True


def next_react_action(prompt: ReactPrompt) -> str:
    """The oracle's next action for a ReAct prompt: a search, a NotebookWrite after a kept result, or Planner."""
    facts = read_query(prompt.query)
    planner = f"Planner[{prompt.query}]"
    if prompt.next_number >= MAX_STEPS:
        return planner
    agenda = _agenda(facts)
    history = list(prompt.steps)
    try:
        action, rule = next(agenda)
        i = 0
        while i < len(history):
            if history[i].action != action:
                return planner  # someone else acted (not the oracle's script): wrap up
            if rule == "listing":
                action, rule = agenda.send(history[i].observation)
                i += 1
                continue
            if i + 1 < len(history):
                kept = history[i + 1].action.startswith("NotebookWrite[")
            else:
                kept = keeps(rule, history[i].observation, facts.request())
                if kept:
                    return f"NotebookWrite[{_description(action)}]"
            i += 2 if kept else 1
            action, rule = agenda.send(kept)
        return action
    except StopIteration:
        return planner


def _description(action: str) -> str:
    match = _ACTION.match(action)
    kind, args = (match.group(1), match.group(2).split(", ")) if match else ("", [action])
    if kind == "FlightSearch" and len(args) == 3:
        return f"Flights from {args[0]} to {args[1]} on {args[2]}"
    if kind == "GoogleDistanceMatrix" and len(args) == 3:
        return f"{args[2].capitalize()} from {args[0]} to {args[1]}"
    label = {"AccommodationSearch": "Accommodations", "RestaurantSearch": "Restaurants",
             "AttractionSearch": "Attractions"}.get(kind, "Information")
    return f"{label} in {args[0]}"


def thought_for(action: str) -> str:
    """A one-line thought announcing `action` (never containing "None": the agent's mask would eat it, §4.5)."""
    match = _ACTION.match(action)
    kind = match.group(1) if match else ""
    return {"CitySearch": "I need to know which cities I can visit in the destination state.",
            "AccommodationSearch": "I should look for accommodations that suit the group.",
            "RestaurantSearch": "I need restaurants for the meals in this city.",
            "AttractionSearch": "I need attractions to visit in this city.",
            "FlightSearch": "I should check the flights for this leg of the trip.",
            "GoogleDistanceMatrix": "I should check driving or taxi options for this leg.",
            "NotebookWrite": "I should store this information in the Notebook.",
            "Planner": "I have collected enough information, so I will ask the Planner for the plan."}.get(
        kind, "Let me take the next step.")


def plan_from_information(text: str, query: str) -> str:
    """A plan in the official day format from a notebook or reference-information text and the query."""
    facts = read_query(query)
    return render_plan(plan_from_collected(facts, collect(notebook_contents(text))).plan)


def plan_from_collected(facts: QueryFacts, found: Collected) -> PlanResult:
    """The oracle planner's plan from what was collected: first usable cities, cheapest consistent legs."""
    org = facts.org or next((a for a, _, _, _ in found.flights), "")
    request = facts.request()
    candidates = [c for name, c in found.cities().items() if name != org]
    cities = pick_cities(candidates, request, facts.city_count) or [CityOptions(facts.dest or org)]
    while len(cities) < facts.city_count:
        cities.append(cities[-1])
    stops = [org, *(c.name for c in cities), org]
    legs = []
    for i, (a, b) in enumerate(zip(stops, stops[1:])):
        date = facts.dates[2 * i] if 2 * i < len(facts.dates) else None
        drive = found.drives.get((a, b, "self-driving"))
        taxi = found.drives.get((a, b, "taxi")) or (taxi_from_drive(drive) if drive else None)
        legs.append(Leg(a, b, found.flights_for(a, b, date), drive, taxi))
    return build_plan(request, cities, legs)


def oracle_reply(prompt: str) -> str:
    """The oracle's answer to any prompt the TravelPlanner agents send."""
    react = read_react_prompt(prompt)
    if react is not None:
        action = next_react_action(react)
        return action if react.wants == "Action" else thought_for(action)
    for template in (PLANNER_INSTRUCTION, COT_PLANNER_INSTRUCTION):
        fields = template_fields(template, prompt)
        if fields is not None:
            return plan_from_information(fields["text"], fields["query"])
    for template in (REACT_PLANNER_INSTRUCTION, REACT_REFLECT_PLANNER_INSTRUCTION):
        fields = template_fields(template, prompt)
        if fields is not None:
            if re.search(r"\nAction \d+:$", fields["scratchpad"]):
                return "Finish[" + plan_from_information(fields["text"], fields["query"]) + "]"
            return "I have the information I need, so I will finish with the complete plan."
    if template_fields(REFLECT_INSTRUCTION, prompt) is not None:
        return REFLECTION
    if prompt.startswith(EXTRACTION_PREFIX):
        plan = parse_plan_text(prompt[len(EXTRACTION_PREFIX):].removeprefix("Text:\n").removesuffix("\nJSON:\n"))
        return "```json\n" + json.dumps(plan, ensure_ascii=False) + "\n```" if plan else NO_ANSWER
    return NO_ANSWER
