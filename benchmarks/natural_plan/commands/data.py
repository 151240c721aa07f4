"""Natural Plan's data commands: `data fetch natural-plan`, `data import DIR`, and what `data info` shows.

The data home holds them as `natural_plan/<stem>.json` (`trip_planning`, `meeting_planning`,
`calendar_scheduling`), where run specs look by default.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from benchmarks.natural_plan.dataset import FILE_STEMS, TASKS, find_file, read_records
from datahome import copy_file, default_home, download, home_option, staging
from errors import DataError, UserError

COMMIT = "ca76db336072ff8931db43bc1ca8d381038cf073"
DEFAULT_URL = f"https://raw.githubusercontent.com/google-deepmind/natural-plan/{COMMIT}/data/{{stem}}.json"
"""The official files at the commit the scoring rules were read from ({stem}: trip_planning, ...)."""



def data_dir(home: Path | None) -> Path:
    return (home or default_home()) / "natural_plan"


@click.command("fetch")
@home_option
@click.option("--url", default=DEFAULT_URL, show_default=True,
              help="URL template of each official file ({stem} = trip_planning, meeting_planning, "
                   "calendar_scheduling).")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Network timeout in seconds.")
def fetch_command(home: Path | None, url: str, timeout: float) -> None:
    """Download the three official Natural Plan files into the data home (checked before they replace any)."""
    dest = data_dir(home)
    with staging(dest) as folder:
        fetched = {}
        for task, stem in FILE_STEMS.items():
            target = folder / f"{stem}.json"
            click.echo(f"downloading {url.format(stem=stem)}", err=True)
            download(url.format(stem=stem), target, timeout, lambda path, _: _check(path, task), f"{stem}.json")
            fetched[task] = target
        for task, target in fetched.items():
            click.echo(f"{task}: {target.replace(dest / target.name)} ({_count(dest / target.name)} records)")


@click.command("import")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@home_option
def import_command(source: Path, home: Path | None) -> None:
    """Copy the official Natural Plan files found in SOURCE (`<stem>.json` or `<stem>_100.json`) into the data home."""
    dest = data_dir(home)
    found = {task: path for task in TASKS if (path := _maybe_file(source, task)) is not None}
    if not found:
        raise UserError(f"{source}: no Natural Plan file ({', '.join(f'{s}.json' for s in FILE_STEMS.values())})")
    dest.mkdir(parents=True, exist_ok=True)
    for task, path in found.items():
        _check(path, task)
        target = dest / f"{FILE_STEMS[task]}.json"
        copy_file(path, target)
        click.echo(f"{task}: {target} ({_count(target)} records)")


def holds_data(folder: Path) -> bool:
    return any(_maybe_file(folder, task) is not None for task in TASKS)


def data_info(home: Path) -> dict[str, Any]:
    """The official files in the data home and their record counts (reads only)."""
    folder = data_dir(home)
    files = {task: {"file": str(path), "records": _count(path)} for task in TASKS
             if (path := _maybe_file(folder, task)) is not None}
    return {"folder": str(folder), "files": files}


def _maybe_file(folder: Path, task: str) -> Path | None:
    try:
        return find_file(folder, task)
    except DataError:
        return None


def _check(path: Path, task: str) -> None:
    read_records(path, task)


def _count(path: Path) -> int:
    return len(json.loads(path.read_text(encoding="utf-8")))
