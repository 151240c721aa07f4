"""`tripbench compare RUN_A RUN_B`: two runs, or two groups of one run, compared pair by pair (`reports.paired`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from reports.paired.analysis import compare, to_json
from reports.paired.pairing import pairings, parse_selector
from reports.paired.tables import all_tables, binary_table, continuous_table, method_notes
from reports.paired.write import write_comparison
from reports.terminal import terminal_table
from runner.cli.console import output_console


@click.command("compare")
@click.argument("first", metavar="RUN_A")
@click.argument("second", metavar="RUN_B")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for compare.md, compare.html, csv/ and compare.json (default: RUN_B/compare).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object instead of tables.")
@click.option("--mode", default="official", show_default=True, help="Evaluator mode whose stored verdicts are read.")
def compare_command(first: str, second: str, out: Path | None, as_json: bool, mode: str) -> None:
    """Compare two runs pair by pair: the same task and sample in both, with paired tests and intervals.

    RUN_A and RUN_B are run directories, or groups of one as RUN:MODEL/STRATEGY (`runs/n:gpt-4o/react
    runs/n:gpt-4o/reflexion`). Groups are paired by model and strategy; failing that, two single groups, or those
    sharing the strategy or the model. Pass/fail metrics get McNemar's exact test and Newcombe's paired interval,
    continuous ones the Wilcoxon signed-rank test and a seeded paired bootstrap; Holm's correction over the metrics.
    Also: the tasks that regressed and improved, the error categories, and where the runs' calls part.
    """
    found = compare(pairings(first, second, mode))
    title = f"tripbench compare: {first} → {second}"
    notes = method_notes(found)
    tables = all_tables(found)
    folder = out or parse_selector(second).run_dir / "compare"
    files = write_comparison(found, title, notes, tables, folder)
    if as_json:
        sys.stdout.buffer.write(orjson.dumps(to_json(found)) + b"\n")
        return
    console = output_console()
    for table in (binary_table(found), continuous_table(found)):
        if table.rows:
            console.print(terminal_table(table))
    for result in found.results:
        console.print(f"{result.pairing.a.label} → {result.pairing.b.label}: {len(result.pairing.pairs):,} pairs, "
                      f"{len(result.regressed):,} regressed, {len(result.improved):,} improved, "
                      f"unmatched {len(result.pairing.a_unmatched):,} in A and {len(result.pairing.b_unmatched):,} "
                      "in B", markup=False, highlight=False)
    console.print(notes[0], markup=False, highlight=False)
    click.echo(f"comparison: {files['html']}")
    click.echo(f"            {files['markdown']}")
    click.echo(f"tables: {files['csv']}/*.csv   json: {files['json']}")
