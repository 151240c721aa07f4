"""TravelEval's prompts: tripbench's own texts, and the contract the offline models answer by.

The official repository (onlycwy11/TravelEval) has no license, so none of its prompts is used here: every text in
this module is tripbench's own, written from the facts of the official setup (`agent/main.py`, `agent/strategies/`).

The paper's protocol (the default strategies `direct`, `cot`, `react`, `reflexion`): the model sees what the
official agents see and nothing more, in Chinese as they do (`PAPER_TEXTS["zh"]`; the option `language = "en"` gives
the same content in English). The system message holds a travel-planner role, the strategy's instructions, the
intercity stations the plan must use and the plan format (`paper_system`), the format giving the guidance the
official one gives and the enums it shows, no more; the user message holds the query's uid and its request in
Chinese, as the traveller wrote it, and the strategy's closing sentence (`paper_user`). Not the query's structured
fields, dates, tags or English translation. `reflexion`'s second call (`critique_prompt`) is one system message: the
critique's instructions, the first answer's plan as the model wrote it, and the format.

The tool agents (`react-tools`, `reflexion-tools`, beyond the paper) see the same uid and request, the tools, the
stations and the plan format (`react_prompt`).

The contract (the offline models in `offline/models.py` rely on it, so changes must keep it):

- Every prompt a strategy sends names its query's uid in its last user message (a critique: its one system
  message): a line `Query uid: <uid>` or `查询编号：<uid>` (`find_uid`), or, in a critique prompt, the first plan's
  `"query_uid"`. The offline models look the query up by
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
Language = Literal["zh", "en"]
"""The language of the paper strategies' instructions (`PAPER_TEXTS`)."""
LANGUAGES: tuple[Language, ...] = ("zh", "en")

_PLAN_FORMAT_EN = """\
The plan is one JSON object of this structure (<...> says what a value holds; times "HH:MM", dates "YYYY-MM-DD"):
{
  "query_uid": "<the request's uid, e.g. Txxxx or Gxx-x>",
  "itinerary": {
    "summary": {"total_days": <int: days in all>, "total_travelers": <int: travellers in all>,
                "departure": "<the city the trip starts from>", "destination": "<the city travelled to>",
                "total_budget": <number: the whole budget>, "calculated_total_cost": <number: the cost worked out>,
                "is_within_budget": <bool: whether it is within the budget>},
    "accommodation": {"hotel_name": "<the hotel's name>",
                      "room_type": [<the rooms, one entry per type>: {"type": "单人房" | "大床房" | "双人房" | "家庭房",
                                     "quantity": <int: rooms>, "price_per_night": <number: one night's price>,
                                     "nights": <int: nights stayed>}],
                      "total_cost": <number: the accommodation's whole cost>},
    "intercity_transport": {
      "transport_type": [<the intercity legs>: {"description": "<the leg>", "start_time": "<departure, HH:MM>",
                          "end_time": "<arrival, HH:MM>", "location_name": "<the station arrived at>",
                          "cost": <number: the leg's cost>,
                          "transportation_to": "高铁" | "飞机" | "动车" | "快速" | "特快" | "直达特快",
                          "transportation_cost": <number: the transport's cost>,
                          "details": <the train or flight: number, fare, how many>: {
                              "transport_number": "<train or flight number>", "price": <number: the fare>,
                              "number": <int: how many>}}],
      "total_cost": <number: intercity transport's whole cost>},
    "daily_plans": [{
      "day": <int: which day>, "date": "YYYY-MM-DD", "starting_point": "<where the day starts>",
      "ending_point": {"type": "intercity_transport" | "accommodation", "description": "<where the day ends>",
                       "start_time": "<departure, HH:MM>", "end_time": "<arrival, HH:MM>",
                       "location_name": "<the end: a station or the hotel>", "cost": <number: its cost>,
                       "transportation_to": "步行" | "骑行" | "驾车" | "公交" | "地铁" | "打车" | "包车",
                       "transportation_cost": <number: the transport's cost>,
                       "details": <the transport's details, the keys as for an activity>},
      "activities": [<the day's activities, intercity transport not among them>: {
          "type": "intercity_transport" | "attraction" | "meal" | "accommodation" | "accommodation_check_in"
                  | "accommodation_check_out",
          "description": "<the activity>", "start_time": "<start, HH:MM>", "end_time": "<end, HH:MM>",
          "location_name": "<the place's name>", "cost": <number: what the place itself costs, transport excluded>,
          "transportation_to": "步行" | "骑行" | "驾车" | "公交" | "地铁" | "打车" | "包车",
          "transportation_cost": <number: the transport's cost>,
          "details": <filled in as the activity's type requires>: {
              "transport_time": "<the expected travel time in minutes, e.g. '30' for half an hour>",
              "ticket_type": <the kind of ticket, e.g. sightseeing or day ticket; attractions only, else null>,
              "ticket_price": <number: one ticket's price; attractions only>,
              "ticket_number": <int: tickets; attractions only>,
              "cuisine": <a dish to recommend; meals only>, "line": <the subway line; subway only>,
              "bus_number": <the bus number; bus only>,
              "load_limit": <int: passengers a vehicle takes; taxi or chartered car only>,
              "car_number": <int: vehicles; taxi or chartered car only>}}]
    }],
    "cost_breakdown": {"attractions": <number: attractions in all>,
                       "intercity_transportation": <number: intercity transport in all>,
                       "intracity_transportation": <number: transport within the city in all>,
                       "accommodation": <number: accommodation in all>, "meals": <number: meals in all>,
                       "other": <number: other costs>, "total": <number: everything>}
  }
}"""

