"""The price table is a value a run loads once from its data home (`runner.engine.prepared.Prepared.prices`): a
library caller (`prepare` + `execute`) and `tripbench run` price the same run alike at the data home's updated table,
and two runs of one process over two data homes each price at their own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from errors import ConfigError
from providers.interface import Usage
from providers.prices import Price, PriceTable, cost_at, write_table
from runner.engine.execute import execute
from runner.engine.prepared import prepare
from runner.mock_server import RunningServer
from runner.store.results import load_run
from tests.runner.engine_support import run_cli

KEY_ENV = "TRIPBENCH_TEST_PRICES_KEY"
OPTIONS = {"tasks": 4, "max_calls": 3}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-prices-test-key")


def _home(folder: Path, source: str, **prices: Price) -> Path:
    """A data home whose updated table (`tripbench prices update`'s file) holds `prices` only."""
    folder.mkdir(parents=True)
    write_table(PriceTable(source, dict(prices)), folder / "prices.json")
    return folder


def _models(server: RunningServer) -> list[dict[str, Any]]:
    """`openai:toy`, priced by the table's own key, and a local server billed as the table's `acme:toy` entry."""
    return [{"model": "openai:toy", "base_url": server.openai_base_url, "api_key_env": KEY_ENV},
            {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "local", "prices": "acme:toy"}]


def _costs(run_dir: Path) -> dict[tuple[str, str, int], tuple[int, int, float | None]]:
    """(model, task, call) -> (input tokens, output tokens, cost) of every call of a run."""
    with load_run(run_dir) as results:
        task_of = {r.id: (r.key.model, r.key.task) for r in results.rollouts}
        return {(*task_of[c.rollout_id], c.idx): (c.call.usage.input_tokens, c.call.usage.output_tokens,
                                                  c.call.cost_usd) for c in results.calls()}


async def test_a_library_run_and_a_cli_run_price_alike_at_the_data_homes_table(
        start_mock_llm, write_spec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_mock_llm()
    toy, acme = Price(input=1000.0, output=2000.0), Price(input=3000.0, output=5000.0)
    home = _home(tmp_path / "home", "updated in a test", **{"openai:toy": toy, "acme:toy": acme})
    # a cap needs every model priced: the bundled snapshot knows neither, the data home's table both
    spec = write_spec(server.base_url, models=_models(server), options=OPTIONS, cache="off", max_cost=100)

    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "cli"), "--quiet",
                                   home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    monkeypatch.setenv("TRIPBENCH_HOME", str(home))
    await execute(prepare(spec), tmp_path / "library", show_progress=False)

    cli, library = _costs(tmp_path / "cli"), _costs(tmp_path / "library")
    assert cli == library and len(cli) > 8
    for (model, _, _), (input_tokens, output_tokens, cost) in cli.items():
        price = toy if model == "openai:toy" else acme
        usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
        assert cost == pytest.approx(cost_at(usage, price)) and cost > 0
    for run in ("cli", "library"):
        stamp = json.loads((tmp_path / run / "sessions.jsonl").read_text())
        assert stamp["prices"] == "updated in a test"


async def test_two_runs_in_one_process_price_at_their_own_data_homes_tables(
        start_mock_llm, write_spec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_mock_llm()
    model = {"model": "openai:toy", "base_url": server.openai_base_url, "api_key_env": KEY_ENV}
    spec = write_spec(server.base_url, models=[model], options=OPTIONS, cache="off", max_cost=100)
    prepared = {}
    for name, rate in (("cheap", 1000.0), ("dear", 3000.0)):
        monkeypatch.setenv("TRIPBENCH_HOME", str(_home(tmp_path / name, name,
                                                       **{"openai:toy": Price(input=rate, output=rate)})))
        prepared[name] = prepare(spec)
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "bundled only"))
    with pytest.raises(ConfigError, match="the price table does not know openai:toy"):
        prepare(spec)

    for name, run in prepared.items():  # both prepared before either runs: each keeps the table it was given
        await execute(run, tmp_path / f"run-{name}", show_progress=False)
    cheap, dear = _costs(tmp_path / "run-cheap"), _costs(tmp_path / "run-dear")
    assert cheap.keys() == dear.keys() and len(cheap) >= 4
    for key, (input_tokens, output_tokens, cost) in cheap.items():
        assert cost == pytest.approx((input_tokens + output_tokens) * 1000.0 / 1e6)
        assert dear[key][2] == pytest.approx(3 * cost)
