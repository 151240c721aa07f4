"""`tripbench run SPEC --ray-address local`: rollouts on Ray actors, the driver the only writer; an actor SIGKILLed
mid-chunk has its chunk run again by a new actor, and no rollout is stored twice.

Ray binds every interface even when told 127.0.0.1, so the run happens inside a network namespace of its own
(`unshare -rn`, loopback up): the outer test starts this module's inner test there, with the mock LLM server inside
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
from pathlib import Path

import pytest

from runner.mock_server import MockConfig
from runner.store.results import load_run
from tests.runner.engine_support import PROJECT_ROOT, reference, start_run, stored, until_rollouts_stored
from tests.runner.toy_benchmark import ToyOptions

INSIDE = "TRIPBENCH_TEST_IN_NETNS"
"""Set in the namespace the outer test starts: the inner test runs only there."""
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


def test_a_ray_run_in_its_own_network_namespace(team_db: str) -> None:
    why = _why_not()
    if why is not None:
        pytest.skip(f"the Ray run is not tested: {why}; Ray binds every interface, so it runs only in a network "
                    "namespace of its own")
    test = f"{Path(__file__).relative_to(PROJECT_ROOT)}::test_ray_actors_inside_the_namespace"
    inner = subprocess.run(
        ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$0" -m pytest -q -x -p no:cacheprovider "$1"',
         sys.executable, test], capture_output=True, text=True, check=False, cwd=PROJECT_ROOT,
        env={**os.environ, INSIDE: "1", VARIABLE: team_db, "PYTHONPATH": str(PROJECT_ROOT)},
        timeout=NAMESPACE_TIMEOUT_S)
    assert inner.returncode == 0 and "1 passed" in inner.stdout, inner.stdout[-4000:] + inner.stderr[-2000:]


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


@pytest.mark.skipif(os.environ.get(INSIDE) != "1",
                    reason="runs inside a network namespace of its own, started by test_a_ray_run_in_its_own_network_"
                           "namespace")
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
