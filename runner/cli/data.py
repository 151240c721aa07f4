"""`tripbench data`: build, download and inspect the TravelPlanner sandbox index."""

from __future__ import annotations

from pathlib import Path

import click

from sandbox_index import BuildSummary, build_travelplanner_index, default_home, open_sandbox
from sandbox_index.fetch import DEFAULT_DATABASE_URL, DEFAULT_DATASET_URL, fetch_travelplanner
from sandbox_index.home import HOME_ENV, travelplanner_index_path

home_option = click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=HOME_ENV,
    show_envvar=True,
    help="Data home (default: the user data directory + /tripbench).",
)


@click.group("data")
def data_command() -> None:
    """Import, download and inspect benchmark databases."""


@data_command.command("import")
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
    """Build the TravelPlanner index from a folder.

    SOURCE is a TravelPlanner database folder in the official layout (flights/, accommodations/, ...).
    """
    dest = travelplanner_index_path(home or default_home())
    summary = build_travelplanner_index(source, dest, synthetic_flights=synthetic_flights, seed=seed)
    _report(summary)


@data_command.command("fetch")
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
    _report(fetched.build)


@data_command.command("info")
@home_option
def info_command(home: Path | None) -> None:
    """Show the TravelPlanner index metadata."""
    path = travelplanner_index_path(home or default_home())
    with open_sandbox(path) as sandbox:
        metadata = sandbox.metadata()
    click.echo(f"index: {path}")
    for key, value in metadata.items():
        click.echo(f"{key}: {value}")


def _report(summary: BuildSummary) -> None:
    click.echo(f"index: {summary.path} ({summary.seconds:.1f} s)")
    for table, rows in summary.rows.items():
        dropped = summary.dropped[table]
        note = f" ({dropped:,} dropped: a field is missing, as the official dropna())" if dropped else ""
        click.echo(f"  {table}: {rows:,} rows{note}")
    if summary.synthetic_flights:
        click.echo(f"  synthetic flights: {summary.synthetic_flights:,} rows (hidden unless asked for)")
