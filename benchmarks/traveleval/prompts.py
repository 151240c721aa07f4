"""TravelEval's prompts: tripbench's own texts, and the contract the offline models answer by.

The official repository (onlycwy11/TravelEval) has no license, so none of its prompts is used here: every text in
this module is tripbench's own, written from the facts of the official setup (a travel-planner role, the intercity
stations the plan must use, a zero-shot chain-of-thought variant, a ReAct variant, a reflection step, and the
`FinalTravelPlan` JSON as the answer). Numbers from these prompts are not the paper's numbers.

The contract (the offline models in `offline/models.py` rely on it, so changes must keep it):

- Every prompt a strategy sends has, as one line of its last user message, `QUERY_JSON: {...}`: the task's query
  object as compact JSON, uid included (`query_line`); `find_query` recovers it from a prompt.
- `prompt_kind` tells which strategy step a prompt is for: `direct`, `cot`, `react` or `reflect`.
- A ReAct prompt is one user message holding the query, the tools, and the steps so far (the scratchpad). The model
  answers with one step and is stopped before it writes an observation itself:

      Thought: <reasoning>
      Action: <tool> <JSON object of arguments>

  The final answer is the `finish` action followed by the plan, a `FinalTravelPlan` JSON object (on the same line or
  the next ones, a ```json fence allowed):

      Thought: <reasoning>
      Action: finish {"query_uid": "T0001", "itinerary": {...}}

  `format_action` / `format_finish` write a step in this format and `parse_action` reads one back; the first
  step's prompt ends with `NO_STEPS_YET`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

QUERY_PREFIX = "QUERY_JSON: "
FINISH = "finish"
"""The ReAct action that ends the episode; its argument is the plan."""
NO_STEPS_YET = "Steps so far: none yet."
"""How a ReAct prompt ends before the first step."""
OBSERVATION_STOP = "\nObservation"
"""Stop sequence of ReAct calls: the model writes one Thought and one Action, never the tool's answer."""

PromptKind = Literal["direct", "cot", "react", "reflect"]

PLAN_FORMAT = """\
The plan is one JSON object with exactly this structure (all money in RMB, times "HH:MM", dates "YYYY-MM-DD"):
{
  "query_uid": "<the query's uid>",
  "itinerary": {
    "summary": {"total_days": int, "total_travelers": int, "departure": "<origin city>",
                "destination": "<destination city>", "total_budget": number, "calculated_total_cost": number,
                "is_within_budget": bool},
    "accommodation": {"hotel_name": "<hotel name as in the database>",
                      "room_type": [{"type": "单人房" | "大床房" | "双人房" | "家庭房", "quantity": int,
                                     "price_per_night": number, "nights": int}],
                      "total_cost": number},
    "intercity_transport": {
      "transport_type": [{"description": str, "start_time": "HH:MM", "end_time": "HH:MM",
                          "location_name": "<arrival station or airport>", "cost": number,
                          "transportation_to": "高铁" | "飞机" | "动车" | "快速" | "特快" | "直达特快",
                          "transportation_cost": number,
                          "details": {"transport_number": "<train or flight number>", "price": number,
                                      "number": <tickets bought>}}],
      "total_cost": number},
    "daily_plans": [{
      "day": int, "date": "YYYY-MM-DD", "starting_point": "<place the day starts at>",
      "ending_point": {"type": "intercity_transport" | "accommodation_check_in" | "accommodation", "description": str,
                       "start_time": "HH:MM", "end_time": "HH:MM", "location_name": "<station or hotel>",
                       "cost": number, "transportation_to": <a mode as for activities>, "transportation_cost": number,
                       "details": {...}},
      "activities": [{"type": "intercity_transport" | "attraction" | "meal" | "accommodation"
                               | "accommodation_check_in" | "accommodation_check_out",
                      "description": str, "start_time": "HH:MM", "end_time": "HH:MM",
                      "location_name": "<place name as in the database>",
                      "cost": number (the place's own cost for the whole group, travel excluded),
                      "transportation_to": "走路" | "步行" | "骑行" | "驾车" | "公交" | "地铁" | "打车" | "包车"
                                           | "高铁" | "飞机" (how the group gets to this place),
                      "transportation_cost": number,
                      "details": {"transport_time": "<minutes>", "ticket_type": str, "ticket_price": number,
                                  "ticket_number": int (attractions), "cuisine": str (meals),
                                  "line": str (subway), "bus_number": str (bus),
                                  "load_limit": int, "car_number": int (taxi or chartered car)}}]
    }],
    "cost_breakdown": {"attractions": number, "intercity_transportation": number,
                       "intracity_transportation": number, "accommodation": number, "meals": number,
                       "other": number, "total": number}
  }
}"""

