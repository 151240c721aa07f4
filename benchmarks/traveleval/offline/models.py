"""TravelEval's answers for the offline models: `offline:oracle` gives the plan `plan_builder` builds from the sandbox,
`offline:noisy[?seed=N&rate=R]` the same plan with one known mistake in a share `rate` of the queries (`mistakes`).

A prompt is recognised by the uid it names (`prompts.find_uid`), looked up among the queries of the tasks the models
are built from, or the data home's with no tasks (`known`); the plan comes from their data folder's sandbox. This
module is the benchmark's `offline` part (`responder`).

How each step's prompt is answered (`prompts.prompt_kind`):
* `direct`: the plan in a ```json fence;
* `cot`: a few lines of reasoning (the legs, hotel and days chosen), then the plan;
* `react` (the paper's single call): three Thought / Action / Observation rounds it writes itself, then the plan;
* `critique` (reflexion's second call): a short critique, then the same plan (these models do not learn);
* `react-tools`: one look-up of the destination's attractions at the first step, then `finish` with the plan;
* `reflect`: one sentence of reflection (the next attempt gives the same plan).
A query the sandbox has no leg or hotel for gets a sentence saying so (a parse failure, as a real model's would be).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmarks.base import Responder, Task
from benchmarks.traveleval import paths, prompts
from benchmarks.traveleval.benchmark import data_dir_of
from benchmarks.traveleval.offline.known import KnownQueries, query_key
from benchmarks.traveleval.offline.mistakes import NOISY, noisy_plan
from benchmarks.traveleval.offline.plan_builder import build_plan, cost_floor
from benchmarks.traveleval.sandbox.build import ensure_index
from benchmarks.traveleval.sandbox.sandbox import Sandbox

NO_PLAN = "I could not find an intercity connection or a hotel for this trip, so I cannot give a plan."
REFLECTION = "I will check every preference, the opening hours and the costs against the budget before answering."
CRITIQUE = ("1. Strengths: the legs, the hotel and the days fit the request.\n2. Problems: none that I can see.\n"
            "3. Priorities: keep the plan as it is.")
FIRST_STEP = "Steps so far: none yet."
"""How a ReAct prompt with no step yet ends (`prompts.react_prompt`)."""

class Planner:
    """The offline models' plans for the queries of one data folder. It owns the folder's sandbox, opened at the first
    plan, and the last `PLANS_KEPT` plans built (asked for again by each step of an agent); `close` releases both
    (a later plan opens the sandbox again: a mock server answers several runs' prompts, each run closing its own)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()
        self.plan_text = lru_cache(maxsize=PLANS_KEPT)(self._plan_text)

    def sandbox(self) -> Sandbox:
        """The folder's sandbox (built first if missing or stale), opened once until `close`."""
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox.open(ensure_index(self.folder))
            return self._sandbox

    def _plan_text(self, key: str, model: str) -> str | None:
        """The model's plan for a query as compact JSON (None: no plan), built once for all the steps that ask."""
        query = json.loads(key)
        sandbox = self.sandbox()
        name, _, options = model.partition("?")
        plan = build_plan(sandbox, query) if name == "oracle" else noisy_plan(sandbox, query, NOISY.parse(options))[0]
        return None if plan is None else json.dumps(plan, ensure_ascii=False, separators=(",", ":"))

    def close(self) -> None:
        """Closes the sandbox and forgets the plans."""
        with self._lock:
            sandbox, self._sandbox = self._sandbox, None
        self.plan_text.cache_clear()
        if sandbox is not None:
            sandbox.close()


PLANS_KEPT = 256
"""Plans a `Planner` keeps as text."""


def _reasoning(plan: Mapping[str, Any]) -> str:
    itinerary = plan["itinerary"]
    legs = itinerary["intercity_transport"]["transport_type"]
    days = "; ".join(f"day {day['day']}: " + ", ".join(a["location_name"] for a in day["activities"]
                                                        if a["type"] in ("attraction", "meal"))
                     for day in itinerary["daily_plans"])
    summary = itinerary["summary"]
    return (f"1. Legs: {' and '.join(leg['details']['transport_number'] for leg in legs)}.\n"
            f"2. Hotel: {itinerary['accommodation']['hotel_name']}.\n3. Days: {days}.\n"
            f"4. Cost {summary['calculated_total_cost']:.0f} against a budget of {summary['total_budget']}.")


def reply_for(known: KnownQueries, planner: Planner, model: str, prompt: str) -> str | None:
    """The offline model's answer to a TravelEval prompt of a known query (None: not one), planned by `planner` (over
    the known queries' data folder)."""
    uid = prompts.find_uid(prompt)
    kind = prompts.prompt_kind(prompt)
    query = known.query_for(uid, prompt) if uid is not None and kind is not None else None
    if query is None or kind is None:
        return None
    validate(model)
    if kind == "reflect":
        return REFLECTION
    if kind == "react-tools" and prompt.rstrip().endswith(FIRST_STEP):
        return prompts.format_action("search_attractions", {"city": query["target_city"]},
                                     thought="First I look at what there is to see at the destination.")
    text = planner.plan_text(query_key(query), model)
    if text is None:
        return NO_PLAN if kind != "react-tools" else prompts.format_finish(NO_PLAN, thought="No plan is possible.")
    if kind == "react-tools":
        return prompts.format_finish(text, thought="I have what I need for the plan.")
    fenced = f"```json\n{text}\n```"
    if kind == "direct":
        return fenced
    plan = json.loads(text)
    before = _reasoning(plan) if kind == "cot" else _rounds(plan) if kind == "react" else CRITIQUE
    return f"{before}\n\n{fenced}"


def _rounds(plan: Mapping[str, Any]) -> str:
    """The paper's ReAct call: three rounds the model writes itself, observations included."""
    itinerary = plan["itinerary"]
    legs = " and ".join(leg["details"]["transport_number"]
                        for leg in itinerary["intercity_transport"]["transport_type"])
    hotel = itinerary["accommodation"]["hotel_name"]
    cost = itinerary["summary"]["calculated_total_cost"]
    return (f"Thought: first the journey there and back.\nAction: choose the trains or flights.\nObservation: {legs}.\n"
            f"Thought: then a hotel for the group.\nAction: choose a hotel.\nObservation: {hotel}.\n"
            f"Thought: then the days and the costs.\nAction: schedule the days and add up the costs.\n"
            f"Observation: {len(itinerary['daily_plans'])} days, {cost:.0f} in all.")


def explain(tasks: Sequence[Task], strategies: Sequence[str], sandbox: Sandbox) -> list[str | None]:
    """Why the oracle's plan cannot pass each task (whatever the strategy: every one plans from the sandbox): a
    budget below what the cheapest allowed legs and rooms alone cost (`plan_builder.cost_floor`), or no allowed leg
    or hotel at all."""
    reasons: list[str | None] = []
    for task in tasks:
        floor = cost_floor(sandbox, task.input)
        budget = float(task.input["budget"])
        if floor is None:
            reasons.append("the sandbox has no allowed intercity leg or hotel for this trip")
        elif floor > budget:
            reasons.append(f"the budget ({budget:,.0f}) is below what the cheapest allowed legs and rooms alone cost "
                           f"({floor:,.0f}): no plan keeping the other constraints meets it")
        elif (plan := build_plan(sandbox, task.input)) and not (summary := plan["itinerary"]["summary"])[
                "is_within_budget"]:
            cost = float(summary["calculated_total_cost"])
            reasons.append(f"the oracle's plan (legs, rooms, meals, visits) costs {cost:,.0f}, over the budget of "
                           f"{budget:,.0f}, and so does its thrifty variant")
        else:
            reasons.append(None)
    return reasons


validate = NOISY.validate


def responder(tasks: Sequence[Task], options: BaseModel | None) -> Responder:
    """TravelEval's answers to the prompts of `tasks`, from the sandbox of the options' data folder; with no tasks and
    no options (a mock server with no run behind it), to those of the data home's queries. The responder owns its
    `Planner`: closing it closes the sandbox."""
    if options is None and not tasks:
        known = KnownQueries.in_data_home(paths.data_dir())
    else:
        known = KnownQueries(tasks, data_dir_of(options) if options is not None else paths.data_dir())
    planner = Planner(known.folder)
    return Responder(validate, partial(reply_for, known, planner), explain=explain, close=planner.close)
