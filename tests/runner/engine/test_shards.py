"""`tripbench run SPEC --shard I/N`: the shards of a run, merged, are the run one process makes; a killed shard
resumes; `status` and `report` of the run directory read the shards as one run; what is refused."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import os
import resource
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runner.engine.shard import Shard, parse_shard, shard_of
from runner.mock_server import MockConfig
from runner.store.records import RolloutKey
from runner.store.results import load_run
from runner.store.writer import ResultsStore
from tests.runner.engine_support import CLI, PROJECT_ROOT, run_cli, start_run, until_rollouts_stored

VARIABLE = "TRIPBENCH_TEAM_URL_TEST"
TEAM = {"url_env": VARIABLE}
OPTIONS = {"tasks": 24, "max_calls": 6}


def test_a_key_belongs_to_the_shard_its_sha256_names() -> None:
    key = RolloutKey("travelplanner", "validation", "17", "gpt-4o-mini", "two-stage", 0)
    digest = hashlib.sha256(json.dumps(["travelplanner", "validation", "17", "gpt-4o-mini", "two-stage", 0],
                                       separators=(",", ":")).encode()).digest()
    assert shard_of(key, 7) == int.from_bytes(digest[:8], "big") % 7 + 1
    # golden: a change here re-partitions every sharded run that is resumed
    assert [shard_of(key, n) for n in (1, 2, 3, 4, 10)] == [1, 1, 2, 3, 1]


def test_every_key_is_in_exactly_one_shard_and_shards_are_balanced() -> None:
    keys = [RolloutKey("toy", "train", str(task), model, "scripted", sample)
            for task in range(300) for model in ("a", "b") for sample in range(2)]
    shards = [Shard(index, 4) for index in range(1, 5)]
    owned = [shard.select(keys) for shard in shards]
    assert sorted(key for share in owned for key in share) == sorted(keys)
    assert all(abs(len(share) - len(keys) / 4) < len(keys) / 10 for share in owned)
    assert all(share == [key for key in keys if key in set(share)] for share in owned)  # the run's order kept


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "x", "1/3/5", "-1/3", "1/10001", "1/99999999999999999999999",
                                  "1/" + "9" * 5000])
def test_a_shard_other_than_i_of_n_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="I/N"):
        parse_shard(text)


def _by_key(run_dir: Path) -> dict[RolloutKey, tuple[Any, ...]]:
    """Each rollout's result and its stored evaluation, by key."""
    with load_run(run_dir) as results:
        evaluations = results.evaluations("official")
        return {r.key: (r.status, r.answer, r.plan, results.steps(r.id), r.calls,
                        evaluations[r.id].verdicts, evaluations[r.id].details) for r in results.rollouts}


def _tables(run_dir: Path) -> dict[str, list[list[str]]]:
    """The report's CSV tables but those naming the run's folder (runs, submission files), depending on the calls
    that came from the cache (cost: the killed shard's answered calls come back from it) or telling its sessions
    (provenance: their machines, dates and stores)."""
    return {path.name: list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
            for path in sorted((run_dir / "report" / "csv").glob("*.csv"))
            if path.name not in ("runs.csv", "submissions.csv", "cost.csv", "provenance.csv")}


def _outputs(run_dir: Path) -> dict[str, Any]:
    """The files of RUN_DIR/outputs by their path there: submissions as bytes, trajectories without what depends on
    the cache (hits, cost)."""
    files: dict[str, Any] = {}
    for path in sorted((run_dir / "outputs").rglob("*.jsonl")):
        files[str(path.relative_to(run_dir))] = path.read_bytes() if path.name != "trajectories.jsonl" else [
            {name: value for name, value in json.loads(line).items() if name not in ("cache_hits", "cost_usd")}
            for line in path.read_text(encoding="utf-8").splitlines()]
    return files


async def _shard(spec: Path, run_dir: Path, shard: str) -> asyncio.subprocess.Process:
    return await start_run(spec, run_dir, "--shard", shard)


