"""No secret of a team database reaches the screen or a file: a canary password in every malformed form psycopg used
to echo, an API key in the variable `[team] url_env` wrongly names, a URL given to `--url-env`, each through the real
CLI (`team status`, `team init`, a run with `[team]`); every output and every file under the run directories and the
data home is searched for the canary (as `tests/runner/cli/test_no_secret_written.py` does for model URLs)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.runner.cli.test_no_secret_written import leaks
from tests.runner.engine_support import run_cli
from tests.runner.team.test_team_runs_cli import toy_model

CANARY = "CANARYpw7731"
VARIABLE = "TRIPBENCH_TEAM_URL_TEST"


def cases(nowhere: Path) -> dict[str, tuple[str, str, str]]:
    """Case -> (the variable `url_env` names, its value, what the message must say)."""
    socket = f"host={nowhere}"
    return {
        "bad %-escape": (f"{VARIABLE}_1", f"postgresql://tb:{CANARY}%zz@/tripbench?{socket}", "invalid %-escape"),
        "space": (f"{VARIABLE}_2", f"postgresql://tb:{CANARY} two@/tripbench?{socket}", "holds a space"),
        "unclosed IPv6 bracket": (f"{VARIABLE}_3", f"postgresql://tb:{CANARY}@[::1/tripbench", "IPv6"),
        "@ in the password": (f"{VARIABLE}_4", f"postgresql://tb:{CANARY}@x@/tripbench?{socket}", "cannot connect"),
        "unreachable": (f"{VARIABLE}_5", f"postgresql://tb:{CANARY}@/tripbench?{socket}", "cannot connect"),
        "keyword/value": (f"{VARIABLE}_6", f"{socket} password={CANARY} dbname=tripbench", "cannot connect"),
        "an API key's variable": ("OPENAI_API_KEY", f"sk-{CANARY}", "not postgresql://"),
        "a variable of another secret": ("OTHER_CREDENTIALS", CANARY, "not postgresql://"),
    }


async def test_a_team_databases_secrets_are_never_shown_nor_written(start_mock_llm, write_spec, tmp_path: Path,
                                                                     toy_on_path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_mock_llm()
    home = tmp_path / "home"
    monkeypatch.setenv("TRIPBENCH_HOME", str(home))
    calls: list[tuple[str, list[str], str]] = []
    for number, (case, (variable, value, says)) in enumerate(cases(tmp_path / "nowhere").items()):
        monkeypatch.setenv(variable, value)
        spec = write_spec(server.base_url, name=f"run{number}.toml", models=[toy_model(server)], max_cost=1.0,
                          options={"tasks": 2, "max_calls": 2}, team={"url_env": variable})
        calls += [(case, args, says) for args in (
            ["team", "status", "--url-env", variable], ["team", "init", "--url-env", variable],
            ["run", str(spec), "--run-dir", str(tmp_path / f"run{number}")])]
    url = f"postgresql://tb:{CANARY}@/tripbench?host={tmp_path / 'nowhere'}"
    calls += [("a URL for --url-env", ["team", command, "--url-env", url], "not the URL itself")
              for command in ("status", "init")]
    done = await asyncio.gather(*(asyncio.to_thread(run_cli, *args, home=home) for _, args, _ in calls))
    for (case, args, says), result in zip(calls, done, strict=True):
        shown = result.stdout + result.stderr
        assert result.returncode in (1, 2) and "Traceback" not in shown, (case, args, shown)
        assert CANARY not in shown and says in shown, (case, args, shown)
    assert server.tally.requests == 0  # fail closed: no team database, no call
    assert leaks(tmp_path, *(result.stdout + result.stderr for result in done), canaries=[CANARY]) == []
    assert [path.name for path in tmp_path.glob("run?/results.sqlite")]  # runs that got as far as writing: searched
