"""The sha256 of a data file, as a run's identity and provenance record it: read once per process per file version
(a run checks them at every start; a large table is read once, not once per session of a notebook)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from errors import DataError

CHUNK_BYTES = 1 << 20
_known: dict[tuple[str, int, int], str] = {}
"""(resolved path, size, mtime in ns) -> hex sha256: a file rewritten since is read again."""


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file's bytes.

    Raises:
        DataError: the file cannot be read (naming it).
    """
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if (known := _known.get(key)) is not None:
            return known
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    _known[key] = digest.hexdigest()
    return _known[key]


def fingerprints(files: Iterable[Path], relative_to: Path | None = None) -> Mapping[str, str]:
    """Name -> sha256 of each file: its path under `relative_to` (the same on every machine), else its file name."""
    found: dict[str, str] = {}
    for path in files:
        name = path.relative_to(relative_to).as_posix() if relative_to is not None else path.name
        found[name] = sha256_of(path)
    return found
