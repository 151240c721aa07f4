"""`tripbench data`: fetch, import and describe each benchmark's data in the one data home.

The data home is `--home`, else `$TRIPBENCH_HOME`, else the user data directory + `/tripbench`; every
benchmark keeps its data there and every default (run specs, `evaluate --split`) reads from there.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import click

from benchmarks.registry import DEFAULT, available, get_benchmark
from datahome import default_home, home_option, stale_staging
from errors import UserError
from runner.cli.dispatch import run_benchmark_command

FORWARDED = {"ignore_unknown_options": True, "allow_extra_args": True}


@click.group("data")
def data_command() -> None:
    """Fetch, import and inspect benchmark data in the data home."""


@data_command.command("fetch", context_settings=FORWARDED, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def fetch_command(args: tuple[str, ...]) -> None:
    """Download a benchmark's public data into the data home: `data fetch [BENCHMARK] [OPTIONS]`."""
    if args and not args[0].startswith("-") and args[0] not in available():  # a misspelt benchmark
        near = difflib.get_close_matches(args[0], available(), n=1)
        raise click.UsageError(f"no benchmark {args[0]!r}: one of {', '.join(available())}"
                               + (f"; did you mean {near[0]}?" if near else ""))
    benchmark, rest = (args[0], list(args[1:])) if args and args[0] in available() else (DEFAULT, list(args))
    run_benchmark_command(benchmark, "fetch", rest, f"tripbench data fetch {benchmark}",
                          choose="tripbench data fetch NAME ...")


@data_command.command("import", context_settings=FORWARDED, add_help_option=False)
@click.option("--benchmark", metavar="NAME", help="The benchmark the folder belongs to (default: the one that "
                                                  "recognises it).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def import_command(benchmark: str | None, args: tuple[str, ...]) -> None:
    """Import a local folder of a benchmark's data into the data home: `data import [BENCHMARK] DIR [OPTIONS]`."""
    if args and args[0] in available():  # `data import NAME DIR`, as `data fetch NAME`
        if benchmark not in (None, args[0]):
            raise click.UsageError(f"two benchmarks named: {args[0]} and --benchmark {benchmark}")
        benchmark, args = args[0], args[1:]
    folder = next((Path(arg) for arg in args if not arg.startswith("-") and Path(arg).is_dir()), None)
    if benchmark is None and folder is not None:
        matching = [name for name in available()
                    if (found := get_benchmark(name).commands) is not None and found.holds_data(folder)]
        if len(matching) > 1:
            raise UserError(f"{folder} holds data of {', '.join(matching)}: choose one with --benchmark")
        if not matching:
            raise UserError(f"{folder}: no benchmark recognises this folder ({', '.join(available())}); "
                            "--benchmark NAME imports it anyway")
        benchmark = matching[0]
    run_benchmark_command(benchmark or DEFAULT, "import", list(args), "tripbench data import",
                          choose="tripbench data import NAME DIR ...")


@data_command.command("info")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print it as one JSON object.")
def info_command(home: Path | None, as_json: bool) -> None:
    """Show what the data home holds for each benchmark (creates nothing)."""
    home = home or default_home()
    benchmarks = {name: dict(found.data_info(home)) for name in available()
                  if (found := get_benchmark(name).commands) is not None}
    # what a killed fetch or import left (the next one of that folder removes it)
    folders = [home, *sorted(path for path in home.iterdir() if path.is_dir() and not path.name.startswith("."))] \
        if home.is_dir() else []
    stale = {str(path): size for folder in folders for path, size in stale_staging(folder)}
    if as_json:
        click.echo(json.dumps({"home": str(home), "benchmarks": benchmarks, "stale_staging": stale},
                              ensure_ascii=False))
        return
    click.echo(f"data home: {home}")
    for name, holds in benchmarks.items():
        click.echo(f"{name}:")
        _echo(holds, "  ")
    for path, size in stale.items():
        click.echo(f"left by a killed fetch or import: {path} ({size:,} bytes; the next one there removes it)")


def _word(value: object) -> str:
    """A value as `data info` prints it: `none` for what is not there, `yes` / `no` for a flag."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "none" if value is None else str(value)


def _echo(value: dict[str, object], indent: str) -> None:
    for key, item in value.items():
        if isinstance(item, dict):
            click.echo(f"{indent}{key}:" + ("" if item else " none"))
            _echo(item, indent + "  ")
        elif isinstance(item, list):
            click.echo(f"{indent}{key}: {', '.join(map(str, item)) or 'none'}")
        else:  # None: not there
            click.echo(f"{indent}{key}: {_word(item)}")
