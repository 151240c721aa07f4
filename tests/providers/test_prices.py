"""`cost_usd` against hand-computed figures, snapshot fallback, overrides and unknown models."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from providers.interface import Usage
from providers.prices import PRICES, Price, cost_usd, price_for


def test_openai_with_cached_input() -> None:
    # gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output per 1M.
    # 800 uncached * 0.15 + 200 cached * 0.075 + 500 out * 0.60 = 120 + 15 + 300 = 435 per 1M -> $0.000435
    usage = Usage(input_tokens=1000, cached_input_tokens=200, output_tokens=500)
    assert cost_usd(usage, "openai:gpt-4o-mini") == pytest.approx(0.000435, abs=1e-12)


def test_anthropic_snapshot_falls_back_and_batch_halves() -> None:
    # claude-sonnet-4-5: $3 in, $15 out. 10,000 * 3 + 2,000 * 15 = 60,000 per 1M -> $0.06; batch -> $0.03
    usage = Usage(input_tokens=10_000, output_tokens=2_000)
    assert cost_usd(usage, "anthropic:claude-sonnet-4-5-20250929") == pytest.approx(0.06)
    assert cost_usd(usage, "anthropic:claude-sonnet-4-5", batch=True) == pytest.approx(0.03)
    assert price_for("openai:gpt-4o-2024-08-06") == PRICES["openai:gpt-4o"]


def test_unknown_models_cost_none_not_zero() -> None:
    usage = Usage(input_tokens=10, output_tokens=10)
    assert cost_usd(usage, "openai:gpt-9-ultra") is None
    assert cost_usd(usage, "openai-compatible:llama@http://localhost:8000/v1") is None
    assert cost_usd(usage, "openai:gpt-4o-mini-high") is None  # no prefix matching across models


def test_overrides_exact_then_wildcard_then_table() -> None:
    usage = Usage(input_tokens=1_000_000, cached_input_tokens=0, output_tokens=1_000_000)
    local = "openai-compatible:llama@http://localhost:8000/v1"
    free = {"openai-compatible:*": Price(input=0, output=0)}
    assert cost_usd(usage, local, overrides=free) == 0.0
    negotiated = {"openai:gpt-4o": Price(input=2.0, output=8.0), "openai:*": Price(input=100, output=100)}
    assert cost_usd(usage, "openai:gpt-4o", overrides=negotiated) == pytest.approx(10.0)
    assert cost_usd(usage, "openai:gpt-4o-mini", overrides=negotiated) == pytest.approx(100 + 100)
    assert cost_usd(usage, "anthropic:claude-haiku-4-5", overrides=negotiated) == pytest.approx(1.0 + 5.0)


def test_cached_rate_defaults_to_input_rate() -> None:
    usage = Usage(input_tokens=1_000_000, cached_input_tokens=1_000_000, output_tokens=0)
    assert cost_usd(usage, "x:y", overrides={"x:y": Price(input=2.0, output=4.0)}) == pytest.approx(2.0)


def test_table_is_consistent() -> None:
    for model, price in PRICES.items():
        assert model.split(":")[0] in ("openai", "anthropic"), model
        assert price.cached_input is not None and price.cached_input < price.input < price.output, model
        assert price.batch_discount == 0.5, model


def test_prices_validate_like_run_spec_fields() -> None:
    with pytest.raises(ValidationError):
        Price(input=-1, output=1)
    with pytest.raises(ValidationError):
        Price.model_validate({"input": 1, "output": 1, "ouput_cached": 1})
