"""A team database that restarts mid-run: an ordinary event, not a loss.

Each test has a PostgreSQL cluster of its own, restarted as an upgrade or a failover does (a fast shutdown ending every
connection, a while with nothing listening, a start on the same socket), while real `tripbench run` processes talk to
the mock LLM server. What must hold: no rollout is `crashed`, the same command finishes what an outage stopped, the
mock server billed each distinct request once (every call it served is one entry of the team's cache), the ledger
adds up with nothing left reserved, and the cap holds.
"""

from __future__ import annotations

import asyncio
import json
import signal
from decimal import Decimal
from pathlib import Path

import pytest

from benchmarks.base import CRASHED, DELIVERED, INTERRUPTED
from providers.errors import BudgetExhausted
from runner.mock_server import MockConfig
from runner.mock_server.config import Latency
from runner.store.results import load_run
from tests.postgres_server import PostgresServer
from tests.runner.engine_support import billed_usd, run_cli, start_run, until_rollouts_stored
from tests.runner.team.test_team_runs_cli import VARIABLE, toy_model

try:  # the `postgres` fixture says when it is missing (skipped with one summary line, or failed in CI)
    import psycopg
except ImportError:
    psycopg = None


@pytest.fixture
def team_run(restartable: PostgresServer, start_mock_llm, write_spec, tmp_path: Path, toy_on_path,
             monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """`server, spec = await team_run(tasks, latency_s, **team)`: a toy run against the mock server, sharing the
    restartable cluster's team database under the budget `night`, with a $50 cap."""
    monkeypatch.setenv(VARIABLE, restartable.url)
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home"))

    async def make(tasks: int, latency_s: float = 0.05, concurrency: int | None = None, **team: object):
        server = await start_mock_llm(MockConfig(latency=Latency(kind="fixed", seconds=latency_s)))
        fields = {"concurrency": concurrency} if concurrency else {}
        spec = write_spec(server.base_url, models=[toy_model(server)], max_cost=50.0, **fields,
                          options={"tasks": tasks, "max_calls": 4},
                          team={"url_env": VARIABLE, "budget": "night", **team})
        return server, spec
    return make


def statuses(run_dir: Path) -> dict[str, int]:
    with load_run(run_dir) as results:
        counts: dict[str, int] = {}
        for rollout in results.rollouts:
            counts[rollout.status] = counts.get(rollout.status, 0) + 1
        return counts


def book(url: str) -> tuple[int, Decimal, Decimal, list[tuple[str, int]]]:
    """Cache entries, the budgets' spent and reserved, the charges by state."""
    with psycopg.connect(url, autocommit=True) as connection:
        entries, = connection.execute("SELECT count(*) FROM tb_cache").fetchone()
        spent, reserved = connection.execute("SELECT coalesce(sum(spent), 0), coalesce(sum(reserved), 0) "
                                             "FROM tb_budget").fetchone()
        charges = connection.execute("SELECT state, count(*) FROM tb_charge GROUP BY state ORDER BY 1").fetchall()
    return entries, spent, reserved, charges


async def finish(process: asyncio.subprocess.Process) -> tuple[int, str]:
    output, _ = await asyncio.wait_for(process.communicate(), 240)
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_a_run_rides_out_two_restarts_and_pays_each_call_once(restartable: PostgresServer, team_run,
                                                                      tmp_path: Path) -> None:
    server, spec = await team_run(60)
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, 5)
    await asyncio.to_thread(restartable.restart, 0.2)  # a restart as the issue's: 0.2 s down
    await until_rollouts_stored(run_dir, process, 10)
    await asyncio.to_thread(restartable.restart, 3.0)  # a failover's few seconds
    code, output = await finish(process)
    assert code == 0, output
    assert "Traceback" not in output
    assert statuses(run_dir) == {DELIVERED: 60}
    entries, spent, reserved, charges = book(restartable.url)
    print(f"\ntwo restarts (0.2 s and 3 s down) mid-run: {server.tally.served} calls billed, {entries} cache entries, "
          f"${spent:.4f} booked of ${billed_usd(server):.4f} billed")
    assert server.tally.served == entries  # none paid twice
    assert reserved == 0 and dict(charges).get("open", 0) == 0
    assert abs(spent - Decimal(repr(billed_usd(server)))) < Decimal("1e-6")  # every settlement was written