PLANNER_ROLE = """\
You are an expert travel planner for trips between Chinese cities. You plan the whole trip a traveller asks for: \
the train or flight there and back, one hotel with enough rooms for everybody, and for every day the attractions, \
the meals and how the group moves between places.

Rules:
1. Use the exact Chinese names of attractions, hotels, restaurants, stations and airports.
2. Respect every preference and exclusion of the request (transport, hotel features, cuisines, attraction types, \
rhythm), its dates, the number of days and travellers, and the budget.
3. Visit attractions and restaurants within their opening hours and give each visit a realistic duration.
4. Count every ticket, room and meal for the whole group, and make the cost breakdown add up.

"""

DIRECT_TASK = "Answer with the plan only: one JSON object in a ```json fence, nothing else."
COT_TASK = ("Think it through step by step before answering: (1) what the travellers need and must avoid, (2) which "
            "transport, hotel, attractions and restaurants fit, (3) a day-by-day schedule without clashes, (4) the "
            "costs against the budget. Write this reasoning first, then the plan as one JSON object in a ```json "
            "fence.")
REACT_TASK = ("Solve this with interleaved Thought and Action steps. Each reply is exactly one step: a line "
              "'Thought: ...' and a line 'Action: <tool> <JSON arguments>'. You will be given the tool's answer as "
              "the next Observation. When you know enough, reply with the action 'finish' followed by the whole plan "
              "as one JSON object.")
REFLECT_TASK = ("Your previous attempt at this trip did not produce an acceptable plan. In a few sentences, say what "
                "went wrong and what you will do differently next time. Answer with the reflection only, no plan.")

_TASKS: tuple[tuple[PromptKind, str], ...] = (
    ("reflect", REFLECT_TASK), ("react", REACT_TASK), ("cot", COT_TASK), ("direct", DIRECT_TASK))
_ACTION = re.compile(r"^[ \t]*Action[ \t]*\d*[ \t]*:[ \t]*([A-Za-z_]+)(.*)", re.MULTILINE | re.DOTALL)
_THOUGHT = re.compile(r"^\s*Thought\s*\d*\s*:\s*", re.IGNORECASE)


def query_line(query: Mapping[str, Any]) -> str:
    """The query as the one line every prompt carries: `QUERY_JSON: ` and the query object as compact JSON.

    Args:
        query: The task's query object (the record of the query file, `uid` included).
    """
    return QUERY_PREFIX + json.dumps(query, ensure_ascii=False, separators=(",", ":"))


def find_query(prompt: str) -> dict[str, Any] | None:
    """The query object of the first `QUERY_JSON:` line of a prompt; None when there is none or it is not an object."""
    for line in prompt.splitlines():
        if line.startswith(QUERY_PREFIX):
            try:
                found = json.loads(line[len(QUERY_PREFIX):])
            except ValueError:
                return None
            return found if isinstance(found, dict) else None
    return None


def prompt_kind(prompt: str) -> PromptKind | None:
    """Which step a prompt (a last user message) asks for; None for a prompt not made here."""
    if find_query(prompt) is None:
        return None
    return next((kind for kind, task in _TASKS if task in prompt), None)


def stations_text(stations: Iterable[str]) -> str:
    """The intercity stations and airports a plan must use, one line (the official prompts name them too)."""
    return "Intercity travel must depart from and arrive at these stations or airports: " + "、".join(stations)


def system_prompt(stations: Iterable[str]) -> str:
    """The system message of the direct and chain-of-thought strategies: role, rules, stations, plan format."""
    return f"{PLANNER_ROLE}{stations_text(stations)}\n\n{PLAN_FORMAT}"


