"""Files that fail under the real CLI: a results store locked or full, a cache locked or read-only.

Each fault is a real one: another process holding an SQLite write lock, a file-size limit (RLIMIT_FSIZE: what a full
disk gives SQLite, a failed write), a read-only bind mount. The run must end with a documented exit code and a
message, release its run directory, and leave the cache as it was.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from runner.mock_server import MockConfig
from runner.store.results import load_run
from tests.runner.engine_support import CLI, PROJECT_ROOT, run_cli, start_run, until_rollouts_stored
from tests.runner.toy_benchmark import calls_for

OPTIONS = {"tasks": 40, "max_calls": 4}
CALLS = sum(calls_for(str(n), OPTIONS["max_calls"]) for n in range(OPTIONS["tasks"]))


async def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(run_cli, *args)


def hold_write_lock(path: Path) -> sqlite3.Connection:
    """Another process's view: a connection holding `path`'s write lock until it is closed."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


async def test_a_store_locked_at_the_end_fails_the_run_with_a_message_and_releases_it(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.05}))
    spec = write_spec(server.base_url, concurrency=4, options=OPTIONS)
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, more=3)
    lock = hold_write_lock(run_dir / "results.sqlite")  # held past the end of the run: every write fails
    started = time.monotonic()
    try:
        output, _ = await asyncio.wait_for(process.communicate(), 60)
    finally:
        lock.close()
    text = output.decode()
    print(f"\nresults.sqlite write-locked by another process: exit {process.returncode} after "
          f"{time.monotonic() - started:.1f} s: {text.strip().splitlines()[-1]}")
    assert process.returncode == 1 and "Traceback" not in text, text
    assert "results.sqlite" in text and "locked" in text
    resumed = await cli("run", str(spec), "--run-dir", str(run_dir), "--quiet")  # the run directory was released
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    with load_run(run_dir) as results:
        assert len(results.rollouts) == OPTIONS["tasks"]


def _limit_file_size(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


async def test_a_full_disk_ends_the_run_with_a_message_and_loses_nothing_written(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, concurrency=4, options={"tasks": 400, "max_calls": 4})
    run_dir = tmp_path / "run"
    process = await asyncio.create_subprocess_exec(
        *CLI, "run", str(spec), "--run-dir", str(run_dir), "--quiet", stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, preexec_fn=lambda: _limit_file_size(400_000),
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    output, _ = await asyncio.wait_for(process.communicate(), 120)
    text = output.decode()
    print(f"\nfiles limited to 400 kB: exit {process.returncode}: {text.strip().splitlines()[-1]}")
    assert process.returncode == 1 and "Traceback" not in text, text
    assert not list((tmp_path / "cache").glob("cache.db.damaged-*"))  # a full disk is not damage

    # Space freed, the same command resumes: the rollouts stored stay, the rest run; the cache still answers.
    paid = server.tally.served
    resumed = await cli("run", str(spec), "--run-dir", str(run_dir), "--quiet")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    billed = (server.tally.input_tokens * 1.0 + server.tally.output_tokens * 2.0) / 1e6  # the spec's prices
    with load_run(run_dir) as results:  # calls whose answer the full disk kept from the cache stay at worst case
        assert len(results.rollouts) == 400 and results.spent_usd + results.reserved_usd >= billed - 1e-9
    assert server.tally.served < paid + sum(calls_for(str(n), 4) for n in range(400))


async def test_a_cache_locked_by_another_process_delays_writes_and_pays_no_call_twice(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.05}))
    model = {"model": f"openai-compatible:toy@{server.openai_base_url}", "name": "toy", "request_timeout_s": 2,
             "transport": "aiohttp", "prices": {"input": 1.0, "output": 2.0}}
    spec = write_spec(server.base_url, concurrency=8, models=[model], options=OPTIONS)
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, more=2)
    lock = hold_write_lock(tmp_path / "cache" / "cache.db")
    await asyncio.sleep(8)  # longer than the request timeout: a blocked event loop would time calls out
    lock.close()
    output, _ = await asyncio.wait_for(process.communicate(), 120)
    print(f"\ncache.db write-locked for 8 s: exit {process.returncode}; {server.tally.served} calls billed for "
          f"{CALLS} distinct calls")
    assert process.returncode == 0, output.decode()
    assert server.tally.served == CALLS  # nothing sent twice
    assert not list((tmp_path / "cache").glob("cache.db.damaged-*"))
    again = await cli("run", str(spec), "--run-dir", str(tmp_path / "again"), "--quiet")
    assert again.returncode == 0 and server.tally.served == CALLS  # every answer reached the cache


async def test_replay_from_a_read_only_cache(start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], check=False).returncode:
        pytest.skip("needs a private mount namespace (unshare -m) for a read-only bind mount")
    server = await start_mock_llm()
    spec = write_spec(server.base_url, options=OPTIONS)
    assert (await cli("run", str(spec), "--run-dir", str(tmp_path / "first"), "--quiet")).returncode == 0
    cache = tmp_path / "cache"
    before = sorted((path.name, path.stat().st_size) for path in cache.iterdir())
    replay = write_spec(server.base_url, name="replay.toml", cache="replay", options=OPTIONS)
    command = " ".join([*(f"'{part}'" for part in CLI), "run", str(replay), "--run-dir", str(tmp_path / "replay"),
                        "--quiet"])
    done = await asyncio.to_thread(
        subprocess.run, ["unshare", "-m", "sh", "-c", f"mount --bind {cache} {cache} && "
                         f"mount -o remount,ro,bind {cache} && exec {command}"],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    print(f"\nreplay from a read-only cache: exit {done.returncode}; {server.tally.served} calls billed")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "read-only" in done.stderr and "Traceback" not in done.stderr
    assert server.tally.served == CALLS  # the first run's only
    assert sorted((path.name, path.stat().st_size) for path in cache.iterdir()) == before
