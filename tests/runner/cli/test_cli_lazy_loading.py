"""`tripbench` imports a command's module only when it runs, so light calls never load matplotlib."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from runner.cli.lazy import LazyGroup
from runner.cli.main import COMMANDS, cli

REPO = Path(__file__).resolve().parents[3]
HEAVY = ("matplotlib", "reports", "runner.cli.demo", "openai", "anthropic")
PROBE = """
import sys
from runner.cli.main import cli
cli.main(sys.argv[1:], prog_name="tripbench", standalone_mode=False)
print(" ".join(name for name in {heavy} if name in sys.modules))
"""


@pytest.mark.parametrize("args", ["--help", "--version", "cache --help", "cache stats --cache-dir CACHE",
                                  "check-submission --help", "data --help", "evaluate --help", "mock-server --help",
                                  "run --help", "status --help", "tool --help"])
def test_a_light_command_imports_no_heavy_module(tmp_path: Path, args: str) -> None:
    imported = _heavy_imports(args, tmp_path)
    assert imported == "", f"tripbench {args} imported {imported}"


def test_report_help_loads_the_report_code_but_not_matplotlib(tmp_path: Path) -> None:
    """`report` imports the report code with its command, matplotlib (about half a second) only once it draws."""
    assert "matplotlib" not in _heavy_imports("report --help", tmp_path).split()


def _heavy_imports(args: str, tmp_path: Path) -> str:
    """The HEAVY modules a `tripbench ARGS` call imported, space-separated ("" if none)."""
    argv = [str(tmp_path) if arg == "CACHE" else arg for arg in args.split()]
    if "CACHE" in args:
        from cache import CacheStore

        CacheStore(tmp_path).close()  # a cache to inspect (inspecting never creates one)
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()[-1]


def test_the_command_list_is_what_click_prints_for_the_loaded_commands() -> None:
    """Each summary in COMMANDS is its command's help, whole (wrapped, never cut mid-phrase): help texts cannot
    drift."""
    loaded = {name: cli.get_command(click.Context(cli), name) for name in COMMANDS}
    listings = []
    for group in (LazyGroup("tripbench", lazy_commands=COMMANDS), LazyGroup("tripbench", lazy_commands={},
                                                                            commands=loaded)):
        formatter = click.HelpFormatter()
        group.format_commands(click.Context(group), formatter)
        listings.append(formatter.getvalue())
    assert listings[0] == listings[1]
    words = " ".join(listings[0].split())
    assert all(f"{name} {summary.summary}" in words for name, summary in COMMANDS.items())
    assert "..." not in listings[0]
