"""TravelEval's data commands: `data fetch traveleval`, `data import DIR`, and what `data info` shows.

The data home holds it as `traveleval/` in the official `environment/` layout (`paths`): `data/queries/*.json`,
`database/...`, the sandbox index `traveleval.sqlite`, and `amap_cache/` with the official Gaode caches when they
could be had. Every file is checked before anything in the home is replaced: a download against the manifest of the
pinned commit (size and sha256), an import by reading every query file and building the index from the copy. The
new folders then replace the old ones, one rename each.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import urllib.parse
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click

from benchmarks.base import Task
from benchmarks.traveleval import paths
from benchmarks.traveleval.commands.manifest import FILES
from benchmarks.traveleval.dataset import read_queries
from benchmarks.traveleval.sandbox.build import build_index
from datahome import copy_file, copy_tree, download, home_option, staging, swap_in
from errors import DataError, UsageError, UserError

COMMIT = "3638d55590eda4616d460b82f192a01c2557e6a2"
DEFAULT_URL = f"https://raw.githubusercontent.com/onlycwy11/TravelEval/{COMMIT}/{{path}}"
"""The official repository at the commit the evaluator was read from ({path}: a path in the repository)."""
ENVIRONMENT = "environment"
"""The repository's folder holding `data/` and `database/`."""
AMAP_CACHES = {"geo_cache.json": "core/geo_cache.json", "travel_time_cache.json": "core/utils/travel_time_cache.json"}
"""The official Gaode caches: name in `amap_cache/` -> path in the repository (not in the manifest: optional)."""
DEFAULT_PINS_URL = f"https://api.github.com/repos/onlycwy11/TravelEval/contents/{{path}}?ref={COMMIT}"
"""GitHub's description of a file at the pinned commit ({path}: a path in the repository): its size and git blob sha.
The Gaode caches are checked against it (they are not in the manifest: their content was never at hand here)."""
_MAX_PIN = 1 << 20
"""Bytes a file's description may take (GitHub's is about 1 kB without the content, which files over 1 MB omit)."""
_PARALLEL = 8


@click.command("fetch")
@home_option
@click.option("--url", default=DEFAULT_URL, show_default=True,
              help="URL template of a file of the official repository ({path} = its path in the repository, e.g. "
                   "environment/database/categories.json).")
@click.option("--pins-url", default=DEFAULT_PINS_URL, show_default=True,
              help="URL template of a file's description at the pinned commit (JSON with its `size` and git blob "
                   "`sha`, as GitHub's contents API gives): the Gaode caches must match it.")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Network timeout in seconds.")
def fetch_command(home: Path | None, url: str, pins_url: str, timeout: float) -> None:
    """Download TravelEval's queries and database (and the Gaode caches, when there) into the data home."""
    for option, template in (("--url", url), ("--pins-url", pins_url)):
        if "{path}" not in template:
            raise UsageError(f"{option} {template!r}: expected a template with {{path}} (a file's path in the "
                            "repository)")
    dest = paths.data_dir(home)
    click.echo(f"downloading {len(FILES)} files from {url.format(path=ENVIRONMENT + '/...')}", err=True)
    stop = threading.Event()
    with staging(dest) as folder:
        with ThreadPoolExecutor(_PARALLEL) as pool:
            try:
                list(pool.map(lambda name: _fetch_checked(url, name, folder, timeout, stop), FILES))
            except BaseException:  # Ctrl-C, SIGTERM, a failed file: the other downloads end at their next read
                stop.set()
                raise
        caches = _fetch_caches(url, pins_url, folder, timeout)
        counts = _install(folder, dest)
    _report(dest, counts, caches)


@click.command("import")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@home_option
def import_command(source: Path, home: Path | None) -> None:
    """Copy a TravelEval folder (the repository, its environment/, or a data home's traveleval/) into the data home."""
    found = _official_folder(source)
    if found is None:
        raise UserError(f"{source}: no TravelEval data here (expected data/queries/*.json and database/categories.json"
                        f", or the same under {ENVIRONMENT}/)")
    dest = paths.data_dir(home)
    with staging(dest) as folder:
        present = [name for name in paths.QUERY_FILES if (paths.queries_dir(found) / name).is_file()]
        paths.queries_dir(folder).mkdir(parents=True)
        for name in present:
            copy_file(paths.queries_dir(found) / name, paths.queries_dir(folder) / name)
        copy_tree(paths.database_dir(found), paths.database_dir(folder))
        caches = _copy_caches(source, found, folder)
        counts = _install(folder, dest)
    _report(dest, counts, caches)


