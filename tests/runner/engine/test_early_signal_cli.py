"""A SIGTERM in the first instants of `tripbench run` (a supervisor stopping it at once) is an interruption: exit 130,
as later in the run, not the end of the process by the signal."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from tests.runner.engine.engine_support import start_run

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (`SigCgt` in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) & SIGTERM_BIT)


async def test_a_sigterm_before_the_run_started_exits_130(start_mock_llm, write_spec, tmp_path: Path,
                                                          toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, options={"tasks": 5, "max_calls": 1})
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    while process.returncode is None and not catches_sigterm(process.pid):
        await asyncio.sleep(0.001)
    assert not run_dir.exists()  # tripbench catches SIGTERM before it opens the run, not once its rollouts start
    process.send_signal(signal.SIGTERM)
    output, _ = await process.communicate()
    assert process.returncode == 130, output.decode()
    assert "Traceback" not in output.decode()
