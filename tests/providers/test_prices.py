"""`PriceTable.cost_usd` against hand-computed figures, snapshot fallback, overrides and unknown models; the
LiteLLM table."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from errors import DataError
from providers.interface import Usage
from providers.prices import Price, bundled_table, from_litellm

TABLE = bundled_table()
"""The snapshot shipped with tripbench (no data home's table here)."""


def test_openai_with_cached_input() -> None:
    # gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output per 1M.
    # 800 uncached * 0.15 + 200 cached * 0.075 + 500 out * 0.60 = 120 + 15 + 300 = 435 per 1M -> $0.000435
    usage = Usage(input_tokens=1000, cached_input_tokens=200, output_tokens=500)
    assert TABLE.cost_usd(usage, "openai:gpt-4o-mini") == pytest.approx(0.000435, abs=1e-12)


def test_anthropic_snapshot_falls_back_and_batch_halves() -> None:
    # claude-sonnet-4-5: $3 in, $15 out. 10,000 * 3 + 2,000 * 15 = 60,000 per 1M -> $0.06; batch -> $0.03
    usage = Usage(input_tokens=10_000, output_tokens=2_000)
    assert TABLE.cost_usd(usage, "anthropic:claude-sonnet-4-5-20250929") == pytest.approx(0.06)
    assert TABLE.cost_usd(usage, "anthropic:claude-sonnet-4-5", batch=True) == pytest.approx(0.03)
    assert TABLE.price_for("openai:gpt-4o-2024-01-01") == TABLE.models["openai:gpt-4o"]


def test_unknown_models_cost_none_not_zero() -> None:
    usage = Usage(input_tokens=10, output_tokens=10)
    assert TABLE.cost_usd(usage, "openai:gpt-9-ultra") is None
    assert TABLE.cost_usd(usage, "openai-compatible:llama@https://llm.example.com/v1") is None
    assert TABLE.cost_usd(usage, "openai:gpt-4o-mini-high") is None  # no prefix matching across models


@pytest.mark.parametrize("url", ["http://localhost:8000/v1", "http://127.0.0.1:8080/v1", "http://[::1]:1234/v1",
                                 "http://192.168.1.20:11434/v1", "http://gpu-box:8000/v1"])
def test_a_server_on_the_users_own_machines_costs_nothing_unless_told(url: str) -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert TABLE.cost_usd(usage, f"openai-compatible:llama@{url}") == 0.0
    assert TABLE.cost_usd(usage, f"openai-compatible:@{url}") == 0.0  # the server's only model
    told = {f"openai-compatible:llama@{url}": Price(input=0.1, output=0.2)}  # a cluster's cost per token, say
    assert TABLE.cost_usd(usage, f"openai-compatible:llama@{url}", overrides=told) == pytest.approx(0.3)


def test_overrides_exact_then_wildcard_then_table() -> None:
    usage = Usage(input_tokens=1_000_000, cached_input_tokens=0, output_tokens=1_000_000)
    local = "openai-compatible:llama@http://localhost:8000/v1"
    free = {"openai-compatible:*": Price(input=0, output=0)}
    assert TABLE.cost_usd(usage, local, overrides=free) == 0.0
    negotiated = {"openai:gpt-4o": Price(input=2.0, output=8.0), "openai:*": Price(input=100, output=100)}
    assert TABLE.cost_usd(usage, "openai:gpt-4o", overrides=negotiated) == pytest.approx(10.0)
    assert TABLE.cost_usd(usage, "openai:gpt-4o-mini", overrides=negotiated) == pytest.approx(100 + 100)
    assert TABLE.cost_usd(usage, "anthropic:claude-haiku-4-5", overrides=negotiated) == pytest.approx(1.0 + 5.0)


def test_cached_rate_defaults_to_input_rate() -> None:
    usage = Usage(input_tokens=1_000_000, cached_input_tokens=1_000_000, output_tokens=0)
    assert TABLE.cost_usd(usage, "x:y", overrides={"x:y": Price(input=2.0, output=4.0)}) == pytest.approx(2.0)


def test_the_bundled_snapshot_prices_the_models_users_run_online_and_in_batches() -> None:
    models = TABLE.models
    providers = {model.partition(":")[0] for model in models}
    assert len(models) > 3000 and len(providers) > 50 and {"openai", "anthropic", "together_ai"} <= providers
    for model in ("openai:gpt-4o-mini", "openai:gpt-4.1", "openai:gpt-5", "anthropic:claude-sonnet-4-5",
                  "anthropic:claude-haiku-4-5", "anthropic:claude-opus-4-7"):
        price = models[model]
        online, batch = price.rates(), price.rates(batch=True)
        assert price.cached_input is not None and price.cached_input < price.input < price.output, model
        assert batch == pytest.approx(tuple(rate / 2 for rate in online)), model  # both APIs: half of every rate


LITELLM_SAMPLE = {
    "sample_spec": {"mode": "chat", "input_cost_per_token": 0.0},
    "openai/gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 9.0,
                      "output_cost_per_token": 9.0},
    "gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 2.5e-06,
               "output_cost_per_token": 1e-05, "cache_read_input_token_cost": 1.25e-06,
               "input_cost_per_token_batches": 1.25e-06, "output_cost_per_token_batches": 5e-06,
               "deprecation_date": "2027-01-14"},
    "claude-haiku-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 1e-06,
                         "output_cost_per_token": 5e-06},
    "text-embedding-3-small": {"litellm_provider": "openai", "mode": "embedding", "input_cost_per_token": 2e-08},
    "together_ai/meta-llama/Llama-3-8b": {"litellm_provider": "together_ai", "mode": "chat",
                                          "input_cost_per_token": 1e-07, "output_cost_per_token": 2e-07},
    "us.amazon.nova-pro": {"litellm_provider": "bedrock", "mode": "chat", "input_cost_per_token": 8e-07,
                           "output_cost_per_token": 3.2e-06},
    "deepinfra/free": {"litellm_provider": "deepinfra", "mode": "chat", "input_cost_per_token": 0},
}


