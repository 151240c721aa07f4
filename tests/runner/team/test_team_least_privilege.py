"""A least-privilege database user, through the real CLI against a real PostgreSQL: after the owner's `tripbench team
init`, a user granted only DML (the README's GRANTs) runs `team status` and a team run, issuing no DDL; every schema
problem (not set up, too old, off the `search_path`, a version that is no number, a privilege missing) is one message
naming the fix, exit 1, no traceback."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.runner.engine_support import run_cli, start_run
from tests.runner.team.test_team_runs_cli import toy_model

VARIABLE = "TRIPBENCH_TEAM_URL_TEST"

try:  # the `postgres` fixture says when it is missing
    import psycopg
except ImportError:
    psycopg = None

GRANTS = """
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role};
"""
"""What the README tells the owner to grant (EXECUTE on the functions is PUBLIC's by default)."""


def add_role(team_db: str, request: pytest.FixtureRequest, name: str = "dml", *, grants: str = GRANTS) -> str:
    """A login role with no right but `grants` on `team_db` (and no CREATE on its schema); returns its URL."""
    role = f"tb_{name}_{hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]}"
    with psycopg.connect(team_db, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN")
        owner.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")  # as PostgreSQL 15 does: no DDL for the role
        for statement in filter(str.strip, grants.format(role=role).split(";")):
            owner.execute(statement)
    user = team_db.split("://", 1)[1].split("@", 1)[0]
    return team_db.replace(f"://{user}@", f"://{role}@", 1)


def cli(*args: str) -> tuple[int, str]:
    done = run_cli(*args)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


def test_a_dml_only_user_gets_one_clear_message_for_each_schema_problem(
        team_db: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    dml = add_role(team_db, request)
    monkeypatch.setenv(VARIABLE, dml)
    code, shown = cli("team", "status", "--url-env", VARIABLE)  # an empty database
    assert code == 1 and "not set up here: run `tripbench team init` as the database's owner" in shown, shown
    code, shown = cli("team", "init", "--url-env", VARIABLE)  # not the owner: cannot create it either
    assert code == 1 and "may not create or change the team schema: run `tripbench team init` as the database's " \
        "owner" in shown, shown

    monkeypatch.setenv(VARIABLE, team_db)
    assert cli("team", "init", "--url-env", VARIABLE)[0] == 0  # the owner
    monkeypatch.setenv(VARIABLE, dml)
    code, shown = cli("team", "status", "--url-env", VARIABLE)  # the grants came before the tables: they hold none
    assert code == 1 and "this user may not read the team tables (tb_meta)" in shown, shown
    role = dml.split("://")[1].split("@")[0]

    def owner_runs(statement: str) -> None:
        with psycopg.connect(team_db, autocommit=True) as owner:
            for part in filter(str.strip, statement.format(role=role).split(";")):
                owner.execute(part)

    owner_runs("GRANT SELECT ON tb_meta TO {role}")
    code, shown = cli("team", "status", "--url-env", VARIABLE)
    assert code == 1 and ("lacks SELECT on tb_budget, SELECT on tb_cache, SELECT on tb_charge, SELECT on tb_claim, "
                          "SELECT on tb_rate, SELECT on tb_worker: the database's owner grants them") in shown, shown
    owner_runs(GRANTS)
    assert cli("team", "status", "--url-env", VARIABLE)[0] == 0
    assert cli("team", "init", "--url-env", VARIABLE)[0] == 0  # current: nothing to do, no DDL tried

    for statement, expected in [
        ("UPDATE tb_meta SET value = 'two' WHERE name = 'schema'", "tb_meta records schema 'two', not a number"),
        ("UPDATE tb_meta SET value = '0' WHERE name = 'schema'", "run `tripbench team init` as the database's owner"),
        ("UPDATE tb_meta SET value = '1' WHERE name = 'schema'; ALTER ROLE {role} SET search_path = elsewhere",
         "the team tables are in schema public, which the search_path (elsewhere) leaves out"),
        ("ALTER ROLE {role} RESET search_path; REVOKE SELECT ON tb_meta FROM {role}",
         "this user may not read the team tables (tb_meta)"),
    ]:
        owner_runs(statement)
        for command in ("status", "init"):
            code, shown = cli("team", command, "--url-env", VARIABLE)
            assert code == 1 and expected in shown, (statement, command, shown)


async def test_a_dml_only_user_runs_a_team_run(start_mock_llm, write_spec, team_db: str,
                                               request: pytest.FixtureRequest, tmp_path: Path, toy_on_path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    assert cli("team", "init", "--url-env", VARIABLE)[0] == 0
    dml = add_role(team_db, request)
    monkeypatch.setenv(VARIABLE, dml)
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home"))
    server = await start_mock_llm()
    spec = write_spec(server.base_url, models=[toy_model(server)], max_cost=5.0, options={"tasks": 6, "max_calls": 3},
                      team={"url_env": VARIABLE, "budget": "least"})
    process = await start_run(spec, tmp_path / "run")
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    assert server.tally.served > 0
    with psycopg.connect(team_db, autocommit=True) as owner:
        assert owner.execute("SELECT count(*) FROM tb_cache").fetchone() == (server.tally.served,)
        assert owner.execute("SELECT count(*) FROM tb_charge WHERE state = 'settled'").fetchone() == (
            server.tally.served,)
    code, shown = cli("team", "status", "--url-env", VARIABLE)
    assert code == 0 and "budget least" in shown, shown

    read_only = add_role(team_db, request, "read", grants="GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    monkeypatch.setenv(VARIABLE, read_only)
    assert cli("team", "status", "--url-env", VARIABLE)[0] == 0  # looking needs SELECT only
    process = await start_run(spec, tmp_path / "other-run")
    output, _ = await process.communicate()
    assert process.returncode == 1 and "lacks DELETE on tb_budget" in output.decode(), output.decode()
    assert "Traceback" not in output.decode()


async def test_the_owners_first_run_still_creates_the_schema(start_mock_llm, write_spec, team_db: str, tmp_path: Path,
                                                              toy_on_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home"))
    code, shown = cli("team", "status", "--url-env", VARIABLE)  # looking creates nothing
    assert code == 1 and "not set up here" in shown, shown
    server = await start_mock_llm()
    spec = write_spec(server.base_url, models=[toy_model(server)], options={"tasks": 2, "max_calls": 2},
                      team={"url_env": VARIABLE})
    process = await start_run(spec, tmp_path / "run")
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    assert cli("team", "status", "--url-env", VARIABLE)[0] == 0
