"""The bundled price table and `cost_usd(usage, model)`: USD per million tokens, a dated source per entry.

Keys are model strings as users write them (`openai:gpt-4o-mini`); a dated snapshot such as
`openai:gpt-4o-mini-2024-07-18` or `anthropic:claude-sonnet-4-5-20250929` falls back to its undated entry. A run
spec can override or add prices (`overrides`), including a `PREFIX:*` wildcard such as
`{"openai-compatible:*": Price(input=0, output=0)}` to price a local server at zero. Unknown models cost None
(unknown), never a guessed 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from providers.interface import Usage


class Price(BaseModel):
    """What one model charges, USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    """Uncached prompt tokens."""
    cached_input: float | None = Field(default=None, ge=0)
    """Prompt tokens read from the provider's prompt cache; None means billed as `input`."""
    output: float = Field(ge=0)
    """Completion tokens (reasoning tokens included: providers bill them as output)."""
    batch_discount: float = Field(default=0.0, ge=0, le=1)
    """Fraction taken off every rate for batch-API calls (0.5 = half price)."""


def _p(input: float, cached_input: float, output: float) -> Price:
    # Both providers' batch APIs take 50 % off input and output (sources below).
    return Price(input=input, cached_input=cached_input, output=output, batch_discount=0.5)


PRICES: dict[str, Price] = {
    # OpenAI, standard tier; batch 50 % off (openai.com/api/pricing, "Batch API").
    "openai:gpt-5.4": _p(2.50, 0.25, 15.00),  # developers.openai.com/api/docs/pricing as quoted 2026-03
    "openai:gpt-5": _p(1.25, 0.125, 10.00),  # openai.com/api/pricing at the GPT-5 launch, 2025-08-07
    "openai:gpt-5-mini": _p(0.25, 0.025, 2.00),  # idem; cached rate also in GitHub docs models-and-pricing.yml
    "openai:gpt-5-nano": _p(0.05, 0.005, 0.40),  # openai.com/api/pricing, 2025-08-07
    "openai:gpt-4.1": _p(2.00, 0.50, 8.00),  # GitHub docs models-and-pricing.yml, 2026
    "openai:gpt-4.1-mini": _p(0.40, 0.10, 1.60),  # tokenmath.io, "checked Jun 21, 2026"
    "openai:gpt-4.1-nano": _p(0.10, 0.025, 0.40),
    "openai:gpt-4o": _p(2.50, 1.25, 10.00),  # openai.com/api/pricing, unchanged 2024-10 .. 2026
    "openai:gpt-4o-mini": _p(0.15, 0.075, 0.60),  # openai.com/api/pricing, unchanged 2024-07 .. 2026
    "openai:o3": _p(2.00, 0.50, 8.00),  # openai.com/api/pricing after the 2025-06-10 price cut
    "openai:o4-mini": _p(1.10, 0.275, 4.40),  # openai.com/api/pricing, 2025-04-16
    # platform.claude.com/docs/en/about-claude/pricing, "Model pricing" and "Batch processing", 2026-11:
    # cached input = "Cache hits & refreshes"; batch 50 % off.
    "anthropic:claude-opus-4-7": _p(5.00, 0.50, 25.00),
    "anthropic:claude-opus-4-6": _p(5.00, 0.50, 25.00),
    "anthropic:claude-opus-4-5": _p(5.00, 0.50, 25.00),
    "anthropic:claude-opus-4-1": _p(15.00, 1.50, 75.00),
    "anthropic:claude-opus-4-0": _p(15.00, 1.50, 75.00),
    "anthropic:claude-sonnet-5": _p(2.00, 0.20, 10.00),  # platform.claude.com models/sonnet-5 overview, 2026
    "anthropic:claude-sonnet-4-6": _p(3.00, 0.30, 15.00),
    "anthropic:claude-sonnet-4-5": _p(3.00, 0.30, 15.00),
    "anthropic:claude-sonnet-4-0": _p(3.00, 0.30, 15.00),
    "anthropic:claude-haiku-4-5": _p(1.00, 0.10, 5.00),
    "anthropic:claude-3-5-haiku": _p(0.80, 0.08, 4.00),
}

# A snapshot date at the end of a model id: OpenAI writes `-2024-07-18`, Anthropic `-20250929`.
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


def price_for(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model`: an override (exact, then `PREFIX:*`), else the bundled table (exact, then undated).

    Args:
        model: model string as the user wrote it, e.g. `anthropic:claude-haiku-4-5`.
        overrides: prices from the run spec, which win over the bundled table.

    Returns:
        The price, or None when nobody knows it.
    """
    prefix = model.split(":", 1)[0]
    for table in (overrides or {}, PRICES):
        found = table.get(model) or table.get(_SNAPSHOT.sub("", model))
        if found is None and table is not PRICES:
            found = table.get(f"{prefix}:*")
        if found is not None:
            return found
    return None


def cost_usd(usage: Usage, model: str, *, overrides: Mapping[str, Price] | None = None,
             batch: bool = False) -> float | None:
    """What a call cost in USD, or None if the model's price is unknown.

    Args:
        usage: tokens billed; `cached_input_tokens` is the part of `input_tokens` billed at the cached rate.
        model: model string as the user wrote it.
        overrides: prices from the run spec (see `price_for`).
        batch: the call went through the provider's batch API.

    Returns:
        The cost in USD (0.0 for a zero usage), or None for an unknown model.
    """
    price = price_for(model, overrides)
    return None if price is None else cost_at(usage, price, batch=batch)


def cost_at(usage: Usage, price: Price, *, batch: bool = False) -> float:
    """What a call cost in USD at a price already looked up (the gateway looks each model's up once)."""
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    per_million = ((usage.input_tokens - cached) * price.input + cached * cached_rate
                   + usage.output_tokens * price.output)
    factor = 1.0 - price.batch_discount if batch else 1.0
    return per_million * factor / 1_000_000
