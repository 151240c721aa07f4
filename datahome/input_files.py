"""Files made elsewhere (answers, plans, submissions), read within bounds.

Such a file is whatever its path names: a link to `/dev/zero` or a FIFO would be read for ever, and a file of many
gigabytes would fill memory before any line of it was checked. So an input is read only when it is a regular file
(a link to one is followed), of at most `MAX_INPUT_BYTES`, in chunks, never past the cap even if it grows while it
is read. A reader that holds one entry at a time (a line, a plan of an array: `input_lines(path, limit=None)`,
`input_chunks`) needs no cap on the file, only on each entry: `MAX_ENTRY_BYTES`. `distinct_inputs` refuses a file
given twice (by two paths, or as two copies), whose answers would otherwise count twice.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import BinaryIO

from errors import DataError, UsageError

MAX_INPUT_BYTES = 256 << 20
"""An input file's size at most (256 MiB). The largest real input is an official TravelEval plans file for all of
its 1,000 queries, about 10 MB; a file is parsed whole or line by line into Python objects that take several times
its size in memory, so 256 MiB (25 times that) still fits a laptop's memory, where a few GB would not."""

MAX_ENTRY_BYTES = 16 << 20
"""One entry (a line, a plan of an array) at most, when a file is read an entry at a time (16 MiB: a TravelEval plan
is about 10 KB)."""

CHUNK_BYTES = 1 << 20
"""Read at a time (and the line length read at a time) from an input file."""

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


@contextmanager
def open_regular(path: Path, refused: str, limit: int | None = None) -> Iterator[BinaryIO]:
    """`path` opened for reading in binary, when it is a regular file (a link to one is followed).

    Args:
        path: The file.
        refused: What the message says after the file's kind, e.g. `not read (answers are read from files only)`.
        limit: The largest size accepted, in bytes (None: any).

    Raises:
        DataError: `path` is no regular file (a device, a FIFO, a socket, a folder), is larger than `limit`, or
            cannot be opened.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opened blocking would wait for a writer
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            kind = next((name for test, name in _KINDS if test(status.st_mode)), "not a regular file")
            raise DataError(f"{path}: {kind}, not a file: {refused}")
        if limit is not None and status.st_size > limit:
            raise DataError(_too_large(path, limit))
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as handle:
        yield handle


def read_input(path: Path) -> bytes:
    """The whole of the input file `path`, read in chunks.

    Raises:
        DataError: no regular file, more than `MAX_INPUT_BYTES` (also when it grew while read), or unreadable.
    """
    chunks: list[bytes] = []
    size = 0
    with _opened(path) as handle:
        while chunk := _read(path, handle, min(CHUNK_BYTES, MAX_INPUT_BYTES + 1 - size)):
            size += len(chunk)
            if size > MAX_INPUT_BYTES:
                raise DataError(_too_large(path, MAX_INPUT_BYTES))
            chunks.append(chunk)
    return b"".join(chunks)


def input_lines(path: Path, limit: int | None = MAX_INPUT_BYTES) -> Iterator[bytes]:
    """The lines of the input file `path` (each with its "\\n", the last maybe without), one at a time.

    Args:
        path: The file.
        limit: The file's size at most; None: any size, each line at most `MAX_ENTRY_BYTES`.

    Raises:
        DataError: as `read_input` (past `limit`), or a line past `MAX_ENTRY_BYTES` (`limit` None).
    """
    size = 0
    line_size = 0
    cap = MAX_INPUT_BYTES if limit is None else limit
    with _opened(path, limit) as handle:
        parts: list[bytes] = []
        number = 1
        while part := _readline(path, handle, CHUNK_BYTES if limit is None else min(CHUNK_BYTES, cap + 1 - size)):
            size += len(part)
            line_size += len(part)
            if limit is not None and size > limit:
                raise DataError(_too_large(path, limit))
            if limit is None and line_size > MAX_ENTRY_BYTES:
                raise DataError(f"{path}: line {number} longer than {MAX_ENTRY_BYTES >> 20} MiB, the most one entry "
                                "may hold (datahome.input_files.MAX_ENTRY_BYTES)")
            parts.append(part)
            if part.endswith(b"\n"):
                yield b"".join(parts)
                parts.clear()
                line_size = 0
                number += 1
        if parts:
            yield b"".join(parts)


def input_chunks(path: Path) -> Iterator[bytes]:
    """The input file `path` in chunks of at most `CHUNK_BYTES`, whatever its size: for a reader that holds one
    entry at a time and caps each at `MAX_ENTRY_BYTES` itself.

    Raises:
        DataError: no regular file, or unreadable.
    """
    with _opened(path, None) as handle:
        while chunk := _read(path, handle, CHUNK_BYTES):
            yield chunk


def distinct_inputs(paths: Sequence[Path]) -> None:
    """Refuses a file given twice: two paths to one file (a link, `./a` and `a`), or two files of the same content.

    Raises:
        UsageError: the first two paths naming the same file or content, named.
        DataError: a file that cannot be read (as `read_input`).
    """
    seen: dict[Path, Path] = {}
    for path in paths:
        resolved = path.resolve()
        if resolved in seen:
            raise UsageError(f"{seen[resolved]} and {path}: the same file given twice (its answers would count "
                             "twice): give each file once")
        seen[resolved] = path
    by_size: dict[int, list[Path]] = {}
    for path in seen.values():
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
        by_size.setdefault(size, []).append(path)
    contents: dict[bytes, Path] = {}
    for group in (group for group in by_size.values() if len(group) > 1):
        for path in group:
            digest = _digest(path)
            if digest in contents:
                raise UsageError(f"{contents[digest]} and {path}: the same content in two files (its answers would "
                                 "count twice): give each file once")
            contents[digest] = path


def _digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with _opened(path) as handle:
        while chunk := _read(path, handle, CHUNK_BYTES):
            digest.update(chunk)
    return digest.digest()


def _opened(path: Path, limit: int | None = MAX_INPUT_BYTES) -> AbstractContextManager[BinaryIO]:
    return open_regular(path, "not read (answers are read from files only: save them to a file first)", limit)


def _read(path: Path, handle: BinaryIO, size: int) -> bytes:
    try:
        return handle.read(size)
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _readline(path: Path, handle: BinaryIO, size: int) -> bytes:
    try:
        return handle.readline(size)
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _too_large(path: Path, limit: int) -> str:
    return (f"{path}: larger than {limit >> 20} MiB, the most an input file may hold (datahome.input_files."
            "MAX_INPUT_BYTES): split it into several files")
