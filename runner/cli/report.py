"""`tripbench report`: the benchmark's tables, errors, cost and plots of one or more runs, as Markdown, CSV, HTML."""

from __future__ import annotations

from pathlib import Path

import click

from reports import build_report, write_report
from runner.store.outputs import write_merged_outputs
from runner.store.results import load_run
from runner.store.shards import find_shards

RUN_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=RUN_DIR, metavar="RUN_DIR...")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for report.md, report.html, csv/ and plots/ (default: RUN_DIR/report).")
@click.option("--compare", "compare", multiple=True, type=RUN_DIR,
              help="Another run to put side by side with the first RUN_DIR, with deltas (repeatable).")
@click.option("--mode", default="official", show_default=True,
              help="Evaluator mode whose stored verdicts are reported (`tripbench list` shows each benchmark's).")
@click.option("--baseline", metavar="MODEL/STRATEGY",
              help="In a run of several groups, the one the others are compared with pair by pair (default: the "
                   "first).")
def report_command(run_dirs: tuple[Path, ...], out: Path | None, compare: tuple[Path, ...], mode: str,
                   baseline: str | None) -> None:
    """Write the report of a run (also one still going): pass rates, errors, cost, plots, per-rollout drill-down.

    A folder of shards (`tripbench run SPEC --shard I/N`) is one run: its submission files are written into
    RUN_DIR/outputs from all the shards first. A run of several groups (models, strategies) gets them compared
    pair by pair with the first, or with --baseline, as `tripbench compare` does.
    """
    for run_dir in dict.fromkeys((*run_dirs, *compare)):
        if find_shards(run_dir) is None:  # a folder of shards beside a run of its own is refused
            continue
        with load_run(run_dir, plans=False) as results:  # each plan read as its line is written
            _, notes = write_merged_outputs(results)
        for note in notes:
            click.echo(f"{run_dir}: {note}", err=True)
    report = build_report(run_dirs, compare, mode, baseline)
    for warning in report.warnings:
        click.echo(warning, err=True)
    files = write_report(report, out or run_dirs[0] / "report")
    click.echo(f"report: {files['html']}")
    click.echo(f"        {files['markdown']}")
    click.echo(f"tables: {files['csv']}/*.csv   plots: {files['plots']}/*.png")
