"""The sampling settings of the paper's agents: the official values by model.

The official pipeline (`agent/config/model_config.json`, `agent/models/model_router.py`) sends every model
temperature 1.3 and max_tokens 8192, but Claude models temperature 1.0 (the config's value for claude-sonnet-4-5,
the highest Anthropic's API takes) and qwen3-8b no temperature at all (its call leaves it to the provider; it also
sends `enable_thinking: false` in the body, which a run spec gives as that model's `extra_body`). A run's
`[sampling]` or `models[]` values win over these (the runner stamps them on every call); the TravelEval option
`sampling = "provider"` sends none, leaving the provider's defaults.
"""

from __future__ import annotations

from typing import Literal

TEMPERATURE = 1.3
CLAUDE_TEMPERATURE = 1.0
MAX_TOKENS = 8192

SamplingSource = Literal["official", "provider"]
SAMPLING_SOURCES: tuple[SamplingSource, ...] = ("official", "provider")


def official_sampling(model: str) -> tuple[float | None, int]:
    """(temperature, max_tokens) the official agents send `model` (a run's model string, e.g. `openai:gpt-4o`); a
    temperature of None is none sent (qwen3 models)."""
    name = model.lower()
    if "qwen3" in name:
        return None, MAX_TOKENS
    return (CLAUDE_TEMPERATURE if "claude" in name else TEMPERATURE), MAX_TOKENS

