"""Downloading into the data home: a URL to a file, checked before anything replaces what is there.

A command downloads into a `staging` folder inside the folder it fills (same file system), checks each file as it
arrives (`download`'s `check`), and only then moves them into place, one rename each: a failed fetch leaves no empty
or partial file that a later command would take for the data.
"""

from __future__ import annotations

import http.client
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from errors import DataError

log = logging.getLogger(__name__)

MAX_DOWNLOAD = 4 << 30
"""Bytes any download may bring (the largest, TravelPlanner's database archive, is a fraction of it)."""
OFFLINE = "offline? `tripbench data import DIR` imports a local folder"
"""What a failed download of benchmark data suggests."""
DEADLINE = 1800.0
"""Seconds any download may take in all (`timeout` bounds each read: a server sending a byte now and then would
otherwise hold a fetch for ever)."""


def download(url: str, target: Path, timeout: float, check: Callable[[Path, str], None], what: str, *,
             offline: str = OFFLINE, max_bytes: int = MAX_DOWNLOAD, stop: threading.Event | None = None,
             deadline: float = DEADLINE) -> None:
    """Download `url` to `target` (in the staging folder) and check it; `what` names it in errors.

    Args:
        check: called with the file and `url` once it arrived whole; raises `DataError` when it is not what was asked.
        max_bytes: More is refused as it arrives (a file the manifest says is 2 kB is never written to 3 GB).
        deadline: Seconds the whole download may take (one more read's `timeout` at most).
        stop: Set by the caller (Ctrl-C in the thread that waits for several downloads): the download ends at its
            next read, as it would in the main thread.
        offline: what to do instead when the server cannot be reached (a command that works as printed).

    Raises:
        DataError: the server could not be reached or answered an HTTP error, the connection closed early, or `check`
            refused the file.
    """
    ends = time.monotonic() + deadline
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as out:
            written = 0
            while chunk := response.read1(1 << 20):
                if stop is not None and stop.is_set():
                    raise DataError(f"{what}: download stopped")
                if time.monotonic() > ends:
                    raise DataError(f"cannot download {what} from {url}: not complete after the {deadline:g} s "
                                    "allowed (a server that slow; try again or another mirror)")
                written += out.write(chunk)
                if written > max_bytes:
                    raise DataError(f"cannot download {what} from {url}: more than {max_bytes:,} bytes, more than it "
                                    "can be")
            promised = response.headers.get("Content-Length", "")
        # http.client ends a body cut short by a dropped connection without an error; the length tells
        if promised.isdigit() and (got := target.stat().st_size) != int(promised):
            raise DataError(f"cannot download {what} from {url}: the connection closed after {got:,} of "
                            f"{int(promised):,} bytes (try again)")
    except urllib.error.HTTPError as exc:
        exc.close()  # an HTTPError is also the open error response
        raise DataError(f"cannot download {what} from {url}: HTTP {exc.code} {exc.reason}") from exc
    except (TimeoutError, urllib.error.URLError, ConnectionError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(
            f"cannot download {what} from {url}: {reason} ({offline})"
        ) from exc
    check(target, url)


@contextmanager
def staging(folder: Path) -> Iterator[Path]:
    """A fresh hidden folder inside `folder` (made if missing), removed with what is left in it at the end.

    Its name holds this process's id: the staging folders a killed fetch or import left (gigabytes, for good) are
    removed here once their process is gone, and said.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for left, size in stale_staging(folder):
        shutil.rmtree(left, ignore_errors=True)
        log.warning("removed %s (%s bytes), left by a fetch or import that was killed", left, f"{size:,}")
    with tempfile.TemporaryDirectory(dir=folder, prefix=f".staging-{os.getpid()}-",
                                     ignore_cleanup_errors=True) as path:
        yield Path(path)


def stale_staging(folder: Path) -> list[tuple[Path, int]]:
    """The staging folders in `folder` whose process is gone, with the bytes each holds (`data info` lists them)."""
    found = []
    for left in sorted(folder.glob(".staging-*-*")) if folder.is_dir() else []:
        pid = left.name.split("-")[1]
        if left.is_dir() and pid.isdigit() and not _alive(int(pid)):
            found.append((left, sum(path.stat().st_size for path in left.rglob("*")
                                    if path.is_file() and not path.is_symlink())))
    return found


def _alive(pid: int) -> bool:
    if sys.platform == "win32":  # os.kill(pid, 0) would end that process there: a folder is never taken for stale
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True
