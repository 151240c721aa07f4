"""What a newcomer is told: `-h` on every command, the models that need no key, the mock server's replies and how
to reach it, and "did you mean" for a model string the price table nearly knows."""

from __future__ import annotations

import subprocess
from pathlib import Path

import click

from runner.cli.main import COMMANDS, cli
from runner.store.results import load_run
from tests.runner.engine_support import CLI, PROJECT_ROOT, interrupt, run_cli

NEAR_MISS = "openai:gpt-4o-mni"


def command_paths() -> list[list[str]]:
    """Every command and subcommand of `tripbench`, plus each benchmark's forwarded commands by name."""
    paths: list[list[str]] = [[]]
    context = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(context, name)
        paths.append([name])
        if isinstance(command, click.Group):
            paths += [[name, sub] for sub in command.list_commands(context)]
    return paths + [["evaluate", "--benchmark", "natural-plan"], ["data", "fetch", "natural-plan"]]


def test_every_command_takes_dash_h(tmp_path: Path) -> None:
    for path in command_paths():
        done = run_cli(*path, "-h", home=tmp_path)
        assert done.returncode == 0 and done.stdout.startswith("Usage: "), (path, done.stderr)


def test_list_and_run_help_name_the_models_that_need_no_key(tmp_path: Path) -> None:
    listed = run_cli("list", home=tmp_path).stdout
    helped = " ".join(run_cli("run", "--help", home=tmp_path).stdout.split())
    for model in ("offline:oracle", "offline:noisy"):
        line = next(line for line in listed.splitlines() if line.split()[:1] == [model])
        assert len(line.split()) > 3  # with what it does
        assert f"{model}: " in helped
    assert "Models that need no key" in helped and "mock-server --reply" in listed


def test_prices_show_says_when_nothing_matches(tmp_path: Path) -> None:
    done = run_cli("prices", "show", NEAR_MISS, home=tmp_path)
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert "no model in the price table" in done.stderr and "did you mean openai:gpt-4o-mini?" in done.stderr
    assert run_cli("prices", "show", "zzz-no-such-model", home=tmp_path).returncode == 1
    found = run_cli("prices", "show", "openai:gpt-4o-mini", home=tmp_path)
    assert found.returncode == 0 and "  openai:gpt-4o-mini: " in found.stdout


def test_a_near_miss_model_string_is_named(natural_plan_data: Path, tmp_path: Path) -> None:
    spec = tmp_path / "run.toml"
    spec.write_text(f'benchmark = "natural-plan"\nsplit = "calendar"\nstrategies = ["direct"]\nmax_cost = 1.0\n\n'
                    f'[[models]]\nmodel = "{NEAR_MISS}"\n')
    capped = run_cli("run", str(spec), "--dry-run", home=tmp_path)
    assert capped.returncode == 2 and "(did you mean openai:gpt-4o-mini?)" in capped.stderr, capped.stderr
    entry = tmp_path / "entry.toml"
    entry.write_text(spec.read_text().replace(f'"{NEAR_MISS}"', f'"openai-compatible:x@http://h/v1"\n'
                                              f'prices = "{NEAR_MISS}"'))
    priced = run_cli("run", str(entry), "--dry-run", home=tmp_path)
    assert priced.returncode == 2 and "(did you mean openai:gpt-4o-mini?)" in priced.stderr, priced.stderr
    uncapped = tmp_path / "uncapped.toml"
    uncapped.write_text(spec.read_text().replace("max_cost = 1.0\n", f'[options]\ndata_dir = "{natural_plan_data}"\n'))
    noted = run_cli("run", str(uncapped), "--dry-run", home=tmp_path)  # runs on (a new model may be unpriced), noted
    assert f"note: the price table does not know {NEAR_MISS}: did you mean openai:gpt-4o-mini?" in noted.stderr


def test_mock_server_replies_as_the_oracle_over_http(natural_plan_data: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    with subprocess.Popen([*CLI, "mock-server", "--port", "0", "--reply", "oracle"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True,
                          env={"PYTHONPATH": str(PROJECT_ROOT), "TRIPBENCH_HOME": str(home)}) as server:
        try:
            assert server.stdout is not None
            openai_url = next(line.split()[-1] for line in server.stdout if "OpenAI base URL" in line)
            spec = tmp_path / "mock.toml"
            spec.write_text('benchmark = "natural-plan"\nsplit = "calendar"\nstrategies = ["direct"]\nlimit = 5\n'
                            f'cache_dir = "cache"\n\n[[models]]\nname = "via-mock"\n'
                            f'model = "openai-compatible:any-name@{openai_url}"\n'
                            'prices = { input = 0.0, output = 0.0 }\n')
            done = run_cli("run", str(spec), "--quiet", home=home)
            assert done.returncode == 0, done.stderr
        finally:
            interrupt(server)
    with load_run(tmp_path / "runs" / "mock") as results:
        verdicts = [v.passed for e in results.evaluations("official").values() for v in e.verdicts]
    assert len(verdicts) == 5 and all(verdicts)  # the oracle's answers, over HTTP (echo's would all fail)