def request_prompt(query: Mapping[str, Any], task: str) -> str:
    """A user message: the query line, the request in the traveller's words, and the task sentence."""
    return f"{query_line(query)}\nRequest: {query.get('nature_language', '')}\n\n{task}"


def react_prompt(query: Mapping[str, Any], tools: str, stations: Iterable[str], scratchpad: str,
                 reflections: Sequence[str] = ()) -> str:
    """The ReAct user message, rebuilt for every step.

    Args:
        query: The task's query object.
        tools: The tool descriptions (`tools.TOOLS_TEXT`).
        stations: The intercity stations and airports the plan must use.
        scratchpad: The steps so far (`format_step` of each), '' at the start.
        reflections: Lessons from earlier failed attempts (reflexion), oldest first.
    """
    parts = [request_prompt(query, REACT_TASK), f"Tools:\n{tools}\n{FINISH} <plan JSON>: ends the task with the plan.",
             stations_text(stations), PLAN_FORMAT]
    if reflections:
        parts.append("Lessons from your earlier attempts:\n" + "\n".join(f"- {text}" for text in reflections))
    parts.append(f"Steps so far:{scratchpad}" if scratchpad else NO_STEPS_YET)
    return "\n\n".join(parts)


def reflect_prompt(query: Mapping[str, Any], scratchpad: str, failure: str) -> str:
    """The reflexion step's user message: the failed attempt's steps and why it failed."""
    return (f"{query_line(query)}\nRequest: {query.get('nature_language', '')}\n\n"
            f"Your previous attempt:{scratchpad or ' no steps.'}\n\nWhy it failed: {failure}\n\n{REFLECT_TASK}")


@dataclass(frozen=True, slots=True)
class Action:
    """One ReAct step as the model wrote it."""

    name: str
    """The tool's name, or `finish`."""
    arguments: dict[str, Any]
    """The tool's arguments ({} for `finish`)."""
    thought: str
    answer: str = ""
    """For `finish`: the text after the action name, the plan as the model wrote it."""


class ActionError(ValueError):
    """A reply that is not one well-formed step; the message is the observation the model is given."""


def format_action(name: str, arguments: Mapping[str, Any] | None = None, *, thought: str = "") -> str:
    """One ReAct step as the model should write it (the offline models answer with this)."""
    args = json.dumps(dict(arguments or {}), ensure_ascii=False, separators=(", ", ": "))
    return f"Thought: {thought}\nAction: {name} {args}"


def format_finish(plan_json: str, *, thought: str = "") -> str:
    """The final ReAct step: `finish` and the plan."""
    return f"Thought: {thought}\nAction: {FINISH} {plan_json}"


def format_step(n: int, reply: str, observation: str | None) -> str:
    """One step of the scratchpad: the model's reply and the tool's answer, numbered."""
    text = f"\n\nStep {n}:\n{reply.strip()}"
    return text if observation is None else f"{text}\nObservation: {observation}"


def parse_action(reply: str) -> Action:
    """Reads one ReAct step (the format in the module docstring).

    Raises:
        ActionError: no `Action:` line, or arguments that are not one JSON object.
    """
    match = _ACTION.search(reply)
    if match is None:
        raise ActionError("No action found. Reply with 'Thought: ...' and then 'Action: <tool> <JSON arguments>'.")
    thought = _THOUGHT.sub("", reply[:match.start()].strip())
    name, rest = match.group(1), match.group(2).strip()
    if name == FINISH:
        return Action(name, {}, thought, answer=rest)
    if not rest:
        return Action(name, {}, thought)
    try:
        arguments, _ = json.JSONDecoder().raw_decode(rest)
    except ValueError as exc:
        raise ActionError(f"The arguments of {name} are not valid JSON ({exc.args[0]}). Write them as one JSON "
                          "object, e.g. {\"city\": \"上海\"}.") from None
    except RecursionError:  # model text nested deeper than the decoder can go
        raise ActionError(f"The arguments of {name} are nested too deeply. Write them as one flat JSON object, "
                          "e.g. {\"city\": \"上海\"}.") from None
    if not isinstance(arguments, dict):
        raise ActionError(f"The arguments of {name} must be one JSON object, e.g. {{\"city\": \"上海\"}}.")
    return Action(name, arguments, thought)