_PLAN_FORMAT_ZH = """\
方案是一个如下结构的 JSON 对象（<...> 说明该处填什么；时间写作 "HH:MM"，日期写作 "YYYY-MM-DD"）：
{
  "query_uid": "<这次请求的编号，如 Txxxx 或 Gxx-x>",
  "itinerary": {
    "summary": {"total_days": <整数：一共几天>, "total_travelers": <整数：一共几人>,
                "departure": "<从哪个城市出发>", "destination": "<去哪个城市>",
                "total_budget": <数字：全部预算>, "calculated_total_cost": <数字：算出来的总花费>,
                "is_within_budget": <布尔值：是否没有超出预算>},
    "accommodation": {"hotel_name": "<酒店的名字>",
                      "room_type": [<所订房间，每种房型一项>: {"type": "单人房" | "大床房" | "双人房" | "家庭房",
                                     "quantity": <整数：几间>, "price_per_night": <数字：一晚的价格>,
                                     "nights": <整数：住几晚>}],
                      "total_cost": <数字：住宿一共花多少>},
    "intercity_transport": {
      "transport_type": [<各段城际交通>: {"description": "<这一段行程>", "start_time": "<出发时间 HH:MM>",
                          "end_time": "<到达时间 HH:MM>", "location_name": "<到达的车站>",
                          "cost": <数字：这一段的花费>,
                          "transportation_to": "高铁" | "飞机" | "动车" | "快速" | "特快" | "直达特快",
                          "transportation_cost": <数字：交通的花费>,
                          "details": <车次或航班的信息：编号、票价、张数>: {
                              "transport_number": "<车次或航班号>", "price": <数字：票价>,
                              "number": <整数：张数>}}],
      "total_cost": <数字：城际交通一共花多少>},
    "daily_plans": [{
      "day": <整数：第几天>, "date": "YYYY-MM-DD", "starting_point": "<当天从哪里出发>",
      "ending_point": {"type": "intercity_transport" | "accommodation", "description": "<当天在哪里结束>",
                       "start_time": "<出发时间 HH:MM>", "end_time": "<到达时间 HH:MM>",
                       "location_name": "<终点：车站或酒店>", "cost": <数字：花费>,
                       "transportation_to": "步行" | "骑行" | "驾车" | "公交" | "地铁" | "打车" | "包车",
                       "transportation_cost": <数字：交通的花费>,
                       "details": <交通的详细信息，字段同活动的 details>},
      "activities": [<当天的各项活动，城际交通不列在这里>: {
          "type": "intercity_transport" | "attraction" | "meal" | "accommodation" | "accommodation_check_in"
                  | "accommodation_check_out",
          "description": "<这项活动>", "start_time": "<开始时间 HH:MM>", "end_time": "<结束时间 HH:MM>",
          "location_name": "<地点的名字>", "cost": <数字：只算这个地点本身的花费，不含交通>,
          "transportation_to": "步行" | "骑行" | "驾车" | "公交" | "地铁" | "打车" | "包车",
          "transportation_cost": <数字：交通的花费>,
          "details": <按活动类型填写>: {
              "transport_time": "<路上预计要几分钟，如 '30' 即半小时>",
              "ticket_type": <门票种类，如观光票、一日票；只有景点填写，否则为 null>,
              "ticket_price": <数字：一张门票的价格；只有景点填写>,
              "ticket_number": <整数：门票张数；只有景点填写>,
              "cuisine": <推荐的菜；只有用餐填写>, "line": <地铁几号线；只有乘地铁填写>,
              "bus_number": <公交车路数；只有乘公交填写>,
              "load_limit": <整数：一辆车能坐几人；只有打车或包车填写>,
              "car_number": <整数：几辆车；只有打车或包车填写>}}]
    }],
    "cost_breakdown": {"attractions": <数字：景点合计>, "intercity_transportation": <数字：城际交通合计>,
                       "intracity_transportation": <数字：市内交通合计>, "accommodation": <数字：住宿合计>,
                       "meals": <数字：餐饮合计>, "other": <数字：其他花费>, "total": <数字：全部合计>}
  }
}"""

