"""TravelEval's prompts: tripbench's own texts, and the contract the offline models answer by.

The official repository (onlycwy11/TravelEval) has no license, so none of its prompts is used here: every text in
this module is tripbench's own, written from the facts of the official setup (`agent/main.py`, `agent/strategies/`).

The paper's protocol (the default strategies `direct`, `cot`, `react`, `reflexion`): the model sees what the
official agents see and nothing more. The system message holds a travel-planner role, the strategy's instructions,
the intercity stations the plan must use and the `FinalTravelPlan` format (`paper_system`); the user message holds
the query's uid and its request in Chinese, as the traveller wrote it, and the strategy's closing sentence
(`paper_user`). Not the query's structured fields, dates, tags or English translation. `reflexion`'s second call
(`critique_prompt`) holds only the first plan, the critique's instructions and the format.

The tool agents (`react-tools`, `reflexion-tools`, beyond the paper) see the same uid and request, the tools, the
stations and the plan format (`react_prompt`).

The contract (the offline models in `offline/models.py` rely on it, so changes must keep it):

- Every prompt a strategy sends names its query's uid in its last user message: a line `Query uid: <uid>`
  (`find_uid`), or, in a critique prompt, the first plan's `"query_uid"`. The offline models look the query up by
  that uid among the tasks loaded (`offline/known.py`).
- `prompt_kind` tells which step a prompt is for: `direct`, `cot`, `react`, `critique` (the paper's), or
  `react-tools` and `reflect` (the tool agents').
- A tool agent's prompt is one user message holding the request, the tools, and the steps so far (the
  scratchpad). The model answers with one step and is stopped before it writes an observation itself:

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

UID_PREFIX = "Query uid: "
"""The line that names the query in every user message but a critique's (`find_uid`)."""
FINISH = "finish"
"""The ReAct action that ends the episode; its argument is the plan."""
NO_STEPS_YET = "Steps so far: none yet."
"""How a ReAct prompt ends before the first step."""
OBSERVATION_STOP = "\nObservation"
"""Stop sequence of ReAct calls: the model writes one Thought and one Action, never the tool's answer."""

PromptKind = Literal["direct", "cot", "react", "critique", "react-tools", "reflect"]
PaperKind = Literal["direct", "cot", "react"]

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

PAPER_ROLE = ("You are an experienced travel planner, and you know every point of interest of the destination city "
              "from a complete database of them.")
NAMES_RULE = ("Name places by their standard names, as the database spells them (for example 故宫博物院, "
              "上海迪士尼度假区).")
PAPER_RULES: dict[PaperKind, str] = {
    "direct": f"Instructions:\n1. Give the plan in exactly the JSON format below.\n2. {NAMES_RULE}",
    "cot": (f"Instructions:\n1. {NAMES_RULE}\n2. Before the final answer, reason it through in plain words, in this "
            "order: (a) what the travellers need, and which limits (budget, days, group) and preferences they state; "
            "(b) which transport, hotel, attractions and restaurants fit, and why; (c) a day-by-day schedule without "
            "clashes; (d) the costs, checked against the budget (change the plan if it is over).\n3. Then give the "
            "final plan in exactly the JSON format below."),
    "react": (f"Instructions:\n1. {NAMES_RULE}\n2. Work in at most 3 rounds, each written by you as three lines:\n"
              "   Thought: where the planning stands and what to settle next (e.g. the hotel for the first night).\n"
              "   Action: the decision or the data the next step needs (e.g. pick a family-friendly hotel, add up "
              "the costs so far).\n"
              "   Observation: your own answer to that step, from common sense and reasoning (no tool is run for "
              "you).\n3. Once route, hotel, transport and budget are all settled, give the final plan in exactly "
              "the JSON format below."),
}
"""Each paper strategy's instructions in its system message."""
PAPER_CLOSING: dict[PaperKind, str] = {
    "direct": "Plan this trip now, and answer with valid JSON.",
    "cot": "Show your reasoning first, then give the final plan.",
    "react": "Begin your Thought / Action / Observation rounds, and end with the plan as JSON in the required format.",
}
"""Each paper strategy's last sentence of the user message (what `prompt_kind` recognises)."""
CRITIQUE_TASK = ("You review travel plans. Reflect critically on the plan below: first (1) what it does well, (2) the "
                 "problems and risks you find (a budget overrun, times too tight, a detour, a poor fit for the "
                 "travellers), (3) what to fix first, in order of priority. After this reflection, write the revised "
                 "plan in exactly the same JSON format.")
