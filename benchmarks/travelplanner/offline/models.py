"""Offline, deterministic models for TravelPlanner: `offline:oracle` and `offline:noisy` (no network, no key).

* `offline:oracle` answers every TravelPlanner prompt as a competent agent would (`oracle.oracle_reply`).
* `offline:noisy` is the oracle with faults injected on purpose, one kind per faulty query, so an error report
  can be checked against known truth. Which fault a query gets is a pure function of the seed and the query text
  (`injected_fault`), so a test or a report can recover it per task. Options ride in the model string:
  `offline:noisy?seed=3&rate=0.6` (the rate is split evenly over the kinds) or per kind,
  `offline:noisy?invalid_action=0.2&same_action=0.1`.

The fault kinds and the terminal status each must produce (`benchmarks.travelplanner.taxonomy`):

| kind | what the model does from its step s on | status |
|---|---|---|
| `invalid_action` | actions no tool knows, each different | `invalid_action_dead_loop` |
| `argument_error` | one tool, bad arguments (date / unknown city / missing one) | `argument_error_dead_loop` |
| `same_action` | repeats its step-s action twice more | `same_action_dead_loop` |
| `max_steps` | only distinct NotebookWrites, never the Planner | `max_steps` |
| `planner_token_limit` | (after a kept result) long NotebookWrites to step 30, then Planner | `planner_token_limit` |
| `unparsable_plan` | prose for the Planner, no JSON for the extraction prompt | `parse_failure` |

(The long NotebookWrites each store the last table again, so the notebook passes the Planner's 12,000 tokens.)

The model itself (`benchmarks.offline.OfflineModel`) is shared with the other benchmarks: this module is the
benchmark's `offline` part, and `RESPONDER` gives the model TravelPlanner's answers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from benchmarks.base import Responder, Task
from benchmarks.offline import NoisyConfig, NoisyOptions
from benchmarks.travelplanner import taxonomy
from benchmarks.travelplanner.offline.oracle import (
    MAX_STEPS,
    NO_ANSWER,
    ReactPrompt,
    oracle_reply,
    read_react_prompt,
    template_fields,
    thought_for,
)
from benchmarks.travelplanner.prompts import EXTRACTION_PREFIX, PLANNER_INSTRUCTION
from benchmarks.travelplanner.query_facts import read_query
from sandbox_index import Sandbox

FAULT_KINDS = ("invalid_action", "argument_error", "same_action", "max_steps", "planner_token_limit",
               "unparsable_plan")
EXPECTED_STATUS = {"invalid_action": taxonomy.INVALID_ACTION_DEAD_LOOP,
                   "argument_error": taxonomy.ARGUMENT_ERROR_DEAD_LOOP,
                   "same_action": taxonomy.SAME_ACTION_DEAD_LOOP, "max_steps": taxonomy.MAX_STEPS,
                   "planner_token_limit": taxonomy.PLANNER_TOKEN_LIMIT, "unparsable_plan": taxonomy.PARSE_FAILURE}
"""Fault kind -> the rollout status the two-stage agent must end with."""
ARGUMENT_TOOLS = ("flights", "attractions", "restaurants", "googleDistanceMatrix")
"""Tools whose failures can stop a run (AccommodationSearch cannot: official quirk, docs/fidelity/travelplanner.md
§4.7)."""
DEFAULT_RATE = 0.6
UNPARSABLE_PLAN = "I am sorry, but I could not put together a travel plan from this information."
NO_JSON = "There is no plan in this text to convert."
_INVALID = ("BookHotel", "SearchFlights", "FindRestaurant", "Lookup", "Browse", "Reserve")
# ~220 one-token words: a NotebookWrite under the agent's 256-token action limit that still fills the notebook
_FILLER = " ".join(("note", "price", "room", "city", "trip", "meal", "day", "plan", "stay", "seat", "road") * 20)


@dataclass(frozen=True, slots=True)
class Fault:
    """The fault injected into one query's rollout."""

    kind: str
    at_step: int
    """The ReAct step where the misbehaviour starts."""
    tool: str | None = None
    """For `argument_error`: the tool called with bad arguments (an official failure-counter key)."""

    @property
    def expected_status(self) -> str:
        return EXPECTED_STATUS[self.kind]