async def test_an_outage_past_its_limit_interrupts_and_the_same_command_finishes(restartable: PostgresServer,
                                                                                   team_run, tmp_path: Path) -> None:
    server, spec = await team_run(40, outage_s=1.5)
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, 5)
    await asyncio.to_thread(restartable.restart, 8.0)  # down longer than the run waits
    code, output = await finish(process)
    stopped = statuses(run_dir)
    assert CRASHED not in stopped, output
    assert code == 4 and stopped.get(INTERRUPTED, 0) > 0, output  # stored, with "run them again with"
    assert "run them again with" in output and "Traceback" not in output

    code, output = await finish(await start_run(spec, run_dir))  # the same command
    assert code == 0, output
    assert statuses(run_dir) == {DELIVERED: 40}
    entries, spent, reserved, charges = book(restartable.url)
    assert server.tally.served == entries  # the answers paid during the outage were kept, not paid again
    assert reserved == 0 and dict(charges).get("open", 0) == 0  # settlements kept through it were written
    assert abs(spent - Decimal(repr(billed_usd(server)))) < Decimal("1e-6")
    assert not (run_dir / "team-unwritten.sqlite").exists() or "entries kept" in output


async def test_settlements_lost_to_a_restart_are_written_and_free_the_cap(restartable: PostgresServer) -> None:
    from runner.team import Team

    url = restartable.url
    one, other = await Team.join(url), await Team.join(url)
    try:
        first, second = await one.ledger("night", 1.0), await other.ledger("night", 1.0)
        held = await first.open(0.8, model="m", cache_key="a")
        await asyncio.to_thread(restartable.stop_only)  # down: the settlement below cannot be written now
        first.settle(held, 0.3)
        await asyncio.sleep(0.5)
        await asyncio.to_thread(restartable.start_again)
        # Once the settlement is written, 0.3 + 0.5 fits: the other process is not held at the cap for ever.
        second.settle(await asyncio.wait_for(second.open(0.5, model="m", cache_key="b"), 20), 0.5)
        with pytest.raises(BudgetExhausted):  # 0.8 spent: 0.5 more can never fit, whatever is in flight
            await asyncio.wait_for(first.open(0.5, model="m", cache_key="c"), 5)
    finally:
        await one.aclose()
        await other.aclose()
    _, spent, reserved, charges = book(url)
    assert (spent, reserved, charges) == (Decimal("0.8"), 0, [("settled", 2)])


async def test_a_reservation_that_can_never_fit_ends_at_once(team_db: str) -> None:
    from runner.team import Team

    one, other = await Team.join(team_db), await Team.join(team_db)
    try:
        first, second = await one.ledger("night", 1.0), await other.ledger("night", 1.0)
        first.settle(await first.open(0.7, model="m", cache_key="a"), 0.7)
        await first.aclose()  # written
        await second.open(0.1, model="m", cache_key="b")  # in flight elsewhere, held open
        with pytest.raises(BudgetExhausted):  # 0.7 + 0.4 > 1.0 even if the 0.1 comes back as nothing
            await asyncio.wait_for(first.open(0.4, model="m", cache_key="c"), 1.0)
    finally:
        await one.aclose()
        await other.aclose()