def holds_data(folder: Path) -> bool:
    """Whether `folder` is TravelEval data (`data import` picks the benchmark by it)."""
    return _official_folder(folder) is not None


def data_info(home: Path) -> dict[str, Any]:
    """The query files, database, index and Gaode caches in the data home (reads only, builds nothing)."""
    folder = paths.data_dir(home)
    queries = {}
    read: dict[str, list[Task]] = {}
    for name in paths.QUERY_FILES:
        path = paths.queries_dir(folder) / name
        if path.is_file():
            try:
                read[name] = read_queries(path)
                queries[name] = {"file": str(path), "queries": len(read[name])}
            except DataError as exc:
                queries[name] = {"file": str(path), "error": str(exc)}
    index = paths.index_path(folder)
    return {"folder": str(folder), "queries": queries, "queries_by_days": queries_by_days(read),
            "paper_table_a1": PAPER_TABLE_A1,
            "database": str(paths.database_dir(folder)) if paths.database_dir(folder).is_dir() else None,
            "index": {"file": str(index), "rows": _index_counts(index)} if index.is_file() else None,
            "amap_cache": [name for name in AMAP_CACHES if (paths.amap_cache_dir(folder) / name).is_file()]}


PAPER_TABLE_A1: Mapping[str, Mapping[str, int]] = {
    tier: dict(zip(("2", "3", "4", "5", "6", "7"), counts, strict=True)) | {"total": sum(counts)}
    for tier, counts in (("easy", (20, 30, 40, 40, 30, 40)), ("medium", (40, 60, 80, 80, 60, 80)),
                         ("hard", (40, 60, 80, 80, 60, 80)), ("progressive", (15, 24, 30, 30, 24, 27)))}
"""The paper's Table A1 (queries per tier and trip length), as printed; the released query files are distributed
otherwise (`queries_by_days`: easy holds 33 or 34 queries of each length), so `data info` shows both."""


def queries_by_days(files: Mapping[str, Sequence[Task]]) -> dict[str, dict[str, int]]:
    """The released data's queries per tier and trip length (the paper's Table A1 is `PAPER_TABLE_A1`). Rows: each
    query file by its name (`easy`, ...), the progressive file by step (`progressive-1` .. `-3`), then `all`;
    columns: the days ("2" .. "7"), then `total`."""
    rows: dict[str, Counter[str]] = {}
    for name, tasks in files.items():
        for task in tasks:
            tier = name.removesuffix(".json")
            if "step" in task.input:
                tier += f"-{task.input['step']}"
            for row in (tier, "all"):
                rows.setdefault(row, Counter())[str(task.input.get("days"))] += 1
    if "all" in rows:  # last, as a total row
        rows["all"] = rows.pop("all")
    return {row: {days: counts[days] for days in sorted(counts, key=_days_order)} | {"total": counts.total()}
            for row, counts in rows.items()}


def _days_order(days: str) -> tuple[int, str]:
    return (int(days), "") if days.isdigit() else (1_000, days)


def _official_folder(folder: Path) -> Path | None:
    """The folder holding `data/` and `database/`: `folder` itself or its `environment/`."""
    for candidate in (folder, folder / ENVIRONMENT):
        if ((paths.database_dir(candidate) / "categories.json").is_file()
                and any((paths.queries_dir(candidate) / name).is_file() for name in paths.QUERY_FILES)):
            return candidate
    return None


def _fetch_checked(url: str, name: str, staging: Path, timeout: float, stop: threading.Event) -> None:
    size, sha256 = FILES[name]
    target = staging / name
    target.parent.mkdir(parents=True, exist_ok=True)
    source = url.format(path=urllib.parse.quote(f"{ENVIRONMENT}/{name}"))

    def check(path: Path, _: str) -> None:
        got = path.stat().st_size
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if (got, digest) != (size, sha256):
            raise DataError(f"{source}: not the official {name} at commit {COMMIT[:12]} (expected {size:,} bytes, "
                            f"sha256 {sha256[:12]}…; got {got:,} bytes, sha256 {digest[:12]}…)")

    download(source, target, timeout, check, name, max_bytes=size, stop=stop)


