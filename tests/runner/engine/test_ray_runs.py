"""`tripbench run SPEC --ray-address local`: rollouts on Ray actors, the driver the only writer; an actor SIGKILLed
mid-chunk has its chunk run again by a new actor, and no rollout is stored twice; a second Ctrl-C ends the run at
once. An address where no cluster answers ends the run with a clear error, at once or after `CONNECT_S`, and a signal
ends the wait for it.

Ray binds every interface even when told 127.0.0.1, so the run happens inside a network namespace of its own
(`unshare -rn`, loopback up): the outer test starts this module's inner tests there, with the mock LLM server inside
too; the team's PostgreSQL, started outside, listens on a Unix socket only (a file, which a network namespace does not
hide). No test traffic leaves that namespace's loopback.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from runner.mock_server import MockConfig
from runner.store.results import load_run
from tests.runner.engine_support import (
    PROJECT_ROOT,
    reference,
    rollouts_stored,
    run_cli,
    start_run,
    stored,
    until_rollouts_stored,
)
from tests.runner.toy_benchmark import ToyOptions

INSIDE = "TRIPBENCH_TEST_IN_NETNS"
"""Set in the namespace the outer test starts: the inner tests run only there."""
VARIABLE = "TRIPBENCH_TEAM_URL_TEST"
OPTIONS = {"tasks": 40, "max_calls": 8}
NAMESPACE_TIMEOUT_S = 900


def _why_not() -> str | None:
    """Why the Ray test cannot run here, or None."""
    if importlib.util.find_spec("ray") is None:
        return "Ray is not installed (pip install 'tripbench[ray]')"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare and ip (util-linux, iproute2) are needed to give Ray a network namespace of its own"
    probe = subprocess.run(["unshare", "-rn", "sh", "-c", "ip link set lo up"], capture_output=True, text=True,
                           check=False)
    if probe.returncode != 0:
        return f"no network namespace can be made here (unshare -rn: {probe.stderr.strip()})"
    return None


@pytest.mark.skipif(os.environ.get(INSIDE) == "1", reason="the namespace's own tests run here")
def test_a_ray_run_in_its_own_network_namespace(team_db: str) -> None:
    why = _why_not()
    if why is not None:
        pytest.skip(f"the Ray run is not tested: {why}; Ray binds every interface, so it runs only in a network "
                    "namespace of its own")
    inner = subprocess.run(
        ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$0" -m pytest -q -x -p no:cacheprovider "$1"',
         sys.executable, str(Path(__file__).relative_to(PROJECT_ROOT))], capture_output=True, text=True, check=False,
        cwd=PROJECT_ROOT, env={**os.environ, INSIDE: "1", VARIABLE: team_db, "PYTHONPATH": str(PROJECT_ROOT)},
        timeout=NAMESPACE_TIMEOUT_S)
    assert inner.returncode == 0 and "2 passed, 6 skipped" in inner.stdout, (  # skipped: the outside ones
        inner.stdout[-4000:] + inner.stderr[-2000:])


def _actor_pids() -> list[int]:
    """Processes of this machine running a RolloutWorker actor (Ray names them `ray::RolloutWorker...`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if command.startswith(b"ray::RolloutWorker"):
                pids.append(int(entry.name))
    return pids


outside = pytest.mark.skipif(os.environ.get(INSIDE) == "1" or importlib.util.find_spec("ray") is None,
                             reason="Ray is not installed, or in the network namespace (this test starts no cluster)")


@pytest.mark.skipif(os.environ.get(INSIDE) == "1", reason="needs no namespace")
def test_ray_address_without_ray_installed_is_refused_before_anything_runs(write_spec, tmp_path: Path) -> None:
    spec = write_spec("http://127.0.0.1:9", options=OPTIONS, team={"url_env": VARIABLE})
    without_ray = [sys.executable, "-c",  # `import ray` fails, as where it is not installed
                   "import sys; sys.modules['ray'] = None; from runner.cli.main import main; main()"]
    refused = subprocess.run([*without_ray, "run", str(spec), "--run-dir", str(tmp_path / "run"), "--ray-address",
                              "auto"], capture_output=True, text=True, check=False, cwd=PROJECT_ROOT,
                             env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert refused.returncode == 2, refused.stderr
    assert "Ray is not installed: pip install 'tripbench[ray]'" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (tmp_path / "run").exists()


@pytest.fixture
async def team_spec(start_mock_llm, write_spec, team_db: str, monkeypatch: pytest.MonkeyPatch,
                    toy_on_path: None) -> Path:
    """A team run's spec, its database initialised."""
    monkeypatch.setenv(VARIABLE, team_db)
    done = run_cli("team", "init", "--url-env", VARIABLE)
    assert done.returncode == 0, done.stdout + done.stderr
    server = await start_mock_llm()
    return write_spec(server.base_url, options=OPTIONS, team={"url_env": VARIABLE})


@outside
async def test_an_address_where_nothing_listens_ends_the_run_at_once_naming_it(team_spec: Path,
                                                                              tmp_path: Path) -> None:
    """Ray would retry it for many minutes, deaf to Ctrl-C (issue 39)."""
    started = time.monotonic()
    process = await start_run(team_spec, tmp_path / "run", "--ray-address", "127.0.0.1:1")
    output = (await asyncio.wait_for(process.communicate(), timeout=120))[0].decode()
    assert process.returncode == 1, output
    assert "--ray-address 127.0.0.1:1: no Ray cluster there (Connection refused)" in output
    assert "Traceback" not in output
    assert time.monotonic() - started < 30  # the connection was refused: no wait for Ray
    assert rollouts_stored(tmp_path / "run") == 0


DeafAddress = tuple[str, list[asyncio.StreamWriter]]
"""`HOST:PORT` where connections are accepted and never answered, and the connections accepted."""


@pytest.fixture
async def deaf_address() -> AsyncIterator[DeafAddress]:
    """An address that accepts connections and never answers (it holds them until the test ends)."""
    accepted: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    yield f"127.0.0.1:{server.sockets[0].getsockname()[1]}", accepted
    server.close()
    for writer in accepted:
        writer.close()
    await server.wait_closed()


@outside
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_ends_the_wait_for_a_cluster_at_once_with_exit_130(
        team_spec: Path, tmp_path: Path, deaf_address: DeafAddress, signum: signal.Signals) -> None:
    address, accepted = deaf_address
    process = await start_run(team_spec, tmp_path / "run", "--ray-address", address)
    while not accepted and process.returncode is None:  # the run looked whether anything listens: Ray's turn now
        await asyncio.sleep(0.05)
    await asyncio.sleep(1)
    assert process.returncode is None
    process.send_signal(signum)
    stopped = time.monotonic()
    output = (await asyncio.wait_for(process.communicate(), timeout=60))[0].decode()
    assert process.returncode == 130, output
    assert time.monotonic() - stopped < 10, output
    assert "interrupted: 0 rollouts finished in this session" in output and "Traceback" not in output


@outside
async def test_a_cluster_that_never_answers_ends_the_run_after_connect_s_naming_the_address(
        team_spec: Path, tmp_path: Path, deaf_address: DeafAddress) -> None:
    from runner.engine.ray_workers import CONNECT_S  # imports Ray, which may be missing

    address, _ = deaf_address
    started = time.monotonic()
    process = await start_run(team_spec, tmp_path / "run", "--ray-address", address)
    output = (await asyncio.wait_for(process.communicate(), timeout=CONNECT_S + 90))[0].decode()
    assert process.returncode == 1, output
    assert f"--ray-address {address}: no Ray cluster answered within {CONNECT_S:.0f} s" in output
    assert "Traceback" not in output
    assert CONNECT_S <= time.monotonic() - started < CONNECT_S + 60


inside = pytest.mark.skipif(os.environ.get(INSIDE) != "1", reason="runs inside a network namespace of its own, "
                            "started by test_a_ray_run_in_its_own_network_namespace")


@inside
async def test_ray_actors_inside_the_namespace(start_mock_llm, write_spec, tmp_path: Path) -> None:
    assert os.environ[VARIABLE]  # the team database the outer test made
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.1}))
    spec = write_spec(server.base_url, concurrency=4, options=OPTIONS, team={"url_env": VARIABLE})
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir, "--ray-address", "local")
    await until_rollouts_stored(run_dir, process, more=1)
    actors = _actor_pids()
    assert actors and process.returncode is None  # mid-run: the killed actor has a chunk in hand
    os.kill(actors[0], signal.SIGKILL)
    output, _ = await asyncio.wait_for(process.communicate(), timeout=600)
    text = output.decode()
    assert process.returncode == 0, text
    assert "died, their chunks'" in text, text  # the dead actor's chunk ran again on a new actor
    assert f"{OPTIONS['tasks']} rollouts stored" in text  # one store per rollout: none stored twice

    assert stored(run_dir) == await reference(ToyOptions(**OPTIONS))
    with load_run(run_dir) as results:
        assert len(results.rollouts) == OPTIONS["tasks"]
        # the actors' money, booked in the run's store as each rollout was stored
        assert results.spent_usd == pytest.approx(sum(r.cost_usd for r in results.rollouts)) and results.spent_usd > 0
        assert results.reserved_usd == 0
        assert len(results.sessions) == 1 and results.sessions[0].pid == process.pid  # the driver wrote it all