def test_litellm_entries_become_prices_per_million_tokens() -> None:
    table = from_litellm(LITELLM_SAMPLE, "sample")
    assert table.models == {  # `openai/gpt-4o` is an alias: OpenAI's own `gpt-4o` entry wins, wherever it stands
        "anthropic:claude-haiku-4-5": Price(input=1.0, output=5.0),
        "bedrock:us.amazon.nova-pro": Price(input=0.8, output=3.2),
        "openai:gpt-4o": Price(input=2.5, cached_input=1.25, output=10.0, batch_input=1.25, batch_output=5.0,
                               deprecation_date=date(2027, 1, 14)),  # kept: a retired model is named before a run
        "together_ai:meta-llama/Llama-3-8b": Price(input=0.1, output=0.2),
    }
    with pytest.raises(DataError, match="not LiteLLM's price list"):
        from_litellm({"x": {"mode": "chat"}}, "elsewhere.json")


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from runner.cli.main import main; main()", *args],
                          capture_output=True, text=True, check=False, env={"TRIPBENCH_HOME": str(home),
                                                                            "PATH": "/usr/bin:/bin"})


def test_prices_update_refreshes_the_table_and_a_bad_download_keeps_it(file_server: tuple[str, Path],
                                                                     tmp_path: Path) -> None:
    url, served = file_server
    cheaper = {**LITELLM_SAMPLE, "gpt-4o": {**LITELLM_SAMPLE["gpt-4o"], "input_cost_per_token": 2e-06}}
    (served / "prices.json").write_text(json.dumps(cheaper))
    (served / "broken.json").write_text('{"gpt-4o": ')
    home = tmp_path / "home"

    before = _cli("prices", "show", "openai:gpt-4o", home=home)
    assert "openai:gpt-4o: 2.5 / 1.25 / 10; 1.25 / 5" in before.stdout  # the bundled snapshot
    updated = _cli("prices", "update", "--url", f"{url}/prices.json", home=home)
    assert updated.returncode == 0, updated.stderr
    assert "4 models priced" in updated.stdout
    after = _cli("prices", "show", "gpt-4o", home=home)
    assert "openai:gpt-4o: 2 / 1.25 / 10; 1.25 / 5; shut down on 2027-01-14" in after.stdout
    assert "4 models" in after.stdout

    for bad in ("broken.json", "missing.json"):
        failed = _cli("prices", "update", "--url", f"{url}/{bad}", home=home)
        assert failed.returncode != 0 and failed.stderr.startswith("Error: ") and "Traceback" not in failed.stderr
        assert "openai:gpt-4o: 2 / 1.25 / 10" in _cli("prices", "show", "gpt-4o", home=home).stdout


def test_prices_validate_like_run_spec_fields() -> None:
    with pytest.raises(ValidationError):
        Price(input=-1, output=1)
    with pytest.raises(ValidationError):
        Price.model_validate({"input": 1, "output": 1, "ouput_cached": 1})


def test_prices_update_refuses_a_price_list_too_large(file_server: tuple[str, Path], tmp_path: Path) -> None:
    url, served = file_server
    with open(served / "huge.json", "wb") as huge:
        huge.truncate(65 << 20)  # a sparse 65 MiB file: the price list is read whole, so more is refused
    failed = _cli("prices", "update", "--url", f"{url}/huge.json", home=tmp_path / "home")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "more than 67,108,864 bytes" in failed.stderr
    assert not (tmp_path / "home" / "prices.json").exists()


def test_a_retired_model_or_one_retiring_within_60_days_is_named() -> None:
    today = date(2026, 11, 29)
    assert TABLE.retirement_note("openai:gpt-4-1106-preview", today) == (
        'openai:gpt-4-1106-preview was shut down on 2026-10-23: only a cache or a pack can answer it; run with '
        'cache = "replay"')
    assert TABLE.retirement_note("openai:gpt-4-1106-preview", today, replay=True) == (
        "openai:gpt-4-1106-preview was shut down on 2026-10-23: only a cache or a pack can answer it")
    assert "will be shut down on 2026-12-11 (in 12 days)" in (TABLE.retirement_note("openai:gpt-5", today) or "")
    assert TABLE.retirement_note("openai:gpt-4o", date(2026, 11, 14)) is None  # 61 days ahead: not yet
    assert TABLE.retirement_note("openai:gpt-5.2", today) is None  # no date
    assert TABLE.retirement_note("acme:x", today) is None


def test_the_bundled_snapshot_keeps_every_shutdown_date_litellm_gives() -> None:
    """The dates come from LiteLLM's list, as `prices update` reads it (not typed in): hundreds of models, the
    TravelPlanner paper's among them."""
    dated = {model: price.deprecation_date for model, price in TABLE.models.items()
             if price.deprecation_date}
    assert len(dated) > 500
    assert dated["openai:gpt-4-1106-preview"] == date(2026, 10, 23) == dated["openai:gpt-3.5-turbo"]
    assert dated["openai:gpt-4o-mini"] == date(2027, 1, 14)
    assert dated["anthropic:claude-sonnet-4-5"] == date(2026, 11, 30)
