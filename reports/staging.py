"""Writing an output folder all at once: files go into a temporary folder beside it, moved into place at the end, so
a reader never sees half a report or half a comparison, and a folder holding something else is never replaced."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from errors import UsageError, UserError


@contextlib.contextmanager
def staged(out: Path, marker: str, what: str) -> Iterator[Path]:
    """A temporary folder beside `out` to write into; on success it replaces `out` (an earlier one of the same kind),
    on failure it is removed.

    Args:
        out: The output folder (resolved).
        marker: A file every such folder holds (`report.html`): a non-empty folder without it is not replaced.
        what: What the folder is, for messages ("report", "comparison").

    Raises:
        UsageError: `out` is a non-empty folder of something else.
        UserError: the folder beside `out` cannot be made.
    """
    if out.is_dir() and any(out.iterdir()) and not (out / marker).is_file():
        raise UsageError(f"{out}: a folder that is not a {what} (no {marker}), which writing one would replace: give "
                         "--out a new or empty folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    except OSError as exc:
        why = f"{exc.filename} is a file, not a folder" if isinstance(exc, FileExistsError) else exc.strerror
        raise UserError(f"{out}: cannot write the {what} there ({why})") from None
    try:
        yield staging
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
