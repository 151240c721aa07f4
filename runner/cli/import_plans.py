"""`tripbench import-plans FILES --benchmark NAME --run-dir DIR`: answers made elsewhere, stored and scored as a run
(`runner.engine.imported`), for `tripbench report DIR`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from benchmarks.registry import DEFAULT, available, get_benchmark
from runner.cli.run import _absolute_paths, _option
from runner.engine.imported import import_plans


@click.command("import-plans")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
                metavar="FILES...")
@click.option("--benchmark", default=DEFAULT, show_default=True, metavar="NAME",
              help="The benchmark the answers are for: one that reads plan files (another names those that do).")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The run directory to create (or add to): `tripbench report` it afterwards.")
@click.option("--model", metavar="NAME", help="The model label of every answer (default: from each file's name, "
                                              "where its format says it: plans_<model>_<strategy>.json).")
@click.option("--strategy", metavar="NAME", help="The strategy of every answer (default: from each file's name).")
@click.option("--split", help="The split of the run (default: the smallest holding every answered query).")
@click.option("--mode", "modes", multiple=True, metavar="MODE",
              help="Evaluator mode to score with (repeatable; default: the benchmark's first, `official`).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", callback=_option,
              help="A field of the benchmark's [options] table (repeatable), e.g. data_dir=DIR, distance=offline.")
def import_plans_command(files: tuple[Path, ...], benchmark: str, run_dir: Path, model: str | None,
                         strategy: str | None, split: str | None, modes: tuple[str, ...],
                         options: dict[str, Any]) -> None:
    """Store answers made outside tripbench (the official generator's plans_<model>_<strategy>.json files, or JSONL)
    as a scored run, which `tripbench report RUN_DIR` reports like any other."""
    found = get_benchmark(benchmark)
    if found.plan_files is None:
        can = [name for name in available() if get_benchmark(name).plan_files is not None]
        raise click.UsageError(f"benchmark {benchmark} cannot import plans made elsewhere "
                               f"({', '.join(can) or 'none'} can: --benchmark NAME)")
    report = asyncio.run(import_plans(found, files, run_dir, options=_absolute_paths(benchmark, options),
                                      modes=modes or found.modes[:1], model=model, strategy=strategy, split=split))
    for where in report.skipped[:20]:
        click.echo(f"skipped: {where}", err=True)
    if len(report.skipped) > 20:
        click.echo(f"skipped: ... and {len(report.skipped) - 20} more", err=True)
    for (label, name), count in sorted(report.groups.items()):
        click.echo(f"{label} / {name}: {count} answers")
    for note in report.notes:
        click.echo(note)
    click.echo(f"imported {report.stored} answers into {run_dir} (split {report.split}, {report.tasks} queries); "
               f"skipped {len(report.skipped)}; `tripbench report {run_dir}` for the report")