def _fetch_caches(url: str, pins_url: str, staging: Path, timeout: float) -> list[str]:
    """The Gaode caches that are the pinned commit's files and read as JSON objects; the others are said and skipped.

    A cache changes scores (a poisoned one moved official RP from 0.0 to 0.122), so one that cannot be checked against
    the pinned commit's git blob is not kept.
    """
    found = []
    folder = paths.amap_cache_dir(staging)
    folder.mkdir()
    for name, repository_path in AMAP_CACHES.items():
        quoted = urllib.parse.quote(repository_path)
        try:
            size, blob = _pinned_blob(pins_url.format(path=quoted), folder / f".{name}.pin", timeout, name)

            def check(path: Path, source: str, size: int = size, blob: str = blob) -> None:
                if (got := _git_blob_sha(path)) != blob:
                    raise DataError(f"{source}: not the official {name} at commit {COMMIT[:12]} (expected {size:,} "
                                    f"bytes, git blob {blob[:12]}…; got {path.stat().st_size:,} bytes, git blob "
                                    f"{got[:12]}…)")
                _check_cache(path, source)

            download(url.format(path=quoted), folder / name, timeout, check, name, max_bytes=size)
        except DataError as exc:
            (folder / name).unlink(missing_ok=True)
            click.echo(f"skipped the Gaode cache {name}: {exc}", err=True)
        else:
            found.append(name)
    return found


def _pinned_blob(url: str, target: Path, timeout: float, name: str) -> tuple[int, str]:
    """(bytes, git blob sha1) of a file at the pinned commit, from its description at `url`."""
    pin: dict[str, Any] = {}

    def check(path: Path, source: str) -> None:
        try:
            value = json.loads(path.read_bytes())
        except (UnicodeDecodeError, ValueError, RecursionError):
            value = None
        size, sha = (value.get("size"), value.get("sha")) if isinstance(value, dict) else (None, None)
        if (type(size) is not int or size < 0 or not isinstance(sha, str) or len(sha) != 40
                or not all(c in "0123456789abcdef" for c in sha)):
            raise DataError(f"{source}: expected a JSON object with the file's `size` (bytes) and git blob `sha`")
        pin.update(size=size, sha=sha)

    try:
        download(url, target, timeout, check, f"the pinned description of {name}", max_bytes=_MAX_PIN)
    finally:
        target.unlink(missing_ok=True)
    return pin["size"], pin["sha"]


def _git_blob_sha(path: Path) -> str:
    """The file's git blob id: sha1 over `blob <bytes>\\0` and the content (what a commit's tree names it by)."""
    sha = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
    return sha.hexdigest()


def _check_cache(path: Path, source: str) -> None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # too deep, a number too long: no cache either
        raise DataError(f"{source}: not a JSON file: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(value, dict):
        raise DataError(f"{source}: expected a JSON object of cached answers")


def _copy_caches(source: Path, found: Path, staging: Path) -> list[str]:
    """The Gaode caches of an imported folder: the repository's `core/...` files, or a data home's `amap_cache/`."""
    folder = paths.amap_cache_dir(staging)
    folder.mkdir()
    copied = []
    for name, repository_path in AMAP_CACHES.items():
        for candidate in (source / repository_path, paths.amap_cache_dir(found) / name):
            if candidate.is_file():
                copy_file(candidate, folder / name)
                _check_cache(folder / name, str(candidate))
                copied.append(name)
                break
    return copied


def _install(staging: Path, dest: Path) -> dict[str, int]:
    """Check the staged copy (queries read, index built), then move it over `dest`'s; returns rows per table."""
    for path in sorted(paths.queries_dir(staging).glob("*.json")):
        read_queries(path)
    counts = build_index(paths.database_dir(staging), paths.index_path(staging))
    aside = staging / ".old"
    aside.mkdir()
    # the index first: a reader meanwhile never finds a database newer than its index, which it would build again
    for part in (paths.index_path(staging).name, "data", "database", paths.amap_cache_dir(staging).name):
        new, old = staging / part, dest / part
        if not new.exists() or (part == paths.amap_cache_dir(staging).name and not any(new.iterdir())):
            continue
        swap_in(new, old, aside / part)  # renames: a run reading the data home meanwhile never finds a part missing
    return counts


def _index_counts(index: Path) -> dict[str, int] | None:
    try:
        conn = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'counts'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return None if row is None else dict(json.loads(row[0]))


def _report(dest: Path, counts: dict[str, int], caches: list[str]) -> None:
    for name in paths.QUERY_FILES:
        if (path := paths.queries_dir(dest) / name).is_file():
            click.echo(f"{name}: {path} ({len(read_queries(path))} queries)")
    click.echo(f"database: {paths.index_path(dest)} (" + ", ".join(f"{n:,} {t}" for t, n in counts.items()) + ")")
    click.echo(f"Gaode caches: {', '.join(caches) if caches else 'none'}")
