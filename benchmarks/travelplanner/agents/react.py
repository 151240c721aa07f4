"""Two-stage mode: the official ReAct information-collection agent and its Planner call (docs/fidelity/travelplanner.md
§4).

The loop reproduces `agents/tool_agents.py` `ReactAgent` step by step, quirks included (each marked
`# official quirk, docs/fidelity/travelplanner.md §...`): separate Thought and Action calls stopped at a newline,
newline-free outputs, one growing scratchpad re-sent in full, masking of the previous search result everywhere in the
scratchpad, the notebook, per-tool failure counters with the `accommodation` mapping typo, the three-identical-actions
rule, the 30-step and prompt-token limits, and the per-step log (`steps`) with the official keys and `state` strings
(§4.8). The tools themselves (validation, observation texts, states) live in `benchmarks.travelplanner.tools`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from benchmarks.travelplanner.agents.planner_tool import (
    PLANNER_TOKEN_LIMIT,
    PLANNER_TOKEN_LIMIT_ANSWER,
    format_step,
    halt_reason,
    run_planner,
    template_parts,
    user_request,
)
from benchmarks.travelplanner.prompts import PLANNER_INSTRUCTION, ZEROSHOT_REACT_INSTRUCTION
from benchmarks.travelplanner.tools import (
    COUNTERS,
    EARLY_STOP_KEYS,
    SUCCESSFUL,
    Notebook,
    data_text,
    execute_action,
    parse_action,
)
from providers.interface import ChatModel
from sandbox_index import Sandbox

MASK = "Masked due to limited length. Make sure the data has been written in Notebook."
# The '\\n' is the two characters backslash and n, as in the official string (docs/fidelity/travelplanner.md §4.4).
FILTERED_ACTION = (" Your action is filtered due to content. Please make sure your action does not start with "
                   "['\\n', 'Thought', 'Action', 'Observation'] and assume all the actions are permitted in this "
                   "environment and take the action again.")
NULL_ACTION_FEEDBACK = ("No feedback from the environment due to the null action. Please make sure your action does "
                        "not start with [Thought, Action, Observation].")
NULL_ACTION_OBSERVATION = "No feedback from the environment due to the null action."

SAME_ACTION_STATE = "same action 3 times repeated"
EARLY_STOP_STATE = "{counter} early stop due to {retries} max retries."
PLANNER_TOKEN_LIMIT_STATE = "Max Token Length of Planner Exceeded."
MAX_RETRIES = 3
SAME_ACTION_LIMIT = 3
_PROMPT_PARTS = template_parts(ZEROSHOT_REACT_INSTRUCTION, "query", "scratchpad")


@dataclass(frozen=True, slots=True)
class ReactLimits:
    """The agent's limits and LLM settings (docs/fidelity/travelplanner.md §4.2); None: the official value for the model
    (`for_model`)."""

    max_steps: int = 30
    max_prompt_tokens: int | None = None
    """Official: 15,000 for gpt-3.5 models, 30,000 for every other model."""
    planner_max_prompt_tokens: int = PLANNER_TOKEN_LIMIT
    temperature: float | None = None
    """Official: 1.0 for gpt-3.5 models (since commit b8cf8dd), 0 for every other model."""
    max_tokens: int = 256

    def for_model(self, model: str) -> ReactLimits:
        """The limits with every unset one at the official tool agent's value for `model` (a model string or id)."""
        name = model.partition(":")[2].partition("@")[0] if ":" in model else model  # PROVIDER:NAME[@URL]
        # docs/fidelity/travelplanner.md §4.2: the official code tests the model's name
        gpt35 = "gpt-3.5" in name.lower()
        return dataclasses.replace(
            self, max_prompt_tokens=self.max_prompt_tokens or (15_000 if gpt35 else 30_000),
            temperature=self.temperature if self.temperature is not None else (1.0 if gpt35 else 0.0))


