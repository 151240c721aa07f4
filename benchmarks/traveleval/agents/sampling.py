"""The sampling settings of the paper's agents: the official values by model, and which ones a stored run used.

The official pipeline (`agent/config/model_config.json`, `agent/models/model_router.py`) sends every model
temperature 1.3 and max_tokens 8192, but Claude models temperature 1.0 (the config's value for claude-sonnet-4-5,
the highest Anthropic's API takes) and qwen3-8b no temperature at all (its call leaves it to the provider; it also
sends `enable_thinking: false` in the body, which a run spec gives as that model's `extra_body`). A run's
`[sampling]` or `models[]` values win over these (the runner stamps them on every call); the TravelEval option
`sampling = "provider"` sends none, leaving the provider's defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

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


def sampling_used(spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What the paper strategies of a stored TravelEval run sent, per model label: `temperature` and `max_tokens`
    (None: the provider's default), each with its source in `temperature_from` / `max_tokens_from` (`spec`,
    `official` or `provider`).

    Args:
        spec: The run's spec as the results store keeps it (`RunSpec.public_dump()`); a run made before the paper's
            protocol has no `options.sampling` and sent the provider's defaults.
    """
    source: SamplingSource = spec.get("options", {}).get("sampling", "provider")
    defaults = spec.get("sampling") or {}
    used: dict[str, dict[str, Any]] = {}
    for model in spec.get("models", []):
        official = dict(zip(("temperature", "max_tokens"), official_sampling(model["model"]), strict=True))
        entry: dict[str, Any] = {}
        for field in ("temperature", "max_tokens"):
            value = model.get(field) if model.get(field) is not None else defaults.get(field)
            if value is not None:
                entry[field], entry[f"{field}_from"] = value, "spec"
            elif source == "official" and official[field] is not None:
                entry[field], entry[f"{field}_from"] = official[field], "official"
            else:
                entry[field], entry[f"{field}_from"] = None, "provider"
        used[model.get("name") or model["model"]] = entry
    return used