async def test_a_budget_keeps_one_cap(team_db: str, start_mock_llm, write_spec, tmp_path: Path, toy_on_path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home"))
    server = await start_mock_llm(MockConfig())
    fields = {"models": [toy_model(server)], "options": {"tasks": 3, "max_calls": 2}}
    first = write_spec(server.base_url, name="first.toml", max_cost=5.0,
                       team={"url_env": VARIABLE, "budget": "sweep"}, **fields)
    code, output = await finish(await start_run(first, tmp_path / "first"))
    assert code == 0, output
    served = server.tally.served

    higher = write_spec(server.base_url, name="higher.toml", max_cost=10.0,
                        team={"url_env": VARIABLE, "budget": "sweep"},
                        **{**fields, "options": {"tasks": 4, "max_calls": 2}})
    code, output = await finish(await start_run(higher, tmp_path / "higher"))
    assert code == 2, output
    assert "$5" in output and "$10" in output and "tripbench team budget sweep --cap" in output, output
    assert server.tally.served == served  # refused before anything was sent

    changed = run_cli("team", "budget", "sweep", "--cap", "10", "--url-env", VARIABLE)
    assert changed.returncode == 0, changed.stderr
    assert "$5" in changed.stdout and "$10" in changed.stdout
    code, output = await finish(await start_run(higher, tmp_path / "higher"))
    assert code == 0, output
    shown = json.loads(run_cli("team", "status", "--url-env", VARIABLE, "--json").stdout)
    assert [(b["name"], b["cap"]) for b in shown["budgets"]] == [("sweep", 10.0)]


async def test_a_claim_taken_by_another_process_after_its_connection_died_fences_the_first(
        restartable: PostgresServer) -> None:
    from runner.team import Team
    from runner.team.shards import ShardClaim, ShardLost

    url = restartable.url
    team = await Team.join(url)
    first = await ShardClaim.take(url, {"run": "x"}, "1/2")
    try:
        ledger = await team.ledger("night", 10.0, claim=first)
        ledger.settle(await ledger.open(0.1, model="m", cache_key="a"), 0.1)
        with psycopg.connect(url, autocommit=True) as admin:  # the claim's connection dies (as in a restart) ...
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE application_name LIKE 'tripbench shard%'")
        second = await ShardClaim.take(url, {"run": "x"}, "1/2")  # ... and another process takes the shard first
        try:
            with pytest.raises(ShardLost, match="another process took this shard"):
                await ledger.open(0.1, model="m", cache_key="b")  # refused by the database: nothing is sent
            assert first.lost is not None
        finally:
            await second.release()
    finally:
        await first.release()
        await team.aclose()


async def test_a_holder_takes_its_claim_again_after_a_restart(restartable: PostgresServer) -> None:
    from runner.team.shards import ShardClaim, ShardTaken

    url = restartable.url
    claim = await ShardClaim.take(url, {"run": "x"}, "1/2")
    try:
        await asyncio.to_thread(restartable.restart, 0.5)
        await asyncio.sleep(3.0)  # the holder's watch finds its connection gone and takes the lock again
        assert claim.lost is None
        with pytest.raises(ShardTaken):  # still held: a second process is refused
            await ShardClaim.take(url, {"run": "x"}, "1/2")
    finally:
        await claim.release()


async def test_one_shard_two_processes_and_a_restart_the_shard_runs_in_one_and_pays_once(
        restartable: PostgresServer, team_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A restart drops the shard's claim under its holder; a second process asking for the same shard right after
    is refused (the holder took it again) or takes it (the holder then stops before its next call): either way the
    shard runs in one process to its end, and no call is paid twice."""
    server, spec = await team_run(160, latency_s=0.2, concurrency=4)
    first_dir, second_dir = tmp_path / "one" / "night", tmp_path / "two" / "night"  # two machines, one run name
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home-one"))
    first = await start_run(spec, first_dir, "--shard", "1/2")
    await until_rollouts_stored(first_dir / "shard-1-of-2", first, 5)
    await asyncio.to_thread(restartable.restart, 1.0)
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home-two"))
    second = await start_run(spec, second_dir, "--shard", "1/2")
    (first_code, first_output), (second_code, second_output) = await asyncio.gather(finish(first), finish(second))
    outputs = first_output + second_output
    assert sorted([first_code, second_code]) == [0, 1], outputs
    assert "running already" in outputs or "another process took this shard" in outputs, outputs
    assert "Traceback" not in outputs
    finished = first_dir if first_code == 0 else second_dir
    assert CRASHED not in statuses(finished / "shard-1-of-2")
    entries, _, reserved, _ = book(restartable.url)
    assert server.tally.served == entries  # none paid twice


async def test_a_cache_read_while_the_database_is_down_waits_and_is_never_a_miss(restartable: PostgresServer) -> None:
    from runner.ladder.cache_reads import CacheReads
    from runner.team import TeamCache, TeamUnavailable
    from tests.cache.test_cache_store import ask, entry_for

    key, entry = entry_for(ask("hello"), cost=0.125)
    cache = TeamCache(restartable.url)
    try:
        cache.set_many({key: entry})
        await asyncio.to_thread(restartable.stop_only)
        with pytest.raises(TeamUnavailable) as raised:  # not an empty answer, which the gateway would pay for
            cache.get_many([key])
        assert raised.value.retry_after_s is not None  # within the outage limit: try again after that
        reading = asyncio.ensure_future(CacheReads(cache).get(key))
        await asyncio.sleep(1.0)
        assert not reading.done()  # waiting, nothing decided
        await asyncio.to_thread(restartable.start_again)
        found = await asyncio.wait_for(reading, 20)
        assert found is not None and found.cost_usd == 0.125
    finally:
        cache.close()


async def test_ctrl_c_while_the_database_is_down_stops_at_once_and_the_same_command_finishes(
        restartable: PostgresServer, team_run, tmp_path: Path) -> None:
    """Rollouts waiting for a database that went away are cut by a second Ctrl-C; closing does not wait the outage
    out (300 s here): what the database could not take is spooled in the run directory, and written by the resume."""
    server, spec = await team_run(40)
    run_dir = tmp_path / "run"
    process = await start_run(spec, run_dir)
    await until_rollouts_stored(run_dir, process, 5)
    await asyncio.to_thread(restartable.stop_only)
    await asyncio.sleep(1.0)
    process.send_signal(signal.SIGINT)
    await asyncio.sleep(1.0)
    process.send_signal(signal.SIGINT)
    code, output = await asyncio.wait_for(finish(process), 60)  # not the outage's 300 s
    assert code == 130, output
    assert CRASHED not in statuses(run_dir) and "Traceback" not in output

    await asyncio.to_thread(restartable.start_again)
    code, output = await finish(await start_run(spec, run_dir))
    assert code == 0, output
    assert statuses(run_dir) == {DELIVERED: 40}
    entries, spent, reserved, charges = book(restartable.url)
    assert server.tally.served == entries and reserved == 0 and dict(charges).get("open", 0) == 0