"""`reflexion`'s second call: a critique of the first plan, then the plan again."""

REACT_TASK = ("Solve this with interleaved Thought and Action steps. Each reply is exactly one step: a line "
              "'Thought: ...' and a line 'Action: <tool> <JSON arguments>'. You will be given the tool's answer as "
              "the next Observation. When you know enough, reply with the action 'finish' followed by the whole plan "
              "as one JSON object.")
REFLECT_TASK = ("Your previous attempt at this trip did not produce an acceptable plan. In a few sentences, say what "
                "went wrong and what you will do differently next time. Answer with the reflection only, no plan.")

_TASKS: tuple[tuple[PromptKind, str], ...] = (
    ("critique", CRITIQUE_TASK), ("reflect", REFLECT_TASK), ("react-tools", REACT_TASK),
    ("react", PAPER_CLOSING["react"]), ("cot", PAPER_CLOSING["cot"]), ("direct", PAPER_CLOSING["direct"]))
_UID_IN_PLAN = re.compile(r'"query_uid"\s*:\s*"([^"\\]+)"')
_ACTION = re.compile(r"^[ \t]*Action[ \t]*\d*[ \t]*:[ \t]*([A-Za-z_]+)(.*)", re.MULTILINE | re.DOTALL)
_THOUGHT = re.compile(r"^\s*Thought\s*\d*\s*:\s*", re.IGNORECASE)


def find_uid(prompt: str) -> str | None:
    """The uid a prompt names: its first `Query uid:` line, else (a critique) the first `"query_uid"` of the plan in
    it; None when there is neither."""
    for line in prompt.splitlines():
        if line.startswith(UID_PREFIX):
            return line[len(UID_PREFIX):].strip() or None
    found = _UID_IN_PLAN.search(prompt)
    return found.group(1) if found else None


def prompt_kind(prompt: str) -> PromptKind | None:
    """Which step a prompt (a last user message) asks for; None for a prompt not made here."""
    if find_uid(prompt) is None:
        return None
    return next((kind for kind, task in _TASKS if task in prompt), None)


def stations_text(stations: Iterable[str]) -> str:
    """The intercity stations and airports a plan must use, one line (the official prompts name them too)."""
    return "Intercity travel must depart from and arrive at these stations or airports: " + "、".join(stations)


def paper_system(kind: PaperKind, stations: Iterable[str]) -> str:
    """The system message of a paper strategy: role, the strategy's instructions, stations, plan format."""
    return f"{PAPER_ROLE}\n\n{PAPER_RULES[kind]}\n\n{stations_text(stations)}\n\n{PLAN_FORMAT}"


def paper_user(query: Mapping[str, Any], kind: PaperKind) -> str:
    """The user message of a paper strategy: the query's uid and its request in Chinese, and the closing sentence."""
    return f"{request_text(query)}\n\n{PAPER_CLOSING[kind]}"


def critique_prompt(plan: Mapping[str, Any]) -> str:
    """`reflexion`'s second call, one user message: the critique's instructions, the first plan (as JSON), and the
    plan format. It shows neither the request nor the stations, as the official critique does not."""
    return f"{CRITIQUE_TASK}\n\nThe plan:\n{json.dumps(plan, ensure_ascii=False)}\n\n{PLAN_FORMAT}"


def request_text(query: Mapping[str, Any]) -> str:
    """What every prompt tells of the query: its uid and the request as the traveller wrote it (in Chinese)."""
    return f"{UID_PREFIX}{query.get('uid', '')}\nRequest: {query.get('nature_language', '')}"


def request_prompt(query: Mapping[str, Any], task: str) -> str:
    """A tool agent's user message begins with the request, then the task sentence."""
    return f"{request_text(query)}\n\n{task}"


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
    return (f"{request_text(query)}\n\n"
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
