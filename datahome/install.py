"""Putting files into the data home: what an import copies, and staged folders swapped into place.

`data import` reads a folder the user points at: a link to a device (`/dev/zero`) or a FIFO there would be read for
ever, and a link to a folder may loop. `copy_file` and `copy_tree` copy regular files only (a link to one is
followed), and refuse anything else naming it. `swap_in` replaces a folder or file of the data home with its staged
copy by renames, the old one moved aside first and deleted afterwards: a run or `evaluate` started meanwhile finds
the old data or the new, never a folder half deleted.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from datahome.input_files import open_regular
from errors import DataError


def copy_file(source: Path, target: Path) -> None:
    """Copies the regular file `source` (a link to one is followed) to `target`, with its times.

    Raises:
        DataError: `source` is no regular file (a device, a FIFO, a socket, a folder) or cannot be read.
    """
    with open_regular(source, "not imported (data import copies regular files only)") as handle:
        with open(target, "wb") as out:
            shutil.copyfileobj(handle, out, 1 << 20)
    shutil.copystat(source, target)


def copy_tree(source: Path, target: Path) -> None:
    """Copies the folder `source` into `target` (made), regular files only; a link to a folder is not followed.

    Raises:
        DataError: something in it is no regular file, or a link to a folder.
    """
    for folder, folders, files in os.walk(source, followlinks=False):
        here = Path(folder)
        (target / here.relative_to(source)).mkdir(parents=True, exist_ok=True)
        for name in folders:
            if (here / name).is_symlink():
                raise DataError(f"{here / name}: a link to a folder: not followed (data import copies regular files "
                                "only; copy the folder itself there)")
        for name in files:
            copy_file(here / name, target / here.relative_to(source) / name)


def swap_in(new: Path, old: Path, aside: Path) -> None:
    """Puts `new` (a staged file or folder) where `old` is, by renames; the old one goes to `aside` (in the staging
    folder, deleted with it) rather than being deleted in place."""
    if old.is_dir() and not old.is_symlink():
        old.replace(aside)
    new.replace(old)