async def test_three_shards_equal_the_run_of_one_process_and_a_killed_shard_resumes(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path, team_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.02}))
    spec = write_spec(server.base_url, concurrency=4, options=OPTIONS, team=TEAM)
    whole = await start_run(spec, tmp_path / "one")
    output, _ = await whole.communicate()
    assert whole.returncode == 0, output.decode()

    sharded = tmp_path / "sharded"
    server.plan.delay_next(0.3, times=1000)  # slow answers, so the kill lands before the shard's share is done
    first = await _shard(spec, sharded, "2/3")  # killed mid-run, then run again
    await until_rollouts_stored(sharded / "shard-2-of-3", first, more=2)
    assert first.returncode is None, (await first.communicate())[0].decode()  # still running: the kill lands mid-run
    first.send_signal(signal.SIGKILL)
    await first.wait()
    server.plan.clear()
    processes = [await _shard(spec, sharded, shard) for shard in ("1/3", "2/3", "3/3")]
    for process in processes:
        output, _ = await process.communicate()
        assert process.returncode == 0, output.decode()
        assert f"report: tripbench report {sharded}\n" in output.decode()

    one = _by_key(tmp_path / "one")
    assert len(one) == OPTIONS["tasks"]
    assert _by_key(sharded) == one
    shares = {index: len(_by_key(sharded / f"shard-{index}-of-3")) for index in (1, 2, 3)}
    assert sum(shares.values()) == len(one) and all(shares.values())
    with load_run(sharded) as results:
        # four sessions: the killed one (its outcome unset, or `completed` when the kill landed as it was closing)
        assert len(results.sessions) == 4 and [s.outcome for s in results.sessions].count("completed") >= 3
        assert sum(len(s) for s in results.planned.values()) == 1 and results.planned["toy"]["scripted"] == len(one)

    status = run_cli("status", str(sharded), "--json")
    assert status.returncode == 0, status.stderr
    summary = json.loads(status.stdout)
    assert summary["state"] == "completed"
    assert summary["shards"] == {"1/3": "completed", "2/3": "completed", "3/3": "completed"}
    assert [(g["planned"], g["done"]) for g in summary["groups"]] == [(len(one), len(one))]
    for run_dir in (tmp_path / "one", sharded):
        report = run_cli("report", str(run_dir))
        assert report.returncode == 0, report.stderr
    assert _tables(sharded) == _tables(tmp_path / "one") != {}
    assert _outputs(sharded) == _outputs(tmp_path / "one")  # the submission byte for byte, and the trajectories
    assert "outputs/toy/scripted/submission.jsonl" in _outputs(sharded)


async def test_a_shard_runs_once_on_any_machine_and_status_names_a_missing_one(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path, team_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    # slow answers: the shard is still running after the checks below (each CLI start takes a second or two, and the
    # mock server, in this loop, answers their start-up check meanwhile)
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 1.0}))
    spec = write_spec(server.base_url, concurrency=2, options=OPTIONS, team=TEAM)
    sharded = tmp_path / "sharded"
    running = await _shard(spec, sharded, "1/2")
    await until_rollouts_stored(sharded / "shard-1-of-2", running, more=1)
    twice = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(sharded), "--shard", "1/2",
                                    "--quiet")
    assert twice.returncode == 1 and f"shard 1/2 of this run is running already (pid {running.pid} on " \
        in twice.stderr, twice.stderr
    # another machine: its own disk (a folder of the same name elsewhere), the same team database
    elsewhere = tmp_path / "other-machine" / "sharded"
    twice = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(elsewhere), "--shard", "1/2",
                                    "--quiet")
    assert twice.returncode == 1 and "shard 1/2 of this run is running already" in twice.stderr, twice.stderr
    assert not elsewhere.exists()

    status = run_cli("status", str(sharded))
    assert status.returncode == 0, status.stderr
    assert "shards: 1/2 running, 2/2 missing" in status.stdout
    assert json.loads(run_cli("status", str(sharded), "--json").stdout)["state"] == "running (shards missing: 2/2)"
    running.send_signal(signal.SIGINT)
    output, _ = await running.communicate()
    assert running.returncode == 130 and "--shard 1/2" in output.decode(), output.decode()


def test_shards_and_ray_without_a_team_table_are_refused_before_anything_is_written(
        write_spec, tmp_path: Path) -> None:
    spec = write_spec("http://127.0.0.1:9", options=OPTIONS)
    for flags in (["--shard", "1/3"], ["--ray-address", "local"]):
        refused = run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), *flags)
        assert refused.returncode == 2, refused.stderr
        assert f"{flags[0]} runs rollouts in several processes" in refused.stderr and "[team]" in refused.stderr
    flags_run = run_cli("run", "--benchmark", "tests.runner.toy_benchmark:ToyBenchmark",
                        "--model", "openai-compatible:toy@http://127.0.0.1:9/v1", "--strategies", "scripted",
                        "--split", "train", "--shard", "1/2", cwd=tmp_path)
    assert flags_run.returncode == 2 and "[team]" in flags_run.stderr, flags_run.stderr
    bad = run_cli("run", str(spec), "--shard", "3/2")
    assert bad.returncode == 2 and "I/N" in bad.stderr
    huge = run_cli("run", str(spec), "--shard", "1/99999999999999999999999")
    assert huge.returncode == 2 and "at most 10,000 shards" in huge.stderr, huge.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / "runs").exists()


