"""Reading a CSV the way `pandas.read_csv` does with default options (spec §1.1), without pandas.

The official tools load every table with `pd.read_csv(path)`; what they see depends on pandas' defaults:
which strings count as missing, which dtype a column gets (which decides how a value is rendered:
`131.0`, not `131`), the label of each row, and how unnamed header cells are called. This module reproduces
exactly those rules for the files tripbench imports; the equivalence is tested against real pandas.

Files are streamed twice (`scan_csv` infers dtypes over the whole column, `iter_records` then yields the
rows), so a full-size flights file (~300 MB) never sits in memory.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from runner.errors import DataError

# pandas' default `na_values` (pandas/_libs/parsers.pyx STR_NA_VALUES); an empty field is missing too.
NA_VALUES = frozenset(
    {
        "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
        "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
    }
)  # fmt: skip

# What pandas' C parser accepts as int64 / float64 (it tolerates surrounding whitespace, not underscores).
_INT = re.compile(r"\s*[+-]?\d+\s*")
_FLOAT = re.compile(r"\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|infinity)\s*", re.I)
_INT64_MAX = 2**63 - 1

Dtype = str  # 'int' | 'float' | 'str'


@dataclass(frozen=True, slots=True)
class CsvScan:
    """What the first pass learned about a CSV: its columns, their pandas dtypes, its data-row count."""

    path: Path
    header: tuple[str, ...]
    dtypes: tuple[Dtype, ...]
    rows: int

    def position(self, column: str) -> int:
        """Index of `column` in the header."""
        return self.header.index(column)


def is_missing(text: str) -> bool:
    """True when pandas reads `text` as NaN (default `na_values`, exact match)."""
    return text in NA_VALUES


def convert(text: str, dtype: Dtype) -> int | float | str | None:
    """The value pandas holds for a non-missing `text` in a column of `dtype`; None when missing."""
    if text in NA_VALUES:
        return None
    if dtype == "int":
        return int(text)
    if dtype == "float":
        return float(text)
    return text


class _DtypeTracker:
    """Follows pandas' inference on one column: int64 unless a value is missing or not an integer,
    float64 unless a value is not numeric (an all-missing column is float64), else object (str).
    Booleans are read as text: none of the benchmark tables has a True/False column."""

    __slots__ = ("can_int", "can_float", "has_missing")

    def __init__(self) -> None:
        self.can_int = self.can_float = True
        self.has_missing = False

    def see(self, text: str) -> None:
        if text in NA_VALUES:
            self.has_missing = True
            return
        if self.can_int and not (_INT.fullmatch(text) and abs(int(text)) <= _INT64_MAX):
            self.can_int = False
        if not self.can_int and self.can_float and not _FLOAT.fullmatch(text):
            self.can_float = False

    @property
    def dtype(self) -> Dtype:
        if self.can_int and not self.has_missing:
            return "int"
        return "float" if self.can_float else "str"


def _header_names(cells: list[str], path: Path) -> tuple[str, ...]:
    # pandas names an empty header cell by its position ("Unnamed: 0" for the saved index column).
    names = tuple(cell if cell else f"Unnamed: {i}" for i, cell in enumerate(cells))
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise DataError(f"{path}: line 1: bad header: duplicate column {duplicates[0]!r}")
    return names


def _open_reader(path: Path) -> tuple[object, Iterator[list[str]]]:
    try:
        handle = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return handle, csv.reader(handle)


def _first_undecodable_line(path: Path) -> int:
    # The text layer decodes in chunks, so the failing line is found again byte-wise for the message.
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return 0


def iter_csv(path: Path) -> Iterator[tuple[int, list[str] | tuple[str, ...]]]:
    """Yield `(line, header)` first, then `(line, fields)` per data row; `line` is the record's first line.

    Blank lines are skipped as pandas does (`skip_blank_lines=True`); every data row must have as many
    fields as the header.

    Raises:
        DataError: unreadable or undecodable file, empty file, malformed CSV or a wrong field count,
            naming the file and line.
    """
    handle, reader = _open_reader(path)
    line = 0
    try:
        with handle:  # type: ignore[attr-defined]
            header: tuple[str, ...] | None = None
            for record in reader:
                start, line = line + 1, reader.line_num  # type: ignore[attr-defined]
                if not record:
                    continue
                if header is None:
                    header = _header_names(record, path)
                    yield start, header
                elif len(record) != len(header):
                    raise DataError(f"{path}: line {start}: expected {len(header)} fields, saw {len(record)}")
                else:
                    yield start, record
            if header is None:
                raise DataError(f"{path}: empty file, expected a CSV header")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: line {_first_undecodable_line(path)}: not valid UTF-8") from exc
    except csv.Error as exc:
        raise DataError(f"{path}: line {line + 1}: malformed CSV: {exc}") from exc


def scan_csv(path: Path, required: tuple[str, ...]) -> CsvScan:
    """First pass: check the header has every `required` column, infer each column's pandas dtype.

    Raises:
        DataError: as `iter_csv`, or a header missing a required column.
    """
    records = iter_csv(path)
    _, header = next(records)
    missing = [name for name in required if name not in header]
    if missing:
        raise DataError(
            f"{path}: line 1: bad header: missing column {missing[0]!r} "
            f"(expected columns {', '.join(required)})"
        )
    trackers = [_DtypeTracker() for _ in header]
    rows = 0
    for _, fields in records:
        rows += 1
        for tracker, text in zip(trackers, fields, strict=True):
            tracker.see(text)
    return CsvScan(path, tuple(header), tuple(t.dtype for t in trackers), rows)


def iter_rows(scan: CsvScan) -> Iterator[tuple[int, list[str]]]:
    """Second pass: `(pandas row label, raw fields)` per data row, in file order."""
    records = iter_csv(scan.path)
    next(records)
    for label, (_, fields) in enumerate(records):
        yield label, list(fields)


def read_lines(path: Path) -> list[str]:
    """The lines of a small text file (background/*.txt), without line terminators or a final empty line.

    Raises:
        DataError: unreadable or undecodable file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: line {_first_undecodable_line(path)}: not valid UTF-8") from exc
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
