"""The spend cap holds for the money the provider bills, across SIGKILLs and a double Ctrl-C.

The reference is the mock server's own tally, which bills a completion when it decides it, before its latency (a
client killed while waiting has paid). The run is the real CLI in a subprocess; the ledger's view (`status`: spent +
reserved) must never be below what the provider billed, and the billed money never above the cap.
"""

from __future__ import annotations

import asyncio
import random
import re
import signal
from pathlib import Path

from runner.mock_server import MockConfig
from runner.store.results import load_run
from tests.runner.engine_support import PRICE, billed_usd, run_cli, start_run, until_rollouts_stored

CAP = 15.0
CONCURRENCY = 8


def toy_model(server) -> dict:  # type: ignore[no-untyped-def]
    return {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "prices": PRICE}


def booked_usd(run_dir: Path) -> float:
    """What the run's ledger says: money settled plus the worst case of the charges still open."""
    with load_run(run_dir) as results:
        return results.spent_usd + results.reserved_usd


async def test_billed_money_stays_under_the_cap_across_sigkills(start_mock_llm, write_spec, tmp_path: Path,
                                                                 toy_on_path) -> None:
    # Every call waits 0.1-0.3 s after it is billed, so each kill lands with calls paid and unanswered.
    server = await start_mock_llm(MockConfig(latency={"kind": "uniform", "low_s": 0.1, "high_s": 0.3}))
    spec = write_spec(server.base_url, concurrency=CONCURRENCY, max_cost=CAP, models=[toy_model(server)],
                      options={"tasks": 400, "max_calls": 6, "long_every": 2})
    run_dir = tmp_path / "run"
    rng = random.Random(20261124)
    kills, codes = 0, []
    while len(codes) < 30:
        process = await start_run(spec, run_dir)
        if kills < 6:
            await until_rollouts_stored(run_dir, process, more=rng.randint(1, 4))
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            if process.returncode is None:
                process.send_signal(signal.SIGKILL)
                kills += 1
        output, _ = await process.communicate()
        codes.append(process.returncode)
        billed = billed_usd(server)
        assert billed <= CAP, f"after {kills} kills the provider billed ${billed:.4f} under a ${CAP} cap"
        assert booked_usd(run_dir) >= billed - 1e-9, "the ledger forgot money the provider billed"
        if process.returncode == 3:  # the spend cap stopped the run: it is done
            break
    print(f"\nspend cap ${CAP:.2f}: {kills} SIGKILLs, exit codes {codes}; the provider billed "
          f"${billed_usd(server):.4f}, the ledger says ${booked_usd(run_dir):.4f}")
    assert kills >= 5 and codes[-1] == 3, (codes, output.decode())
    assert billed_usd(server) > CAP * 0.6  # the cap was used, not just respected by refusing early
    status = run_cli("status", str(run_dir))
    assert status.returncode == 0 and "spent $" in status.stdout


async def test_a_double_ctrl_c_leaves_every_billed_call_booked(start_mock_llm, write_spec, tmp_path: Path,
                                                               toy_on_path) -> None:
    server = await start_mock_llm(MockConfig(latency={"kind": "fixed", "seconds": 0.5}))
    spec = write_spec(server.base_url, concurrency=CONCURRENCY, models=[toy_model(server)],
                      options={"tasks": 100, "max_calls": 3})
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, more=2)
    process.send_signal(signal.SIGINT)
    await asyncio.sleep(0.05)
    process.send_signal(signal.SIGINT)  # the second one cancels the rollouts in flight, calls and all
    output, _ = await process.communicate()
    assert process.returncode == 130, output.decode()
    assert server.tally.served > 0 and booked_usd(run_dir) >= billed_usd(server) - 1e-9
    status = run_cli("status", str(run_dir))  # the calls cut off in flight show as reserved money
    assert status.returncode == 0 and re.search(r"spent \$[0-9.]+ \+ \$[0-9.]+ reserved", status.stdout), status.stdout

    # Resumed, the run finishes; the calls cancelled in flight stay booked at their worst case (billed, never
    # answered), so the ledger still covers the provider's bill.
    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    with load_run(run_dir) as results:
        assert len(results.rollouts) == 100
        assert results.spent_usd + results.reserved_usd >= billed_usd(server) - 1e-9