PLAN_FORMAT = _PLAN_FORMAT_EN
"""The plan format in English, as the tool agents are shown it."""

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

@dataclass(frozen=True, slots=True)
class PaperTexts:
    """The paper strategies' texts in one language (`PAPER_TEXTS`)."""

    role: str
    """The system message's first line: the planner's role."""
    rules: Mapping[PaperKind, str]
    """Each strategy's instructions."""
    closing: Mapping[PaperKind, str]
    """Each strategy's last sentence of the user message (what `prompt_kind` recognises)."""
    uid: str
    """The line naming the query (`find_uid`)."""
    request: str
    """What comes before the traveller's request."""
    stations: str
    """What comes before the intercity stations and airports the plan must use."""
    critique: str
    """`reflexion`'s second call: the critique's task, then `answer_label` and the first answer, then the format."""
    answer_label: str
    plan_format: str


_NAMES_EN = ("Name places by their standard names, as the database spells them (for example 故宫博物院, "
             "上海迪士尼度假区).")
_NAMES_ZH = "请用数据库里的标准名称称呼各个地点（例如 故宫博物院、上海迪士尼度假区）。"
PAPER_TEXTS: Mapping[Language, PaperTexts] = {
    "en": PaperTexts(
        role=("You are an experienced travel planner, and you know every point of interest of the destination city "
              "from a complete database of them."),
        rules={
            "direct": f"Instructions:\n1. Give the plan in exactly the JSON format below.\n2. {_NAMES_EN}",
            "cot": (f"Instructions:\n1. {_NAMES_EN}\n2. Before the final answer, reason it through in plain words, in "
                    "this order: (a) what the travellers need, and which limits (budget, days, group) and preferences "
                    "they state; (b) which transport, hotel, attractions and restaurants fit, and why; (c) a "
                    "day-by-day schedule without clashes; (d) the costs, checked against the budget (change the plan "
                    "if it is over).\n3. Then give the final plan in exactly the JSON format below."),
            "react": (f"Instructions:\n1. {_NAMES_EN}\n2. Work in at most 3 rounds, each written by you as three "
                      "lines:\n   Thought: where the planning stands and what to settle next (e.g. the hotel for the "
                      "first night).\n   Action: the decision or the data the next step needs (e.g. pick a "
                      "family-friendly hotel, add up the costs so far).\n   Observation: your own answer to that step, "
                      "from common sense and reasoning (no tool is run for you).\n3. Once route, hotel, transport and "
                      "budget are all settled, give the final plan in exactly the JSON format below."),
        },
        closing={
            "direct": "Plan this trip now, and answer with valid JSON.",
            "cot": "Show your reasoning first, then give the final plan.",
            "react": ("Begin your Thought / Action / Observation rounds, and end with the plan as JSON in the required "
                      "format."),
        },
        uid=UID_PREFIX, request="Request: ",
        stations="Intercity travel must depart from and arrive at these stations or airports: ",
        critique=("You review travel plans. Reflect critically on the plan below: first (1) what it does well, (2) "
                  "the problems and risks you find (a budget overrun, times too tight, a detour, a poor fit for the "
                  "travellers), (3) what to fix first, in order of priority. After this reflection, write the "
                  "revised plan in exactly the same JSON format."),
        answer_label="The plan:", plan_format=_PLAN_FORMAT_EN),
    "zh": PaperTexts(
        role="你是一位经验丰富的旅行规划师，手里有目的地城市全部兴趣点（景点、酒店、餐厅等）的完整数据库。",
        rules={
            "direct": f"要求：\n1. 只按下面给出的 JSON 格式作答。\n2. {_NAMES_ZH}",
            "cot": (f"要求：\n1. {_NAMES_ZH}\n2. 给出最终答案之前，先用自然语言把思考过程写出来，依次是：（一）旅行者"
                    "需要什么，预算、天数、人数等限制和各项偏好分别是什么；（二）哪些交通、酒店、景点和餐厅合适，理由是"
                    "什么；（三）逐日安排行程，时间上互不冲突；（四）估算各项花费并与预算核对，超出预算就调整方案。\n"
                    "3. 想清楚之后，再按下面的 JSON 格式给出最终方案。"),
            "react": (f"要求：\n1. {_NAMES_ZH}\n2. 最多进行 3 轮，每一轮由你自己写出三行：\n"
                      "   Thought: 规划进行到了哪一步，接下来要解决什么（例如第一晚住在哪里）。\n"
                      "   Action: 下一步需要的决定或数据（例如挑一家适合带孩子的酒店，或算一算目前的总花费）。\n"
                      "   Observation: 凭常识和推理，你自己给出这一步的答案或估算（没有工具替你执行）。\n"
                      "3. 行程、住宿、交通和预算都定下来以后，按下面的 JSON 格式给出最终方案。"),
        },
        closing={
            "direct": "请现在规划这次旅行，并输出合法的 JSON。",
            "cot": "请先写出你的推理过程，再给出最终方案。",
            "react": "请开始 Thought / Action / Observation 的循环，最后按要求的格式输出 JSON 方案。",
        },
        uid="查询编号：", request="旅行者的请求：", stations="这次规划的城际交通只能在以下车站或机场出发和到达：",
        critique=("你是一位旅行方案评审专家。请对下面这份方案做一次批判性的反思：依次写出（1）它做得好的地方；（2）你发现"
                  "的问题和风险，例如预算超支、时间太紧、绕路、不适合这些旅行者；（3）按轻重缓急排好的修改要点。反思"
                  "之后，按完全相同的 JSON 格式写出修改后的方案。"),
        answer_label="方案：", plan_format=_PLAN_FORMAT_ZH),
}
"""The paper strategies' texts: `zh` (the default, as the official prompts are in Chinese) and `en`. Both are
tripbench's own wording of the same content."""
PAPER_CLOSING = PAPER_TEXTS["en"].closing
"""The English closing sentences (kept for callers that name them)."""
CRITIQUE_TASK = PAPER_TEXTS["en"].critique

