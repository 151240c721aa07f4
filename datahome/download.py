"""Downloading into the data home: a URL to a file, checked before anything replaces what is there.

A command downloads into a `staging` folder inside the folder it fills (same file system), checks each file as it
arrives (`download`'s `check`), and only then moves them into place, one rename each: a failed fetch leaves no empty
or partial file that a later command would take for the data.
"""

from __future__ import annotations

import http.client
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from errors import DataError

OFFLINE = "offline? `tripbench data import DIR` imports a local folder"
"""What a failed download of benchmark data suggests."""


def download(url: str, target: Path, timeout: float, check: Callable[[Path, str], None], what: str,
             offline: str = OFFLINE) -> None:
    """Download `url` to `target` (in the staging folder) and check it; `what` names it in errors.

    Args:
        check: called with the file and `url` once it arrived whole; raises `DataError` when it is not what was asked.
        offline: what to do instead when the server cannot be reached (a command that works as printed).

    Raises:
        DataError: the server could not be reached or answered an HTTP error, the connection closed early, or `check`
            refused the file.
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
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
    """A fresh hidden folder inside `folder` (made if missing), removed with what is left in it at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".staging-", ignore_cleanup_errors=True) as path:
        yield Path(path)
