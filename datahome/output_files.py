"""Files we write for people to open: written whole or not at all, and CSV cells a spreadsheet will not run.

`replace_atomically` writes a temporary file in the target's folder (the same file system, so the rename is atomic)
and renames it over the target: a reader never sees half a file, a failed write leaves the old file, and a link at
the target is replaced, never followed (writing through it would overwrite whatever file it points to).

`write_csv` writes every CSV file made from values we did not choose (a plan's `query_uid`, a model's answer, a
label): a text cell a spreadsheet would run as a formula (`=HYPERLINK(...)`) is neutralised as OWASP's CSV
injection guidance advises (`inert`).
"""

from __future__ import annotations

import csv
import os
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a cell that a spreadsheet runs as a formula starts with (OWASP, "CSV Injection")."""


@contextmanager
def replace_atomically(path: Path) -> Iterator[TextIO]:
    """A text handle (UTF-8, newlines as written) whose content replaces `path` when the block ends without an
    exception; on one, `path` is left as it was and the temporary file removed."""
    temporary = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to `open`
    try:
        with open(descriptor, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def inert(value: Any) -> Any:
    """`value`, with a text cell that starts like a formula (`FORMULA_STARTS`) prefixed with `'`, which spreadsheets
    show and do not run; numbers and anything else stay as they are (`-0.5` is a number, not a formula)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(path: Path, header: Iterable[str], rows: Iterable[Iterable[Any]]) -> Path:
    """`header` and `rows` as the CSV file `path`, replaced atomically (`replace_atomically`); every cell `inert`,
    None an empty cell."""
    with replace_atomically(path) as handle:
        writer = csv.writer(handle)
        writer.writerow(inert(name) for name in header)
        for row in rows:
            writer.writerow("" if value is None else inert(value) for value in row)
    return path
