"""`tripbench run` says how it went: its exit code, its summary, and progress lines when nobody watches a terminal."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from runner.cli.run import EXIT_NO_RESULT
from runner.mock_server import MockConfig
from tests.runner.engine_support import run_cli, start_run


async def test_a_run_whose_every_call_failed_exits_with_its_own_code(start_mock_llm, write_spec, tmp_path: Path,
                                                                      toy_on_path) -> None:
    server = await start_mock_llm()
    server.plan.fail_next(500, times=10_000)  # an outage: every call a 500
    spec = write_spec(server.base_url, options={"tasks": 6, "max_calls": 2}, retry={"max_attempts": 2,
                                                                                    "base_delay_s": 0.01})
    run_dir = tmp_path / "run"
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(run_dir), "--quiet")
    assert done.returncode == EXIT_NO_RESULT == 4, done.stdout + done.stderr
    assert "6 rollouts have no result of their own: provider_error 6" in done.stdout
    assert f"run them again with: tripbench run {spec} --run-dir {run_dir}" in done.stdout
    assert re.search(r"scripted\s*│\s*0/6\s", done.stdout)  # "done" is 0 of 6: they run again
    assert "Traceback" not in done.stdout + done.stderr
    status = json.loads(run_cli("status", str(run_dir), "--json").stdout)  # what cron can read
    assert status["without_result"] == {"provider_error": 6} and status["groups"][0]["done"] == 0

    server.plan.clear()  # the provider is back: the same command runs them again and ends well
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(run_dir), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no result of their own" not in done.stdout


async def test_without_a_terminal_a_progress_line_appears_while_the_run_goes_on(start_mock_llm, write_spec,
                                                                                  tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.05}))
    spec = write_spec(server.base_url, concurrency=4, max_cost=100.0, options={"tasks": 60, "max_calls": 3})
    process = await start_run(spec, tmp_path / "run", "--progress-every", "0.2", quiet=False)
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
    assert process.returncode is None  # printed while the run is going, not in the end-of-run summary
    assert re.match(r"\d\d:\d\d:\d\d \d+/60 rollouts · \$[0-9.]+ (\+\$[0-9.]+ reserved )?/ \$100\.00 · "
                    r"[0-9,]+ tok/s · [0-9,]+ calls, (\d+%|-) hits · \d+ retries · "
                    r"\d+ agent failures · \d+ provider errors( · \d+ [a-z ]+)* · ETA \S+", line), line
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()


def test_a_dry_run_needs_no_key_and_says_what_bounds_the_money(write_spec, tmp_path: Path, toy_on_path) -> None:
    model = {"model": "openai:gpt-4o-mini", "prices": {"input": 1000.0, "output": 2000.0}}  # no OPENAI_API_KEY set
    spec = write_spec("http://127.0.0.1:9", models=[model], max_cost=0.5, expected_calls=2,
                      options={"tasks": 40, "max_calls": 3})
    done = run_cli("run", str(spec), "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    expected = float(re.search(r"expected \$([0-9.]+), assuming 2 calls per rollout", done.stdout).group(1))
    assert expected > 0.5  # 40 rollouts x 2 calls x (prompt + 24 output tokens) at these prices
    assert "at most $0.50: the spend cap" in done.stdout
    allowed = int(re.search(r"the cap is likely to allow about (\d+) of the 40 rollouts", done.stdout).group(1))
    assert abs(allowed - 0.5 / (expected / 40)) <= 1

    without_cap = write_spec("http://127.0.0.1:9", name="uncapped.toml", models=[model],
                             options={"tasks": 40, "max_calls": 3})
    done = run_cli("run", str(without_cap), "--dry-run")
    assert done.returncode == 0 and "at most: no bound without a spend cap" in done.stdout, done.stdout
