"""What the official agents share: the Planner tool (docs/fidelity/travelplanner.md §3.8), `format_step` and the
prompt-token rule.

Every official agent counts prompt tokens with tiktoken's encoding for `gpt-3.5-turbo` (cl100k_base,
docs/fidelity/travelplanner.md §4.2), whatever model it drives; we count with the same ranks, loaded offline
(`providers.tokens`).
"""

from __future__ import annotations

import string
from collections.abc import Callable

from providers.interface import ChatModel, ChatRequest, Message
from providers.stages import PLANNER, stage
from providers.tokens import count_text_tokens

PLANNER_TOKEN_LIMIT = 12_000
"""Prompt tokens above which the Planner answers `Max Token Length Exceeded.` without calling the LLM (§3.8)."""
PLANNER_TOKEN_LIMIT_ANSWER = "Max Token Length Exceeded."
PLANNER_MAX_TOKENS = 4096
"""The Planner LLM's `max_tokens`, temperature 0 (docs/fidelity/travelplanner.md §3.8)."""


def format_step(text: str) -> str:
    """Normalises one LLM output as the official agents do: strip, then delete every newline
    (docs/fidelity/travelplanner.md §4.2)."""
    return text.strip("\n").strip().replace("\n", "")


def count_tokens(text: str) -> int:
    """cl100k tokens of a prompt, as the official length checks count them.

    Special-token strings (`<|endoftext|>`) count as plain text: tiktoken's default would raise on them, which in
    the official code would stop the run on a model output that merely quotes one.
    """
    return count_text_tokens(text)


def over_token_limit(text: str, limit: int) -> bool:
    """Whether `count_tokens(text) > limit`, without counting a text of at most `limit` UTF-8 bytes: every cl100k
    token stands for one byte or more, so such a text cannot exceed it (most ReAct prompts, in a tenth of the time,
    and a replay from the cache may never load the encoding). An ASCII text's length is its size in bytes (and
    `isascii` does not read the text)."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return size > limit and count_tokens(text) > limit


def template_parts(template: str, *fields: str) -> tuple[str, ...]:
    """The fixed texts of a `str.format` template around its fields: `parts[0] + value_0 + parts[1] + ... +
    parts[-1]` is `template.format(...)` for string values, in a tenth of the time for a long template, since
    `format` reads the template again on every call (an agent's prompt is rebuilt for each of its calls).

    Raises:
        ValueError: the template's fields are not exactly `fields`, in that order, each plain (`{name}`).
    """
    parsed = list(string.Formatter().parse(template))
    names = tuple(name for _, name, _, _ in parsed if name is not None)
    if names != fields or any(spec or conversion for _, name, spec, conversion in parsed if name is not None):
        raise ValueError(f"template fields {names}, expected {fields} (plain, in order)")
    literals = [""]
    for literal, name, _, _ in parsed:  # an escaped brace comes as a piece of its own: joined to its neighbours
        literals[-1] += literal
        if name is not None:
            literals.append("")
    return tuple(literals)


def halt_reason(step: int, max_steps: int, prompt: Callable[[], str], max_prompt_tokens: int) -> str | None:
    """Why an official loop halts before `step`: `max_steps`, then `token_limit` (docs/fidelity/travelplanner.md §4.4,
    §5), else None.

    Args:
        step: The 1-based number of the step about to run.
        max_steps: The step limit (30).
        prompt: Builds the prompt the next call would send (only built when the step limit is not reached).
        max_prompt_tokens: The prompt-length limit.
    """
    if step > max_steps:
        return "max_steps"
    if over_token_limit(prompt(), max_prompt_tokens):
        return "token_limit"
    return None


def user_request(prompt: str, *, max_tokens: int | None, stop: tuple[str, ...] = (),
                 temperature: float | None = 0.0) -> ChatRequest:
    """One chat call with the prompt as a single user message, as every official agent sends it
    (docs/fidelity/travelplanner.md §4.3)."""
    return ChatRequest(model="", messages=(Message("user", prompt),), temperature=temperature,
                       max_tokens=max_tokens, stop=stop)


async def run_planner(model: ChatModel, template: str, text: str, query: str,
                      *, max_prompt_tokens: int = PLANNER_TOKEN_LIMIT) -> str:
    """The Planner tool: one call with `template` formatted with the given information and query
    (docs/fidelity/travelplanner.md §3.8).

    Args:
        model: The rollout's model.
        template: `PLANNER_INSTRUCTION` (two-stage, direct) or `COT_PLANNER_INSTRUCTION` (cot).
        text: The information: `str(notebook.list_all())` in two-stage mode, the reference information in
            sole-planning mode.
        query: The query (in two-stage mode, the agent's own `Planner[...]` argument, docs/fidelity/travelplanner.md
        §4.5).
        max_prompt_tokens: Official 12,000 (the Gemini branch has no limit).

    Returns:
        The model's reply unchanged, or `Max Token Length Exceeded.` when the prompt is too long (no call made).
    """
    prompt = template.format(text=text, query=query)
    if over_token_limit(prompt, max_prompt_tokens):
        return PLANNER_TOKEN_LIMIT_ANSWER
    with stage(PLANNER):  # the call `batch = "planner"` sends through a batch API
        response = await model.complete(user_request(prompt, max_tokens=PLANNER_MAX_TOKENS))
    return response.text
