"""`[team]` in a run spec: a variable's name, never a URL; without it nothing of the team backend is even imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from errors import ConfigError
from runner.engine.spec import parse_spec
from tests.runner.engine_support import PROJECT_ROOT, TOY

SPEC = {"benchmark": TOY, "split": "train", "strategies": ["scripted"], "models": [{"model": "offline:oracle"}]}


def test_team_names_the_variable_holding_the_url() -> None:
    spec = parse_spec({**SPEC, "team": {}}, "run.toml")
    assert spec.team is not None and (spec.team.url_env, spec.team.budget) == ("TRIPBENCH_TEAM_URL", "default")
    assert parse_spec(SPEC, "run.toml").team is None
    assert "team" not in parse_spec({**SPEC, "team": {}}, "run.toml").result_fields()  # where the cap lives: no result


@pytest.mark.parametrize(("team", "field"), [
    ({"url_env": "postgresql://tb:secret@db/tripbench"}, "team.url_env"),  # a URL (with its password) in a file
    ({"url_env": "TEAM", "stale_s": 0}, "team.stale_s"),
    ({"url": "postgresql://db"}, "team.url"),
])
def test_a_url_or_a_bad_value_in_team_is_refused_naming_the_field(team: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=rf"run.toml: {field}") as raised:
        parse_spec({**SPEC, "team": team}, "run.toml")
    assert "secret" not in str(raised.value)


def test_a_run_without_team_never_imports_the_postgresql_client() -> None:
    probe = ("import sys, runner.engine.execute, runner.cli.main, runner.engine.dryrun; "
             "print('psycopg' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          cwd=PROJECT_ROOT)
    assert done.stdout.strip() == "False"
