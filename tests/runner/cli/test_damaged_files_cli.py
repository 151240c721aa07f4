"""Damaged files under the real CLI: a run on a damaged cache gives the right results, `cache verify` finds and
repairs, and a damaged results store is one clear message from `status`, `report` and `run`, never a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path

import diskcache

from tests.runner.engine_support import reference, run_cli, stored
from tests.runner.toy_benchmark import ToyOptions

OPTIONS = {"tasks": 30, "max_calls": 4}


async def first_run(server, write_spec, tmp_path: Path) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    spec = write_spec(server.base_url, options=OPTIONS)
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "first"), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    return spec, tmp_path / "cache"


async def test_a_run_on_a_truncated_cache_pays_again_and_answers_right(start_mock_llm, write_spec, tmp_path: Path,
                                                                       toy_on_path) -> None:
    server = await start_mock_llm()
    spec, cache = await first_run(server, write_spec, tmp_path)
    paid = server.tally.served
    os.truncate(cache / "cache.db", (cache / "cache.db").stat().st_size // 2)
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "second"), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and f"cache {cache / 'cache.db'} is damaged" in done.stderr
    assert done.stderr.count("is damaged") == 1  # said once
    assert stored(tmp_path / "second") == await reference(ToyOptions(**OPTIONS))
    assert server.tally.served == 2 * paid  # every call paid again: nothing answered from the damaged file
    assert list(cache.glob("cache.db.damaged-*"))


async def test_verify_repair_of_damage_found_by_its_scan_moves_the_database_aside_and_the_next_run_caches_again(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm()
    spec, cache = await first_run(server, write_spec, tmp_path)
    paid = server.tally.served
    raw = diskcache.Cache(str(cache))  # more rows after the run's, so pages deep in the file hold no settings
    for index in range(2000):
        raw.set(f"~filler-{index:04}", random.Random(index).randbytes(1000))
    raw.close()
    size = (cache / "cache.db").stat().st_size
    with open(cache / "cache.db", "r+b") as handle:  # pages deep inside: the cache opens, a read finds them
        handle.seek(size - 64 * 1024)
        handle.write(random.Random(1).randbytes(32 * 1024))

    repaired = await asyncio.to_thread(run_cli, "cache", "verify", "--cache-dir", str(cache), "--repair")
    (moved,) = cache.glob("cache.db.damaged-*")
    assert repaired.returncode == 0 and "Traceback" not in repaired.stderr, repaired.stdout + repaired.stderr
    assert "database   damaged (" in repaired.stdout, repaired.stdout
    assert f"moved to {moved} and a fresh cache started" in repaired.stdout, repaired.stdout
    assert moved.stat().st_size == size  # kept whole, beside the fresh one

    for run_dir in ("second", "third"):  # the second pays again into the fresh cache, the third is answered from it
        done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / run_dir), "--quiet")
        assert done.returncode == 0 and "damaged" not in done.stderr, done.stdout + done.stderr
        assert server.tally.served == 2 * paid, (run_dir, server.tally.served, paid)
        assert stored(tmp_path / run_dir) == await reference(ToyOptions(**OPTIONS))
    clean = run_cli("cache", "verify", "--cache-dir", str(cache))
    assert clean.returncode == 0 and "bad        none" in clean.stdout, clean.stdout


def move_every_entry_to_another_key(cache: Path) -> int:
    raw = diskcache.Cache(str(cache))
    keys = sorted(key for key in raw.iterkeys() if key.startswith("v1:"))
    values = [raw.get(key) for key in keys]
    for key, value in zip(keys, values[1:] + values[:1], strict=True):
        raw.set(key, value)
    raw.close()
    return len(keys)


async def test_entries_under_the_wrong_key_are_found_never_served_and_repaired(start_mock_llm, write_spec,
                                                                               tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm()
    spec, cache = await first_run(server, write_spec, tmp_path)
    moved = move_every_entry_to_another_key(cache)

    verify = run_cli("cache", "verify", "--cache-dir", str(cache), "--json")
    assert verify.returncode == 1, verify.stdout + verify.stderr
    found = json.loads(verify.stdout)
    assert found["checked"] == moved and [b["reason"] for b in found["bad"]] == ["mismatched"] * moved

    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "second"), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert stored(tmp_path / "second") == await reference(ToyOptions(**OPTIONS))  # no rollout got another's answer
    assert done.stderr.count("the answer to another request") == 1  # said once, not per entry
    assert run_cli("cache", "verify", "--cache-dir", str(cache)).returncode == 0  # the run re-wrote what it missed

    move_every_entry_to_another_key(cache)
    repaired = run_cli("cache", "verify", "--cache-dir", str(cache), "--repair")
    assert repaired.returncode == 0 and f"{moved:,} mismatched" in repaired.stdout and "dropped" in repaired.stdout
    clean = run_cli("cache", "verify", "--cache-dir", str(cache))
    assert clean.returncode == 0 and "checked    0 entries" in clean.stdout and "bad        none" in clean.stdout


async def test_a_damaged_results_store_is_one_clear_message(start_mock_llm, write_spec, tmp_path: Path,
                                                            toy_on_path) -> None:
    server = await start_mock_llm()
    spec, _ = await first_run(server, write_spec, tmp_path)
    results = tmp_path / "first" / "results.sqlite"
    with open(results, "r+b") as handle:
        handle.write(b"\xde\xad" * 60)  # the header overwritten
    for args in (["status", str(tmp_path / "first")], ["report", str(tmp_path / "first")],
                 ["run", str(spec), "--run-dir", str(tmp_path / "first"), "--quiet"]):
        done = await asyncio.to_thread(run_cli, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert f"Error: {results} is damaged" in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
