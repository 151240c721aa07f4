"""One cache directory used by several processes at once: runs writing, `cache prune` and `cache verify` beside them.

Two real runs (the CLI, against the mock server) write one cache while `tripbench cache prune --max-size 0` empties
it again and again. Every prompt starts with the same instructions, so their chunks are stored once and shared, and a
writer remembers which chunks it already stored. Pruning must delete only what it decided to delete: every entry left
afterwards must be readable (`cache verify` finds none bad, where `verify --repair` would otherwise drop them).
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from cache.store import CacheStore
from runner.mock_server import MockConfig
from tests.runner.conftest import spec_text
from tests.runner.engine_support import CLI, PROJECT_ROOT, start_run

RUNS = ("a", "b")
PRUNES = 3
"""Prunes while the runs write; then the runs go on writing alone."""


def entries(cache_dir: Path) -> int:
    """Entries committed in the cache (the counters' rows aside), read as any other process would."""
    if not (cache_dir / "cache.db").is_file():
        return 0
    with closing(sqlite3.connect(cache_dir / "cache.db", timeout=60)) as connection:
        try:
            return int(connection.execute("SELECT count(*) FROM Cache WHERE key NOT LIKE 'meta:%'").fetchone()[0])
        except sqlite3.OperationalError:  # the first run is still making its tables
            return 0


async def cli(*args: str) -> tuple[int, str]:
    """`tripbench ARGS` without blocking the loop the mock server answers on."""
    process = await asyncio.create_subprocess_exec(*CLI, *args, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.STDOUT)
    output, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_prune_beside_two_running_runs_loses_no_entry(start_mock_llm, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(PROJECT_ROOT))  # the runs find the toy benchmark
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.1}))
    cache_dir = tmp_path / "cache"
    processes = []
    for name in RUNS:
        spec = tmp_path / f"{name}.toml"
        spec.write_text(spec_text(server.base_url, concurrency=2, cache_dir=str(cache_dir),
                                  models=[{"model": f"openai-compatible:toy-{name}@{server.base_url}/v1",
                                           "name": "toy", "prices": {"input": 0.0, "output": 0.0}}],
                                  options={"tasks": 80, "max_calls": 4, "preamble": 60}), encoding="utf-8")
        processes.append(await start_run(spec, tmp_path / f"run-{name}"))
    while entries(cache_dir) < 10:
        await asyncio.sleep(0.05)
    prunes, deleted = 0, 0
    while prunes < PRUNES and any(process.returncode is None for process in processes):
        code, output = await cli("cache", "prune", "--max-size", "0", "--cache-dir", str(cache_dir))
        assert code == 0, output
        prunes += 1
        deleted += int(re.search(r"deleted ([\d,]+) entries", output)[1].replace(",", ""))  # type: ignore[index]
        await asyncio.sleep(0.3)
    for process in processes:
        assert await process.wait() == 0
    left = entries(cache_dir)

    code, output = await cli("cache", "verify", "--json", "--cache-dir", str(cache_dir))
    report = json.loads(output[output.index("{"):])
    print(f"\n{prunes} prunes beside 2 runs deleted {deleted} entries; {left} left, {len(report['bad'])} unreadable")
    assert left > 0 and deleted > 0, "the prunes did not overlap the runs' writing"
    assert report["bad"] == [] and code == 0, report["bad"][:3]
    with CacheStore(cache_dir) as store:  # what was left is whole: every entry rebuilds its prompt
        assert sum(1 for _ in store.entries()) == left