REACT_TASK = ("Solve this with interleaved Thought and Action steps. Each reply is exactly one step: a line "
              "'Thought: ...' and a line 'Action: <tool> <JSON arguments>'. You will be given the tool's answer as "
              "the next Observation. When you know enough, reply with the action 'finish' followed by the whole plan "
              "as one JSON object.")
REFLECT_TASK = ("Your previous attempt at this trip did not produce an acceptable plan. In a few sentences, say what "
                "went wrong and what you will do differently next time. Answer with the reflection only, no plan.")

_TASKS: tuple[tuple[PromptKind, str], ...] = (
    *(("critique", texts.critique) for texts in PAPER_TEXTS.values()), ("reflect", REFLECT_TASK),
    ("react-tools", REACT_TASK),
    *((kind, texts.closing[kind]) for texts in PAPER_TEXTS.values() for kind in ("react", "cot", "direct")))
_UID_PREFIXES = tuple(texts.uid for texts in PAPER_TEXTS.values())
_UID_IN_PLAN = re.compile(r'"query_uid"\s*:\s*"([^"\\]+)"')
_ACTION = re.compile(r"^[ \t]*Action[ \t]*\d*[ \t]*:[ \t]*([A-Za-z_]+)(.*)", re.MULTILINE | re.DOTALL)
_THOUGHT = re.compile(r"^\s*Thought\s*\d*\s*:\s*", re.IGNORECASE)