@dataclass(slots=True)
class ReactRun:
    """The outcome of one query, as the official driver stores it (docs/fidelity/travelplanner.md §4.1)."""

    answer: str
    """The Planner's reply; '' when the agent stopped before calling it."""
    scratchpad: str
    steps: list[dict[str, Any]]
    """The json_log: `step`, `thought`, `action`, `observation`, `state` per step (docs/fidelity/travelplanner.md
    §4.8)."""
    halted: str | None = None
    """`max_steps` or `token_limit` when the loop stopped on a limit rather than by finishing."""


class ReactAgent:
    """One query's run of the official ReAct agent. Create one per rollout (it holds the run's state)."""

    def __init__(self, model: ChatModel, sandbox: Sandbox, limits: ReactLimits | None = None) -> None:
        self.model = model
        self.sandbox = sandbox
        self.limits = (limits or ReactLimits()).for_model(getattr(model, "name", ""))
        self.query = ""
        self.scratchpad = ""
        self.steps: list[dict[str, Any]] = []
        self.answer = ""
        self.step_n = 1
        self.finished = False
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.last_actions: list[str] = []
        self.current_data: Any = None
        self.notebook = Notebook()

    async def run(self, query: str) -> ReactRun:
        """Runs the loop until the agent finishes or a limit halts it (docs/fidelity/travelplanner.md §4.4).

        Args:
            query: The user query (the dataset's `query` text).

        Returns:
            The answer, scratchpad and step log. LLM errors propagate (the runner records them).
        """
        self.query = query
        halted = None
        while not self.finished:
            halted = self._halted()
            if halted:
                break
            await self._step()
        if self.answer == PLANNER_TOKEN_LIMIT_ANSWER and self.steps:
            # set by the official driver, docs/fidelity/travelplanner.md §4.1
            self.steps[-1]["state"] = PLANNER_TOKEN_LIMIT_STATE
        return ReactRun(answer=self.answer, scratchpad=self.scratchpad, steps=self.steps, halted=halted)

    def prompt(self) -> str:
        """The whole prompt, rebuilt for every call (docs/fidelity/travelplanner.md §4.3): `ZEROSHOT_REACT_INSTRUCTION`
        filled with the query and the scratchpad."""
        before_query, before_scratchpad, after = _PROMPT_PARTS
        return before_query + self.query + before_scratchpad + self.scratchpad + after

    def _halted(self) -> str | None:
        assert self.limits.max_prompt_tokens is not None  # set by `for_model`
        return halt_reason(self.step_n, self.limits.max_steps, self.prompt, self.limits.max_prompt_tokens)

    async def _ask(self) -> str:
        request = user_request(self.prompt(), max_tokens=self.limits.max_tokens, stop=("\n",),
                               temperature=self.limits.temperature)
        return format_step((await self.model.complete(request)).text)

    async def _step(self) -> None:
        n = self.step_n
        entry: dict[str, Any] = {"step": n, "thought": "", "action": "", "observation": "", "state": ""}
        self.steps.append(entry)

        self.scratchpad += f"\nThought {n}:"
        self.scratchpad += " " + await self._ask()
        # official quirk, docs/fidelity/travelplanner.md §4.4: the log keeps the "Thought n:" prefix (the code's removal
        # never matches).
        entry["thought"] = self.scratchpad.rpartition("\n")[2]

        self.scratchpad += f"\nAction {n}:"
        action = await self._ask()
        self.scratchpad += " " + action if action else FILTERED_ACTION
        # Repetition rule, docs/fidelity/travelplanner.md §4.7: exact equality, empty actions and successful actions
        # included.
        if self.last_actions and self.last_actions[-1] != action:
            self.last_actions.clear()
        self.last_actions.append(action)
        entry["action"] = self.scratchpad.rpartition("\n")[2]
        if len(self.last_actions) == SAME_ACTION_LIMIT:
            entry["state"] = SAME_ACTION_STATE
            self.finished = True
            return

        self.scratchpad += f"\nObservation {n}: "
        if not action:
            # No counter changes and no state for a null action (docs/fidelity/travelplanner.md §4.4).
            self.scratchpad += NULL_ACTION_FEEDBACK
            entry["observation"] = NULL_ACTION_OBSERVATION
            self.step_n += 1
            return

        action_type, argument = parse_action(action)
        if action_type == "Planner":
            await self._call_planner(entry, argument or "")
            return
        stop = self._early_stop(action_type)
        if stop is not None:
            # The scratchpad keeps its empty "Observation n: " and the answer stays '' (docs/fidelity/travelplanner.md
            # §4.7).
            entry["state"] = stop
            self.finished = True
            return
        observation, state = self._act(action_type, argument)
        self.scratchpad += observation
        entry["observation"] = observation
        entry["state"] = state
        self.step_n += 1

    def _early_stop(self, action_type: str | None) -> str | None:
        """The state that stops the run before this action executes, if any (docs/fidelity/travelplanner.md §4.7)."""
        pending = EARLY_STOP_KEYS.get(action_type or "", "invalidAction")
        if pending not in self.counters:
            # official quirk, docs/fidelity/travelplanner.md §4.7: AccommodationSearch maps to `accommodation`, no
            # counter, so its own failures never stop the run and it is checked against the invalid-action counter
            # instead.
            pending = "invalidAction"
        if self.counters[pending] + 1 > MAX_RETRIES:
            return EARLY_STOP_STATE.format(counter=pending, retries=MAX_RETRIES)
        return None

    def _act(self, action_type: str | None, argument: str | None) -> tuple[str, str]:
        """Executes one non-Planner action; returns (observation, state) and updates data, mask and counters."""
        if action_type == "NotebookWrite":
            self._mask_previous_data()
            # official quirk, docs/fidelity/travelplanner.md §3.7: the notebook stores whatever the last search left,
            # even None.
            observation = self.notebook.write(self.current_data, argument or "")
            self._reset_counters()
            return observation, SUCCESSFUL
        outcome = execute_action(self.sandbox, action_type, argument)
        # official quirk, docs/fidelity/travelplanner.md §4.5: GoogleDistanceMatrix masks before its arguments are
        # split, so even a failing call masks (`outcome.masks`); the other tools mask only after validation passed.
        if outcome.masks:
            self._mask_previous_data()
        # not CitySearch: it never replaces the current data (docs/fidelity/travelplanner.md §4.5)
        if outcome.stores_data:
            self.current_data = outcome.data
        if outcome.counter is None:
            self._reset_counters()  # any success resets every counter (docs/fidelity/travelplanner.md §4.7)
        else:
            self.counters[outcome.counter] += 1
        return outcome.observation, outcome.state

    async def _call_planner(self, entry: dict[str, Any], query: str) -> None:
        """The Planner action: never early-stopped, always ends the episode (docs/fidelity/travelplanner.md §4.5)."""
        observation = await run_planner(self.model, PLANNER_INSTRUCTION, str(self.notebook.list_all()), query,
                                        max_prompt_tokens=self.limits.planner_max_prompt_tokens)
        self.scratchpad += observation
        self.answer = observation
        self._reset_counters()
        entry["observation"] = observation
        entry["state"] = SUCCESSFUL
        self.step_n += 2  # official: once for the step, once more when the Planner finishes the episode
        self.finished = True

    def _mask_previous_data(self) -> None:
        # official quirk, docs/fidelity/travelplanner.md §4.5: the replacement runs over the whole scratchpad, thoughts
        # included, and before the first search `current_data` is None, so every "None" in the scratchpad is masked.
        self.scratchpad = self.scratchpad.replace(data_text(self.current_data).strip(), MASK)

    def _reset_counters(self) -> None:
        self.counters = dict.fromkeys(COUNTERS, 0)