@inside
async def test_a_second_stop_ends_a_ray_run_at_once(start_mock_llm, write_spec, tmp_path: Path) -> None:
    """Ctrl-C twice: the chunks under way are dropped at once, not after the grace period (30 s), exit 130."""
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 120}))  # no reply comes in time
    model = {"model": f"openai-compatible:toy-stopped@{server.base_url}/v1", "name": "toy",
             "prices": {"input": 1.0, "output": 2.0}}  # a model of its own: the other test's cache has no answer
    spec = write_spec(server.base_url, concurrency=4, options=OPTIONS, models=[model],
                      team={"url_env": VARIABLE})
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir, "--ray-address", "local")
    while len(server.received) < 2 and process.returncode is None:  # both actors are waiting for a reply
        await asyncio.sleep(0.1)
    assert process.returncode is None
    process.send_signal(signal.SIGINT)
    await asyncio.sleep(1)
    process.send_signal(signal.SIGINT)
    stopped = time.monotonic()
    output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 130, output.decode()
    assert time.monotonic() - stopped < 20  # the grace period is 30 s
    assert rollouts_stored(run_dir) == 0  # a dropped chunk stores nothing: its rollouts run on resume
    for _ in range(100):  # the local cluster is shut down: no actor is left
        if not _actor_pids():
            break
        await asyncio.sleep(0.1)
    assert not _actor_pids()
