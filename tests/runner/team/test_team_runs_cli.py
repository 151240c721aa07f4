"""Team runs through the real CLI: `[team]` moves the cache, the spend cap and the rate limits to one PostgreSQL.

Two machines are simulated by two processes with separate data homes, cache folders and run directories that share
only the team database: the second pays for nothing the first already asked. A team database that cannot be
reached sends nothing; an unset variable is a spec error.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from runner.mock_server import MockConfig
from tests.runner.engine_support import PRICE, billed_usd, run_cli, start_run, stored

VARIABLE = "TRIPBENCH_TEAM_URL_TEST"

try:  # the `postgres` fixture says when it is missing (skipped with one summary line, or failed in CI)
    import psycopg
except ImportError:
    psycopg = None


def toy_model(server) -> dict:  # type: ignore[no-untyped-def]
    return {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "prices": PRICE, "rpm": 6000}


async def run(spec: Path, run_dir: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setenv("TRIPBENCH_HOME", str(home))
    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_a_second_machine_pays_nothing_for_the_first_ones_calls(start_mock_llm, write_spec, tmp_path: Path,
                                                                       team_db: str, toy_on_path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    server = await start_mock_llm(MockConfig())
    fields = {"models": [toy_model(server)], "max_cost": 50.0, "options": {"tasks": 30, "max_calls": 4},
              "team": {"url_env": VARIABLE, "budget": "night"}}
    first_spec = write_spec(server.base_url, name="first.toml", **fields)
    code, output = await run(first_spec, tmp_path / "first-run", tmp_path / "first-home", monkeypatch)
    assert code == 0, output
    served, billed = server.tally.served, billed_usd(server)
    assert served > 30

    # The other machine: its own data home, cache folder and run directory; only the database is shared.
    other = tmp_path / "other-machine"
    other.mkdir()
    second_spec = other / "second.toml"
    second_spec.write_text(first_spec.read_text(), encoding="utf-8")
    code, output = await run(second_spec, other / "run", other / "home", monkeypatch)
    assert code == 0, output
    print(f"\ntwo machines sharing the team database: the first made {served} calls (${billed:.4f}), the second "
          f"{server.tally.served - served} (${billed_usd(server) - billed:.4f})")
    assert server.tally.served == served  # every call answered from the team's cache
    assert stored(other / "run") == stored(tmp_path / "first-run")
    assert not (other / "cache").exists() and not (tmp_path / "cache").exists()  # no local cache in team mode
    dry = run_cli("run", str(second_spec), "--run-dir", str(other / "fresh"), "--dry-run")
    assert dry.returncode == 0, dry.stderr  # a dry run reads the team's cache too
    assert server.tally.served == served

    with psycopg.connect(team_db, autocommit=True) as connection:
        entries, = connection.execute("SELECT count(*) FROM tb_cache").fetchone()
        spent, reserved = connection.execute("SELECT spent, reserved FROM tb_budget WHERE name = 'night'").fetchone()
        charges = connection.execute("SELECT state, count(*) FROM tb_charge GROUP BY state").fetchall()
        alive, = connection.execute("SELECT count(*) FROM tb_worker WHERE alive").fetchone()
    assert entries == served and charges == [("settled", served)] and alive == 0
    assert reserved == 0 and abs(spent - Decimal(repr(billed))) < Decimal("1e-6")  # the team books what was billed

    status = run_cli("team", "status", "--url-env", VARIABLE, "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["cache_entries"] == served and shown["budgets"][0]["name"] == "night"
    assert shown["rate_limits"] == [f"openai-compatible/toy@{server.base_url.split('://')[1]}/v1"]
    assert "s3cret" not in status.stdout


async def test_the_team_cap_stops_runs_on_two_machines_together(start_mock_llm, write_spec, tmp_path: Path,
                                                                team_db: str, toy_on_path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    server = await start_mock_llm(MockConfig())
    cap = 1.0
    codes = []
    for machine, tasks in (("one", 200), ("two", 201)):  # other rollouts on the second: its calls are not the first's
        folder = tmp_path / machine
        folder.mkdir()
        spec = write_spec(server.base_url, name=f"{machine}/run.toml", models=[toy_model(server)], max_cost=cap,
                          options={"tasks": tasks, "max_calls": 3}, team={"url_env": VARIABLE})
        code, output = await run(spec, folder / "run", folder / "home", monkeypatch)  # alone, each could spend it all
        codes.append(code)
    assert codes == [3, 3], codes  # both stopped by the spend cap
    assert billed_usd(server) <= cap


async def test_an_unreachable_team_database_sends_nothing(start_mock_llm, write_spec, tmp_path: Path, toy_on_path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_mock_llm(MockConfig())
    spec = write_spec(server.base_url, models=[toy_model(server)], team={"url_env": VARIABLE})
    monkeypatch.delenv(VARIABLE, raising=False)
    code, output = await run(spec, tmp_path / "run", tmp_path / "home", monkeypatch)
    assert code == 2 and f"team.url_env: expected the environment variable {VARIABLE}" in output, output

    monkeypatch.setenv(VARIABLE, f"postgresql://tb:s3cret@/tripbench?host={tmp_path / 'nowhere'}")
    code, output = await run(spec, tmp_path / "run", tmp_path / "home", monkeypatch)
    assert code == 1 and "cannot connect" in output and "nothing was sent" in output, output
    assert "s3cret" not in output and "Traceback" not in output
    assert server.tally.requests == 0


def test_team_init_creates_the_schema_once(team_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    for _ in range(2):
        done = run_cli("team", "init", "--url-env", VARIABLE)
        assert done.returncode == 0 and "team schema 2 ready" in done.stdout, done.stderr
    with psycopg.connect(team_db, autocommit=True) as connection:
        assert connection.execute("SELECT value FROM tb_meta WHERE name = 'key_scheme'").fetchone() == ("v1",)
    monkeypatch.delenv(VARIABLE)
    done = run_cli("team", "init", "--url-env", VARIABLE)
    assert done.returncode == 2 and VARIABLE in done.stderr