def test_shard_folders_of_two_counts_are_refused(tmp_path: Path) -> None:
    for name in ("shard-1-of-2", "shard-1-of-3"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.sqlite").write_bytes(b"")
    status = run_cli("status", str(tmp_path))
    assert status.returncode == 1 and "shards of different counts (2, 3)" in status.stderr, status.stderr


async def _store(run_dir: Path, outcome: str = "completed") -> None:
    """A real results store in `run_dir` with one session that ended as `outcome`."""
    store = await ResultsStore.open(run_dir)
    session = await store.start_session({"benchmark": "toy"}, "run.toml", "0", {"toy": {"scripted": 1}})
    await store.end_session(session, outcome)
    await store.close()


async def test_status_of_shards_of_a_huge_count_names_the_missing_ones_as_ranges_in_bounded_memory(
        tmp_path: Path) -> None:
    count = 99999999999999999999999  # a folder an earlier tripbench let a run make
    for index in (2, 7):
        await _store(tmp_path / f"shard-{index}-of-{count}")

    def status(*flags: str) -> subprocess.CompletedProcess[str]:
        def limit() -> None:  # listing every missing shard would run out of this long before the test ends
            resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "COLUMNS": "200"}
        return subprocess.run([*CLI, "status", str(tmp_path), *flags], capture_output=True, text=True, env=env,
                              preexec_fn=limit, timeout=120, check=False)

    done = status("--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["shards"] == {f"1/{count}": "missing", f"2/{count}": "completed", f"3-6/{count}": "missing",
                                 f"7/{count}": "completed", f"8-{count}/{count}": "missing"}
    assert summary["state"] == f"completed (shards missing: 1/{count}, 3-6/{count}, 8-{count}/{count})"
    text = status()
    assert text.returncode == 0 and f"shards: 1/{count} missing, 2/{count} completed" in text.stdout, text.stderr
    assert len(text.stdout) < 5000


async def test_a_folder_of_shards_and_of_a_run_of_its_own_is_refused_by_status_report_and_run(
        write_spec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, "postgresql://nobody@/nowhere?host=/nonexistent")  # never reached
    spec = write_spec("http://127.0.0.1:9", options=OPTIONS, team=TEAM)
    alone, sharded, both = tmp_path / "alone", tmp_path / "sharded", tmp_path / "both"
    for run_dir in (alone, both):
        await _store(run_dir)
    for run_dir in (sharded, both):
        await _store(run_dir / "shard-1-of-2")

    for command in (["status", str(both)], ["status", str(both), "--json"], ["report", str(both)],
                    ["run", str(spec), "--run-dir", str(both)], ["run", str(spec), "--run-dir", str(both),
                                                                 "--shard", "2/2"]):
        refused = run_cli(*command)
        assert refused.returncode == 1, (command, refused.stdout, refused.stderr)
        assert f"{both} holds two runs of the same rollouts: one not sharded ({both / 'results.sqlite'}) and one " \
               "split 2 ways (shard-1-of-2)" in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    assert not (both / "report").exists() and not (both / "shard-2-of-2").exists()

    before = {folder: _listing(folder) for folder in (alone, sharded)}
    refused = run_cli("run", str(spec), "--run-dir", str(alone), "--shard", "1/2")
    assert refused.returncode == 2, refused.stderr
    assert f"--shard 1/2: {alone} holds a run that is not sharded" in refused.stderr, refused.stderr
    refused = run_cli("run", str(spec), "--run-dir", str(sharded), "--dry-run")
    assert refused.returncode == 2, refused.stderr
    assert f"{sharded} holds the shards of a run split 2 ways (shard-1-of-2): a run without --shard" in refused.stderr
    refused = run_cli("run", str(spec), "--run-dir", str(sharded), "--shard", "1/3")
    assert refused.returncode == 2 and "run --shard I/2" in refused.stderr, refused.stderr
    assert _listing(alone) == before[alone] and _listing(sharded) == before[sharded]  # nothing written


def _listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))
