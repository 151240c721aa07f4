"""Download the public TravelPlanner dataset and database into the data home, then import the database.

Sources (both overridable, e.g. with a mirror or a local server):
- the query splits, from the Hugging Face dataset `osunlp/TravelPlanner` (CSV per split, CC-BY-4.0);
- the database archive, the zip the official README links on Google Drive (MIT); it unpacks to a
  `database/` folder in the official layout.

Layout written under the home: `travelplanner/queries/{split}.csv`, `travelplanner/database/…` and the
index `travelplanner.sqlite`. Downloads go to a staging folder in the home; the splits move into `queries/`
only once all three arrived, the database only once unpacked, so a failed fetch leaves no empty or partial
`queries/` that a later command would take for the data. The splits are kept when only the database fails
(Google Drive often refuses scripted downloads): the user then imports a hand-downloaded database.

The database archive is untrusted until checked: it is unpacked in the staging folder within limits (`MAX_UNPACKED`
bytes in all, `MAX_RATIO` times its compressed size per file, `MAX_MEMBERS` files), its index is built there, and
only then do the database and the index replace the ones in the home (by renames): a bad archive leaves the good
database and index as they were.
"""

from __future__ import annotations

import dataclasses
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from datahome import download, staging
from errors import DataError
from sandbox_index import schema
from sandbox_index.build import BuildSummary, build_travelplanner_index
from sandbox_index.csv_semantics import read_csv
from sandbox_index.sandbox import travelplanner_index_path

DEFAULT_DATASET_URL = "https://huggingface.co/datasets/osunlp/TravelPlanner/resolve/main/{split}.csv"
# "Download the database" link of the official README (Google Drive file 1pF1Sw6p…), in its direct form.
DEFAULT_DATABASE_URL = "https://drive.usercontent.google.com/download?id=1pF1Sw6pBmq2sFkJvm-LzJOqrmfWoQgxE&export=download&confirm=t"
SPLITS = ("train", "validation", "test")
MAX_UNPACKED = 2 << 30
"""Bytes an archive may unpack to: the official database is well under 1 GB (its largest table, flights: ~300 MB)."""
MAX_RATIO = 100
"""Unpacked bytes per compressed byte a file may reach (CSV deflates about tenfold; a zip bomb a thousandfold)."""
MAX_MEMBERS = 10_000
# present in every split (docs/fidelity/travelplanner.md §1.2)
_QUERY_COLUMNS = ("org", "dest", "days", "date", "query", "level")


@dataclass(frozen=True, slots=True)
class FetchSummary:
    """What `fetch_travelplanner` wrote."""

    queries: dict[str, Path]
    database_dir: Path
    build: BuildSummary


def fetch_travelplanner(
    home: Path,
    *,
    dataset_url: str = DEFAULT_DATASET_URL,
    database_url: str = DEFAULT_DATABASE_URL,
    timeout: float = 60.0,
    progress: Callable[[str], None] = lambda message: None,
) -> FetchSummary:
    """Download the query splits and the database archive into `home`, and build the index.

    Args:
        home: the data home.
        dataset_url: URL template of a split's CSV, with `{split}` for train / validation / test.
        database_url: URL of the database zip archive.
        timeout: seconds to wait for the server at each step.
        progress: called with a short line before each step.

    Raises:
        DataError: a download failed (offline, refused, HTTP error), the archive is not a zip in the
            official layout, or the data is malformed.
    """
    root = home / "travelplanner"
    queries = root / "queries"
    with staging(home) as folder:
        for split in SPLITS:
            url = dataset_url.format(split=split)
            progress(f"downloading {split} split from {url}")
            download(url, folder / f"{split}.csv", timeout, check=_check_split, what=f"the {split} split")
        queries.mkdir(parents=True, exist_ok=True)
        fetched = {split: (folder / f"{split}.csv").replace(queries / f"{split}.csv") for split in SPLITS}
        progress(f"downloading the database archive from {database_url}")
        archive = folder / "database.zip"
        index = travelplanner_index_path(home)
        try:
            download(database_url, archive, timeout, check=_check_zip, what="the database archive")
            unpacked = _unpack(archive, folder / "unpacked")
            progress(f"importing {unpacked}")
            build = build_travelplanner_index(unpacked, folder / index.name)
        except DataError as exc:
            raise DataError(f"{exc}; the query splits are saved in {queries}, the database and index in the data "
                            "home are as they were") from exc
        database = root / "database"
        if database.is_dir() and not database.is_symlink():
            database.replace(folder / "old-database")  # deleted with the staging folder
        unpacked.replace(database)
        (folder / index.name).replace(index)
    return FetchSummary(fetched, database, dataclasses.replace(build, path=index))


def _check_split(path: Path, url: str) -> None:
    header, _ = read_csv(path)
    missing = [column for column in _QUERY_COLUMNS if column not in header]
    if missing:
        raise DataError(f"{url}: not a TravelPlanner split: no {missing[0]!r} column")


def _check_zip(path: Path, url: str) -> None:
    if not zipfile.is_zipfile(path):
        # Google Drive answers with a web page when it wants a manual confirmation.
        raise DataError(
            f"{url}: not a zip archive (a web page?); download the database by hand, unzip it and run "
            "`tripbench data import DIR`"
        )


def _unpack(archive: Path, staging: Path) -> Path:
    """Extract the archive into `staging` within the limits and return the folder holding the official layout.

    Raises:
        DataError: an unsafe path, too many files, or more bytes than the limits allow (nothing is extracted then).
    """
    with zipfile.ZipFile(archive) as bundle:
        members = bundle.infolist()
        if len(members) > MAX_MEMBERS:
            raise DataError(f"{archive}: {len(members):,} files, more than a TravelPlanner database ({MAX_MEMBERS:,})")
        total = 0
        for member in members:
            if not (staging / member.filename).resolve().is_relative_to(staging.resolve()):
                raise DataError(f"{archive}: unsafe path in archive: {member.filename!r}")
            total += member.file_size
            if member.file_size > MAX_RATIO * max(member.compress_size, 1) + (1 << 20):
                raise DataError(f"{archive}: {member.filename} unpacks to {member.file_size:,} bytes from "
                                f"{member.compress_size:,}: not a database file (a zip bomb?)")
        if total > MAX_UNPACKED:
            raise DataError(f"{archive}: unpacks to {total:,} bytes, more than a TravelPlanner database "
                            f"({MAX_UNPACKED:,})")
        bundle.extractall(staging)  # the sizes are the headers' and zipfile holds each file to its own
    found = [
        path.parent.parent
        for path in staging.rglob(Path(schema.CITY_SET).name)
        if "__MACOSX" not in path.parts
        and all((path.parent.parent / f).is_file() for f in schema.SOURCE_FILES)
    ]
    if not found:
        raise DataError(f"{archive}: no database folder in the official layout ({', '.join(schema.SOURCE_FILES)})")
    return found[0]
