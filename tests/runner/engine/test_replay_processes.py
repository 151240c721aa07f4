"""A replay of many rollouts runs them in worker processes forked by `tripbench run`
(runner/engine/replay_processes.py): the same stored results, scores and submission as the run that filled the cache;
a worker killed, a Ctrl-C and the parent killed each end cleanly, leave no process behind, and the same command
finishes the run; a worker stopped (SIGSTOP) is killed and its chunk runs in the other, and the run completes, but not
a worker busy for long, nor one the whole run's pause stopped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import pytest

from runner.engine.replay_processes import MIN_ROLLOUTS, STALL_ENV
from runner.store.results import load_run
from tests.runner.engine_support import CLI, reference, start_run, stored, until_rollouts_stored
from tests.runner.toy_benchmark import ToyOptions

TASKS = 2 * MIN_ROLLOUTS + 10
"""Enough rollouts for two workers."""
SUBMISSION = Path("outputs/toy/scripted/submission.jsonl")

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="worker processes need two cores or more")


def children(pid: int) -> set[int]:
    """The live processes whose parent is `pid`."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except FileNotFoundError:
        return False
    return fields[0] != "Z"


@pytest.fixture
async def filled(start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> tuple[Path, Path]:
    """A cache filled by a run of `TASKS` toy rollouts (scored in this process, as always), and a replay spec of the
    same run; returns (the filling run's directory, the replay spec). Scoring sleeps 0.1 s a call, so a replay takes
    seconds: time for a signal to land mid-run."""
    server = await start_mock_llm()
    options = {"tasks": TASKS, "max_calls": 3, "evaluate_s": 0.1}
    fill = write_spec(server.base_url, name="fill.toml", options=options, evaluate=["official"])
    await run_to_end(fill, tmp_path / "fill")
    replay = write_spec(server.base_url, name="replay.toml", options=options, evaluate=["official"], cache="replay")
    return tmp_path / "fill", replay


async def run_to_end(spec: Path, run_dir: Path) -> str:
    """`tripbench run SPEC --run-dir RUN_DIR` to its end, in a subprocess (the mock server runs in this loop);
    returns its output, after checking it succeeded."""
    process = await start_run(spec, run_dir, quiet=False)
    output = (await process.communicate())[0].decode()
    assert process.returncode == 0, output
    return output


async def replay_under_way(replay: Path, run_dir: Path, *args: str) -> tuple[asyncio.subprocess.Process, set[int]]:
    """A replay started in a subprocess, once it stored 20 rollouts: the process and its two workers."""
    process = await start_run(replay, run_dir, *args)
    await until_rollouts_stored(run_dir, process, more=20)
    workers = children(process.pid)
    assert len(workers) == 2, workers
    return process, workers


async def replay_in_its_own_group(replay: Path, run_dir: Path) -> tuple[asyncio.subprocess.Process, set[int]]:
    """`replay_under_way` as a terminal's job: the run leads a process group of its own with its two workers, so a
    signal to the group reaches them all."""
    process = await asyncio.create_subprocess_exec(*CLI, "run", str(replay), "--run-dir", str(run_dir), "--quiet",
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                   start_new_session=True)
    await until_rollouts_stored(run_dir, process, more=20)
    workers = children(process.pid)
    assert len(workers) == 2, workers
    return process, workers


async def finishes_as_filled(replay: Path, run_dir: Path, fill_dir: Path) -> None:
    """The same command ends the replay with the filling run's results and submission."""
    await run_to_end(replay, run_dir)
    assert stored(run_dir) == stored(fill_dir)
    assert (run_dir / SUBMISSION).read_bytes() == (fill_dir / SUBMISSION).read_bytes()


def verdicts(run_dir: Path) -> dict[tuple[str, int], list[tuple[str, bool | None]]]:
    with load_run(run_dir) as results:
        scored = results.evaluations("official")
        return {(r.key.task, r.key.sample): [(v.constraint, v.passed) for v in scored[r.id].verdicts]
                for r in results.rollouts}


async def test_a_replay_of_many_rollouts_runs_in_workers_and_stores_what_the_filling_run_did(
        filled: tuple[Path, Path], tmp_path: Path) -> None:
    fill_dir, replay = filled
    assert "replayed in 2 worker processes" in await run_to_end(replay, tmp_path / "replay")
    replayed = stored(tmp_path / "replay")
    assert len(replayed) == TASKS
    assert replayed == stored(fill_dir) == await reference(ToyOptions(tasks=TASKS, max_calls=3))
    assert verdicts(tmp_path / "replay") == verdicts(fill_dir)  # scored in the workers, as here
    assert (tmp_path / "replay" / SUBMISSION).read_bytes() == (fill_dir / SUBMISSION).read_bytes()
    with load_run(tmp_path / "replay") as results:
        assert all(r.calls == r.cache_hits > 0 for r in results.rollouts)


async def test_a_worker_killed_fails_the_session_with_a_clear_error_and_the_same_command_finishes(
        filled: tuple[Path, Path], tmp_path: Path) -> None:
    fill_dir, replay = filled
    run_dir = tmp_path / "replay"
    process, workers = await replay_under_way(replay, run_dir)
    os.kill(min(workers), signal.SIGKILL)
    output = (await process.communicate())[0].decode()
    assert process.returncode == 1, output
    assert "a replay worker process ended unexpectedly" in output and "Traceback" not in output
    assert not any(alive(pid) for pid in workers)  # the other one was ended too
    kept = len(stored(run_dir))
    assert 20 <= kept < TASKS
    await finishes_as_filled(replay, run_dir, fill_dir)


async def test_a_stopped_worker_is_killed_and_its_chunk_runs_in_the_other_to_the_filling_runs_results(
        filled: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that sends nothing (here SIGSTOPped mid-chunk; hung alike) is killed after the stall limit, and the
    other worker runs the rollouts of its chunk not stored: the run completes, exit 0, as if nothing happened, and
    says so."""
    fill_dir, replay = filled
    run_dir = tmp_path / "replay"
    monkeypatch.setenv(STALL_ENV, "2")  # the run's subprocess reads it: 2 s, not 30
    process, workers = await replay_under_way(replay, run_dir)
    stopped = min(workers)
    os.kill(stopped, signal.SIGSTOP)
    try:
        output = (await asyncio.wait_for(process.communicate(), timeout=120))[0].decode()
    finally:
        if alive(stopped):  # a failed test leaves no stopped process behind
            os.kill(stopped, signal.SIGKILL)
    assert process.returncode == 0, output
    assert f"a replay worker process (pid {stopped}) sent nothing for 2 s: killed" in output  # said when it happens
    assert "replayed in 2 worker processes; killed after 2 s without a word: 1" in output, output  # and at the end
    assert "Traceback" not in output
    assert not any(alive(pid) for pid in workers)
    assert stored(run_dir) == stored(fill_dir) and len(stored(run_dir)) == TASKS
    assert verdicts(run_dir) == verdicts(fill_dir)
    assert (run_dir / SUBMISSION).read_bytes() == (fill_dir / SUBMISSION).read_bytes()
    with load_run(run_dir) as results:
        assert len(results.rollouts) == TASKS  # each stored once: none of the stopped worker's twice
        assert len(results.sessions) == 1


async def test_a_worker_busy_longer_than_the_stall_limit_between_two_records_is_not_killed(
        filled: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its heartbeat says it lives: an evaluator that takes long (one asking a web API for distances) is no stall."""
    fill_dir, replay = filled
    slow = tmp_path / "slow.toml"  # each scoring call takes 1 s, twice the stall limit
    slow.write_text(replay.read_text().replace("evaluate_s = 0.1", "evaluate_s = 1.0"))
    monkeypatch.setenv(STALL_ENV, "0.5")
    output = await run_to_end(slow, tmp_path / "slow")
    assert "replayed in 2 worker processes\n" in output and "without a word" not in output
    assert stored(tmp_path / "slow") == stored(fill_dir)


async def test_a_stall_limit_that_is_no_number_of_seconds_is_refused_before_the_run_starts(
        filled: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, replay = filled
    monkeypatch.setenv(STALL_ENV, "0")
    process = await start_run(replay, tmp_path / "replay")
    output = (await process.communicate())[0].decode()
    assert process.returncode == 1, output
    assert f"${STALL_ENV} = '0': expected the seconds a replay worker may send nothing" in output
    assert "Traceback" not in output
    assert not (tmp_path / "replay" / "results.sqlite").exists()


async def test_the_whole_run_stopped_and_continued_kills_no_worker(filled: tuple[Path, Path], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-Z then `fg` (a suspended laptop alike) stops the run with its workers: their silence is the run's own
    pause, not a stall."""
    fill_dir, replay = filled
    run_dir = tmp_path / "replay"
    monkeypatch.setenv(STALL_ENV, "2")
    process, _ = await replay_in_its_own_group(replay, run_dir)
    os.killpg(process.pid, signal.SIGSTOP)
    await asyncio.sleep(4)  # twice the stall limit
    process.send_signal(signal.SIGCONT)  # the run first, its workers a moment later: their silence was the pause
    await asyncio.sleep(0.5)
    with contextlib.suppress(ProcessLookupError):  # the run ended meanwhile: the checks below say how
        os.killpg(process.pid, signal.SIGCONT)
    output = (await asyncio.wait_for(process.communicate(), timeout=120))[0].decode()
    assert process.returncode == 0, output
    assert "replayed in 2 worker processes\n" in output and "without a word" not in output
    assert stored(run_dir) == stored(fill_dir)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_to_the_process_group_stops_a_replay_in_workers_with_exit_130_and_no_process_left(
        filled: tuple[Path, Path], tmp_path: Path, signum: signal.Signals) -> None:
    """Ctrl-C in a terminal, or a job scheduler's SIGTERM, reaches the run and its workers at once: the run stops as
    one process would (its chunks under way end, exit 130), not as if its workers had died."""
    fill_dir, replay = filled
    run_dir = tmp_path / "replay"
    process, workers = await replay_in_its_own_group(replay, run_dir)
    os.killpg(process.pid, signum)
    output = (await process.communicate())[0].decode()
    assert process.returncode == 130, output
    assert "Traceback" not in output and "ended unexpectedly" not in output
    assert not any(alive(pid) for pid in workers)
    assert len(stored(run_dir)) < TASKS
    await finishes_as_filled(replay, run_dir, fill_dir)


async def test_the_workers_of_a_killed_run_end_on_their_own_and_free_its_directory(
        filled: tuple[Path, Path], tmp_path: Path) -> None:
    fill_dir, replay = filled
    run_dir = tmp_path / "replay"
    process, workers = await replay_under_way(replay, run_dir)
    process.kill()
    await process.wait()
    for _ in range(100):  # each finds its pipe closed at its next message
        if not any(alive(pid) for pid in workers):
            break
        await asyncio.sleep(0.1)
    assert not any(alive(pid) for pid in workers)
    await finishes_as_filled(replay, run_dir, fill_dir)  # the run directory's lock went with them
