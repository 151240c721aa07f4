"""A provider that lies about usage cannot spend past the cap: checked against the mock server's own bill.

The mock server bills the true token counts (its tally) and reports a lie on the wire (`MockConfig.usage`). The run
is the real CLI in a subprocess; the money billed must stay under the cap, the ledger must cover it, and each call
with a lie is stored with what was wrong.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from pathlib import Path

import pytest

from benchmarks.base import BUDGET_EXHAUSTED
from runner.mock_server import MockConfig, RunningServer
from runner.store.results import load_run
from tests.runner.engine_support import PRICE, billed_usd, run_cli

CAP = 1.5
"""About 25 toy calls: the run asks for ~80."""
OPTIONS = {"tasks": 40, "max_calls": 3}
KEY_ENV = "TRIPBENCH_TEST_USAGE_KEY"


def model(server: RunningServer, api: str, transport: str, **fields: object) -> dict[str, object]:
    """The toy model through `api`'s real SDK (or aiohttp) at the mock server."""
    if api == "openai-compatible":
        return {"model": f"openai-compatible:toy@{server.openai_base_url}", "name": "toy", "prices": PRICE,
                "transport": transport, **fields}
    base_url = server.openai_base_url if api == "openai" else server.base_url
    return {"model": f"{api}:toy", "name": "toy", "base_url": base_url, "api_key_env": KEY_ENV, "prices": PRICE,
            "transport": transport, **fields}


async def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`tripbench ARGS` in a subprocess, waited for off the event loop (the mock server runs on it)."""
    return await asyncio.to_thread(run_cli, *args)


def booked_usd(run_dir: Path) -> float:
    with load_run(run_dir) as results:
        return results.spent_usd + results.reserved_usd


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-usage-test-key")


@pytest.mark.parametrize(("lie", "api", "transport"), [
    ("missing", "openai-compatible", "sdk"), ("null", "openai-compatible", "sdk"),
    ("negative", "openai-compatible", "sdk"), ("huge", "openai-compatible", "sdk"),
    ("overflow", "openai-compatible", "sdk"), ("fraction", "openai-compatible", "sdk"),
    ("text", "openai-compatible", "sdk"),
    ("missing", "openai", "aiohttp"), ("negative", "openai", "aiohttp"),
    ("null", "anthropic", "sdk"), ("huge", "anthropic", "aiohttp"),
])
async def test_a_reply_without_trustworthy_usage_is_charged_at_its_worst_case(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path, lie: str, api: str, transport: str) -> None:
    server = await start_mock_llm(MockConfig(usage=lie))
    spec = write_spec(server.base_url, max_cost=CAP, models=[model(server, api, transport)], options=OPTIONS)
    run_dir = tmp_path / "run"

    done = await cli("run", str(spec), "--run-dir", str(run_dir), "--quiet")

    billed = billed_usd(server)
    print(f"\nusage {lie} ({api}, {transport}): billed ${billed:.4f} under a ${CAP} cap; exit {done.returncode}")
    assert done.returncode == 3, done.stdout + done.stderr  # the cap stopped the run, with rollouts left
    assert 0.5 * CAP < billed <= CAP
    assert billed <= booked_usd(run_dir) <= CAP  # the ledger covers the bill, and never goes below zero
    with load_run(run_dir) as results:
        calls = [call for stored in results.calls() if not (call := stored.call).hit]
        assert calls and all(call.usage_problem for call in calls)
        assert all(0 < call.usage.input_tokens < 100 and 0 < call.usage.output_tokens <= 24 for call in calls)
        assert sum(call.cost_usd or 0.0 for call in calls) == pytest.approx(results.spent_usd)

    # A resume cannot take a lie for headroom: the cap is reached already.
    again = await cli("run", str(spec), "--run-dir", str(run_dir), "--quiet")
    assert again.returncode == 3 and billed_usd(server) == billed, again.stdout + again.stderr
    with load_run(run_dir) as results:  # left: the rollouts the cap cut, and those never started
        left = OPTIONS["tasks"] - sum(rollout.status != BUDGET_EXHAUSTED for rollout in results.rollouts)
    assert f"spend cap reached: {left} rollouts left" in again.stdout, again.stdout


async def test_the_report_counts_the_calls_without_trustworthy_usage(start_mock_llm, write_spec, tmp_path: Path,
                                                                    toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(usage="missing"))
    spec = write_spec(server.base_url, models=[model(server, "openai-compatible", "sdk")],
                      options={"tasks": 5, "max_calls": 1})
    assert (await cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet")).returncode == 0
    report = await cli("report", str(tmp_path / "run"), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "5 call(s) had no trustworthy usage" in text
    status = await cli("status", str(tmp_path / "run"))
    assert "5 calls had no trustworthy usage" in status.stdout, status.stdout


async def test_a_ledger_an_older_version_let_go_negative_is_repaired(start_mock_llm, write_spec, tmp_path: Path,
                                                                    toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, max_cost=CAP, models=[model(server, "openai-compatible", "sdk")],
                      options=OPTIONS)
    run_dir = tmp_path / "run"
    assert (await cli("run", str(spec), "--run-dir", str(run_dir), "--quiet")).returncode == 3
    billed = billed_usd(server)
    # As tripbench before m004 left it: a negative usage believed, settled at -$10,800.
    with sqlite3.connect(run_dir / "results.sqlite") as conn:
        conn.execute("ALTER TABLE llm_call DROP COLUMN usage_problem")
        conn.execute("DELETE FROM _migrations WHERE name = 'm004_untrusted_usage'")
        conn.execute("UPDATE session SET spent_usd = spent_usd - 10800 - (SELECT cost_usd FROM charge WHERE id = 1)")
        conn.execute("UPDATE charge SET cost_usd = -10800 WHERE id = 1")
    conn.close()
    assert booked_usd(run_dir) == 0.0  # read before the repair: never below zero

    again = await cli("run", str(spec), "--run-dir", str(run_dir), "--quiet")
    assert again.returncode == 3 and billed_usd(server) == billed, again.stdout + again.stderr
    assert booked_usd(run_dir) >= billed


@pytest.mark.parametrize(("lie", "api"), [("missing", "openai"), ("overflow", "anthropic")])
async def test_a_batch_result_without_trustworthy_usage_is_charged_at_its_worst_case(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path, lie: str, api: str) -> None:
    server = await start_mock_llm(MockConfig(usage=lie))
    batch_model = model(server, api, "sdk", batch=True, prices={**PRICE, "batch_discount": 0.5})
    spec = write_spec(server.base_url, max_cost=CAP / 2, models=[batch_model], options=OPTIONS, batch_size=10,
                      batch_flush_s=0.1, batch_poll_s=0.05)
    run_dir = tmp_path / "run"

    done = await cli("run", str(spec), "--run-dir", str(run_dir), "--quiet")

    billed = billed_usd(server)
    print(f"\nbatch usage {lie} ({api}): billed ${billed:.4f} under a ${CAP / 2} cap; exit {done.returncode}")
    assert done.returncode == 3, done.stdout + done.stderr
    assert server.tally.batch_served > 0 and billed <= booked_usd(run_dir) <= CAP / 2
    with load_run(run_dir) as results:
        assert all(stored.call.usage_problem for stored in results.calls() if not stored.call.hit)