def find_uid(prompt: str) -> str | None:
    """The uid a prompt names: its first uid line (`Query uid:` or `查询编号：`), else (a critique) the first
    `"query_uid"` of the plan in it; None when there is neither."""
    for line in prompt.splitlines():
        for prefix in _UID_PREFIXES:
            if line.startswith(prefix):
                return line[len(prefix):].strip() or None
    found = _UID_IN_PLAN.search(prompt)
    return found.group(1) if found else None


def prompt_kind(prompt: str) -> PromptKind | None:
    """Which step a prompt (a last user message) asks for; None for a prompt not made here."""
    if find_uid(prompt) is None:
        return None
    return next((kind for kind, task in _TASKS if task in prompt), None)


def stations_text(stations: Iterable[str], language: Language = "en") -> str:
    """The intercity stations and airports a plan must use, one line (the official prompts name them too)."""
    return PAPER_TEXTS[language].stations + "、".join(stations)


def paper_system(kind: PaperKind, stations: Iterable[str], language: Language = "zh") -> str:
    """The system message of a paper strategy: role, the strategy's instructions, stations, plan format."""
    texts = PAPER_TEXTS[language]
    return (f"{texts.role}\n\n{texts.rules[kind]}\n\n{stations_text(stations, language)}\n\n"
            f"{texts.plan_format}")


def paper_user(query: Mapping[str, Any], kind: PaperKind, language: Language = "zh") -> str:
    """The user message of a paper strategy: the query's uid and its request in Chinese, and the closing sentence."""
    return f"{request_text(query, language)}\n\n{PAPER_TEXTS[language].closing[kind]}"


def critique_prompt(first_answer: str, language: Language = "zh") -> str:
    """`reflexion`'s second call, sent as a lone system message as the official one is: the critique's task, the
    first answer's plan as the model wrote it (`plan.plan_text`), and the plan format. It shows neither the request
    nor the stations, as the official critique does not."""
    texts = PAPER_TEXTS[language]
    return f"{texts.critique}\n\n{texts.answer_label}\n{first_answer}\n\n{texts.plan_format}"


def request_text(query: Mapping[str, Any], language: Language = "en") -> str:
    """What every prompt tells of the query: its uid and the request as the traveller wrote it (in Chinese)."""
    texts = PAPER_TEXTS[language]
    return f"{texts.uid}{query.get('uid', '')}\n{texts.request}{query.get('nature_language', '')}"


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