NOISY = NoisyOptions("TravelPlanner", DEFAULT_RATE, FAULT_KINDS)
"""`offline:noisy`'s options: the seed, the rate shared by the fault kinds, and each kind's own rate
(`seed=3&rate=0.6&same_action=0.2`)."""


def injected_fault(query: str, config: NoisyConfig) -> Fault | None:
    """The fault `offline:noisy` injects into the rollout of `query` (None: it behaves as the oracle)."""
    rng = random.Random(f"{config.seed}\x1f{query}")
    roll, total = rng.random(), 0.0
    for kind in FAULT_KINDS:
        total += config.kinds[kind]
        if roll < total:
            # start late enough to be mid-search, early enough that the oracle has not called the Planner yet
            return Fault(kind, rng.randint(2, 9), rng.choice(ARGUMENT_TOOLS) if kind == "argument_error" else None)
    return None


def noisy_reply(prompt: str, config: NoisyConfig) -> str:
    """The noisy model's answer: the oracle's, except where the query's fault says otherwise."""
    react = read_react_prompt(prompt)
    if react is not None:
        fault = injected_fault(react.query, config)
        action = _faulty_action(react, fault) if fault else None
        if action is None:
            return oracle_reply(prompt)
        return action if react.wants == "Action" else thought_for(action)
    planner = template_fields(PLANNER_INSTRUCTION, prompt)
    if planner is not None:
        fault = injected_fault(planner["query"], config)
        if fault and fault.kind == "unparsable_plan":
            return UNPARSABLE_PLAN
    if prompt.startswith(EXTRACTION_PREFIX) and UNPARSABLE_PLAN in prompt:
        return NO_JSON
    return oracle_reply(prompt)


def _faulty_action(react: ReactPrompt, fault: Fault) -> str | None:
    """The action a fault dictates at this step, or None to let the oracle act."""
    n, start = react.next_number, fault.at_step
    attempt = n - start
    facts = read_query(react.query)
    org, dest = facts.org or "Nowhere", facts.dest or "Nowhere"
    if fault.kind == "planner_token_limit":
        if not any(step.action.startswith("NotebookWrite[") for step in react.steps):
            return None
        return f"Planner[{react.query}]" if n >= MAX_STEPS else f"NotebookWrite[Details {n}: {_FILLER}]"
    if n < start or fault.kind == "unparsable_plan":
        return None
    if fault.kind == "invalid_action":
        return f"{_INVALID[attempt % len(_INVALID)]}[{dest} {attempt + 1}]"
    if fault.kind == "same_action":
        repeated = next((s.action for s in react.steps if s.number == start), None)
        return repeated  # None at step s itself: the oracle's action, repeated on the next two steps
    if fault.kind == "max_steps":
        return f"NotebookWrite[Notes {n}]"
    return {  # argument_error: each attempt a different string, or the same-action rule would stop it first
        "flights": f"FlightSearch[{org}, {dest}, 2022/03/{10 + attempt:02d}]",  # DateError
        "attractions": f"AttractionSearch[Atlantis {attempt + 1}]",  # City Error
        "restaurants": f"RestaurantSearch[Atlantis {attempt + 1}]",  # City Error
        "googleDistanceMatrix": f"GoogleDistanceMatrix[{org} to {dest} {attempt + 1}]",  # one argument: Other Error
    }[fault.tool or "flights"]


def reply_for(model: str, prompt: str) -> str:
    """The reply of offline model `model` (`oracle`, `noisy`, `noisy?seed=1`) to a TravelPlanner prompt."""
    NOISY.validate(model)
    name, _, options = model.partition("?")
    return oracle_reply(prompt) if name == "oracle" else noisy_reply(prompt, NOISY.parse(options))


def _explain(tasks: Sequence[Task], strategies: Sequence[str], sandbox: Sandbox) -> list[str | None]:
    from benchmarks.travelplanner.offline.limits import explain  # the tools' code, only when a report asks

    return explain(tasks, strategies, sandbox)


RESPONDER = Responder(NOISY.validate, reply_for, fallback=True, unrecognised=NO_ANSWER, explain=_explain)
"""TravelPlanner's answers; the fallback, since the oracle answers any prompt as an agent would."""


def responder(tasks: Sequence[Task], options: BaseModel | None) -> Responder:
    """TravelPlanner's answers: the prompt holds all they need, so the same for any tasks (`RESPONDER`)."""
    return RESPONDER
