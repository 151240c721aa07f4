"""A first look at a file of answers, so `tripbench evaluate FILE` can tell whose answers they are without
`--benchmark` (each benchmark's `Commands.holds_answers` reads it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.jsonl import parse
from datahome.input_files import open_regular
from errors import DataError

SNIFF_BYTES = 1 << 20
"""At most this much of a file is read to recognise it."""


def head(path: Path) -> str:
    """The start of `path` as text ("" when it cannot be read, or is no regular file)."""
    try:
        with open_regular(path, "not read") as file:
            return file.read(SNIFF_BYTES).decode("utf-8", "replace")
    except (OSError, DataError):
        return ""


def first_record(path: Path) -> Any:
    """The first line of `path` that is a JSON object (a JSON-lines file's first readable record), None when none is."""
    for line in head(path).splitlines():
        record, _ = parse(line)
        if isinstance(record, dict):
            return record
    return None
