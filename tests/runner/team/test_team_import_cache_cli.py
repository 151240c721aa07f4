"""A machine joining the team brings its local disk cache along (`tripbench team import-cache DIR`), a team run with
a local cache beside it points there, and a team run's dry run starts from what the team budget already spent,
through the real CLI (issue 44)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from runner.mock_server import MockConfig
from tests.runner.engine_support import PRICE, run_cli, start_run

VARIABLE = "TRIPBENCH_TEAM_URL_TEST"

try:  # the `postgres` fixture says when it is missing (skipped with one summary line, or failed in CI)
    import psycopg
except ImportError:
    psycopg = None


async def run(spec: Path, run_dir: Path) -> tuple[int, str]:
    process = await start_run(spec, run_dir)
    output, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_a_local_cache_is_shared_once_and_the_team_pays_nothing_again(
        start_mock_llm, write_spec, tmp_path: Path, team_db: str, toy_on_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, team_db)
    monkeypatch.setenv("TRIPBENCH_HOME", str(tmp_path / "home"))
    server = await start_mock_llm(MockConfig())
    model = {"model": f"openai-compatible:toy@{server.base_url}/v1", "name": "toy", "prices": PRICE}
    fields = {"models": [model], "options": {"tasks": 12, "max_calls": 3}}
    code, output = await run(write_spec(server.base_url, name="alone.toml", **fields), tmp_path / "alone")
    assert code == 0, output
    paid = server.tally.served
    local = tmp_path / "cache"  # the spec's cache_dir: the calls this machine paid before it joined the team

    team = {"url_env": VARIABLE, "budget": "night"}
    spec = write_spec(server.base_url, name="team.toml", max_cost=50.0, team=team, **fields)
    dry = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "team"), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"tripbench team import-cache {local}" in dry.stderr  # pointed to before anything is paid again
    assert "$0.00 spent before by the team budget night" in dry.stdout

    imported = await asyncio.to_thread(run_cli, "team", "import-cache", str(local), "--url-env", VARIABLE)
    assert imported.returncode == 0, imported.stderr
    assert f"{paid} entries of {local} shared, 0 the team already held" in imported.stdout, imported.stdout
    again = await asyncio.to_thread(run_cli, "team", "import-cache", str(local), "--url-env", VARIABLE)
    assert f"0 entries of {local} shared, {paid} the team already held" in again.stdout, again.stdout

    code, output = await run(spec, tmp_path / "team")
    assert code == 0, output
    assert server.tally.served == paid  # every call came from the imported entries

    more = write_spec(server.base_url, name="more.toml", max_cost=50.0, team=team,
                      **{**fields, "options": {"tasks": 20, "max_calls": 3}})
    code, output = await run(more, tmp_path / "more")  # pays for the 8 new tasks, under the team budget
    assert code == 0 and server.tally.served > paid, output
    with psycopg.connect(team_db, autocommit=True) as connection:
        spent, = connection.execute("SELECT (spent + reserved)::float8 FROM tb_budget WHERE name = 'night'").fetchone()
    assert spent > 0
    dry = await asyncio.to_thread(run_cli, "run", str(more), "--run-dir", str(tmp_path / "fresh"), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    shown = re.search(r"at most \$([0-9.]+): the spend cap \(\$50\.00, \$([0-9.]+) spent before by the team budget "
                      "night\\)", dry.stdout)
    assert shown is not None, dry.stdout
    assert float(shown.group(2)) == round(spent, 2) and float(shown.group(1)) == round(50.0 - spent, 2)


def test_import_cache_of_a_folder_that_is_no_cache_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(VARIABLE, "postgresql://nobody@/nowhere?host=/nonexistent")  # never reached
    refused = run_cli("team", "import-cache", str(tmp_path), "--url-env", VARIABLE)
    assert refused.returncode == 2 and "not a tripbench cache (no cache.db)" in refused.stderr, refused.stderr
    assert not (tmp_path / "cache.db").exists()
