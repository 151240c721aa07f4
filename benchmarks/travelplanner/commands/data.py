"""TravelPlanner's `data` commands: import a local dataset or database folder, fetch the public one, describe it.

Everything lands in one place, the data home (`--home`, `$TRIPBENCH_HOME`, else the user data directory +
`/tripbench`): the query splits in `travelplanner/queries/`, the index in `travelplanner.sqlite`. Every default
of the other commands and of run specs points there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from benchmarks.travelplanner.dataset import SPLIT_SIZES, SUFFIXES
from datahome import copy_file, default_home, home_option
from sandbox_index import BuildSummary, build_travelplanner_index, open_sandbox, travelplanner_index_path
from sandbox_index.fetch import DEFAULT_DATABASE_URL, DEFAULT_DATASET_URL, fetch_travelplanner


def queries_dir(home: Path) -> Path:
    """Where the query splits live in the data home (what `data fetch` writes, what specs read by default)."""
    return home / "travelplanner" / "queries"


def holds_data(folder: Path) -> bool:
    """A TravelPlanner database folder (flights/, ...) or a dataset folder holding one as `database/`."""
    return any((base / "flights").is_dir() for base in (folder, folder / "database"))


@click.command("import")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@home_option
@click.option(
    "--synthetic-flights",
    type=click.IntRange(min=0),
    default=None,
    metavar="TOTAL",
    help="Add seeded synthetic flights (paper A.3) up to TOTAL rows, e.g. 3827361. Never used for scoring.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic flights.")
def import_command(source: Path, home: Path | None, synthetic_flights: int | None, seed: int) -> None:
    """Build the TravelPlanner index from a folder, and stage the query splits it holds.

    SOURCE is a database folder in the official layout (flights/, accommodations/, ...) or a dataset folder
    holding one as database/ beside the splits (queries/<split>.csv|jsonl|parquet or <split>.*, with
    <split>_ref_routes.jsonl). Splits are copied to the data home, where `--split` and run specs find them.
    """
    home = home or default_home()
    database = source / "database" if (source / "database" / "flights").is_dir() else source
    if not (database / "flights").is_dir():
        raise click.UsageError(f"{source}: not a TravelPlanner database folder (no flights/ in it or in "
                               f"{source / 'database'})")
    summary = build_travelplanner_index(database, travelplanner_index_path(home), synthetic_flights=synthetic_flights,
                                        seed=seed)
    report_build(summary)
    for split, path in stage_splits(source, queries_dir(home)).items():
        click.echo(f"{split}: {path}")


def stage_splits(source: Path, dest: Path) -> dict[str, Path]:
    """Copies the split files found in `source/queries/` or `source/` (and their reference routes) into `dest`."""
    staged: dict[str, Path] = {}
    for base in (source / "queries", source):
        for split in SPLIT_SIZES:
            found = next((base / f"{split}{suffix}" for suffix in SUFFIXES if (base / f"{split}{suffix}").is_file()),
                         None)
            if found is None or split in staged:
                continue
            dest.mkdir(parents=True, exist_ok=True)
            for stale in (dest / f"{split}{suffix}" for suffix in SUFFIXES):
                stale.unlink(missing_ok=True)  # a split staged earlier in another format would shadow this one
            copy_file(found, dest / found.name)
            staged[split] = dest / found.name
            routes = base / f"{split}_ref_routes.jsonl"
            if routes.is_file():
                copy_file(routes, dest / routes.name)
    return staged


@click.command("fetch")
@home_option
@click.option(
    "--dataset-url",
    default=DEFAULT_DATASET_URL,
    show_default=True,
    help="URL template of each query split's CSV ({split} = train, validation, test).",
)
@click.option(
    "--database-url", default=DEFAULT_DATABASE_URL, show_default=True, help="URL of the database zip."
)
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Network timeout in seconds.")
def fetch_command(home: Path | None, dataset_url: str, database_url: str, timeout: float) -> None:
    """Download and import the TravelPlanner data.

    Fetches the query splits (Hugging Face osunlp/TravelPlanner) and the official database archive into the
    data home, then builds the index as `tripbench data import` does.
    """
    fetched = fetch_travelplanner(
        home or default_home(),
        dataset_url=dataset_url,
        database_url=database_url,
        timeout=timeout,
        progress=lambda message: click.echo(message, err=True),
    )
    for split, path in fetched.queries.items():
        click.echo(f"{split}: {path}")
    report_build(fetched.build)


def data_info(home: Path) -> dict[str, Any]:
    """What the data home holds for TravelPlanner (reads only; creates nothing)."""
    index = travelplanner_index_path(home)
    splits = {split: str(path) for split in SPLIT_SIZES
              for path in [next((queries_dir(home) / f"{split}{s}" for s in SUFFIXES
                                 if (queries_dir(home) / f"{split}{s}").is_file()), None)] if path is not None}
    info: dict[str, Any] = {"index": str(index), "index_exists": index.is_file(), "splits": splits}
    if index.is_file():
        with open_sandbox(index) as sandbox:
            info["metadata"] = sandbox.metadata()
    return info


def report_build(summary: BuildSummary) -> None:
    click.echo(f"index: {summary.path} ({summary.seconds:.1f} s)")
    for table, rows in summary.rows.items():
        dropped = summary.dropped[table]
        note = f" ({dropped:,} dropped: a field is missing, as the official dropna())" if dropped else ""
        click.echo(f"  {table}: {rows:,} rows{note}")
    if summary.synthetic_flights:
        click.echo(f"  synthetic flights: {summary.synthetic_flights:,} rows (hidden unless asked for)")
