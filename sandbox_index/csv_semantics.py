"""Reading a CSV the way `pandas.read_csv` does with default options (docs/fidelity/travelplanner.md §1.1), without
pandas.

The official tools load every table with `pd.read_csv(path)`; what they see depends on pandas' defaults:
which strings count as missing, which dtype a column gets (which decides how a value is rendered:
`131.0`, not `131`), the label of each row, and how unnamed header cells are called. This module reproduces
exactly those rules for the files tripbench imports; the equivalence is tested against real pandas.

Files are streamed twice (`scan_csv` infers dtypes over the whole column, `typed_rows` then yields the
rows), so a full-size flights file (~300 MB) never sits in memory. Both passes work on batches of rows
turned into columns, so the per-value work runs in C (`frozenset.isdisjoint`, `map` of a compiled regex,
`int`, `float`): the 3.8M-row flights file imports in tens of seconds, not minutes.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import compress, islice
from operator import itemgetter
from pathlib import Path
from typing import Any

from errors import DataError

# pandas' default `na_values` (pandas/_libs/parsers.pyx STR_NA_VALUES); an empty field is missing too.
NA_VALUES = frozenset(
    {
        "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
        "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
    }
)  # fmt: skip

# What pandas' C parser accepts as int64 / float64 (it tolerates surrounding whitespace, not underscores).
# ASCII only: Python's `\d` would also accept other scripts' digits, which pandas reads as text.
_INT = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)
_FLOAT = re.compile(
    r"\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|infinity)\s*", re.ASCII | re.I
)
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


_CONVERT = {"int": int, "float": float, "str": None}  # str: the raw text, as pandas keeps it
_BATCH = 65_536


class _DtypeTracker:
    """Follows pandas' inference on one column: int64 unless a value is missing or not an integer,
    float64 unless a value is not numeric (an all-missing column is float64), else object (str).
    Booleans are read as text: none of the benchmark tables has a True/False column."""

    __slots__ = ("can_int", "can_float", "has_missing")

    def __init__(self) -> None:
        self.can_int = self.can_float = True
        self.has_missing = False

    def see(self, column: list[str]) -> None:
        """Update with a batch of one column's raw values."""
        batch_missing = not NA_VALUES.isdisjoint(column)
        self.has_missing |= batch_missing
        values = [v for v in column if v not in NA_VALUES] if batch_missing else column
        if self.can_int and not (
            all(map(_INT.fullmatch, values))
            and (max(map(len, values), default=0) < 19 or all(abs(int(v)) <= _INT64_MAX for v in values))
        ):
            self.can_int = False
        if not self.can_int and self.can_float and not all(map(_FLOAT.fullmatch, values)):
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


def _first_undecodable_line(path: Path) -> int:
    # The text layer decodes in chunks, so the failing line is found again byte-wise for the message.
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return 0


def _record_line(path: Path, index: int) -> int:
    """First physical line of the `index`-th data record (0-based, blank lines skipped): error messages."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        line, seen = 0, -2  # the header is record -1
        for record in reader:
            start, line = line + 1, reader.line_num
            if record:
                seen += 1
                if seen == index:
                    return start
    return line


def _read(path: Path) -> Iterator[Any]:
    try:
        handle = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    reader = csv.reader(handle)
    try:
        with handle:
            cells = next((record for record in reader if record), None)
            if cells is None:
                raise DataError(f"{path}: empty file, expected a CSV header")
            header = _header_names(cells, path)
            yield header
            rows = 0
            while batch := list(islice(reader, _BATCH)):
                if set(map(len, batch)) != {len(header)}:
                    batch = [record for record in batch if record]  # blank lines: skipped, as pandas does
                    for i, record in enumerate(batch):
                        if len(record) != len(header):
                            line = _record_line(path, rows + i)
                            raise DataError(
                                f"{path}: line {line}: expected {len(header)} fields, saw {len(record)}"
                            )
                rows += len(batch)
                if batch:
                    yield batch
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: line {_first_undecodable_line(path)}: not valid UTF-8") from exc
    except csv.Error as exc:
        raise DataError(f"{path}: line {reader.line_num + 1}: malformed CSV: {exc}") from exc


def read_csv(path: Path) -> tuple[tuple[str, ...], Iterator[list[list[str]]]]:
    """The header (pandas column names) and an iterator over batches of data rows (lists of fields).

    Blank lines are skipped as pandas does (`skip_blank_lines=True`); every data row must have as many
    fields as the header.

    Raises:
        DataError: unreadable or undecodable file, empty file, malformed CSV or a wrong field count,
            naming the file and line (the iterator raises when it reaches the bad row).
    """
    batches = _read(path)
    return next(batches), batches


def scan_csv(path: Path, required: tuple[str, ...]) -> CsvScan:
    """First pass: check the header has every `required` column, infer each column's pandas dtype.

    Raises:
        DataError: as `read_csv`, or a header missing a required column.
    """
    header, batches = read_csv(path)
    missing = [name for name in required if name not in header]
    if missing:
        raise DataError(
            f"{path}: line 1: bad header: missing column {missing[0]!r} "
            f"(expected columns {', '.join(required)})"
        )
    trackers = [_DtypeTracker() for _ in header]
    rows = 0
    for batch in batches:
        rows += len(batch)
        for position, tracker in enumerate(trackers):
            if tracker.can_int or tracker.can_float:  # a str column stays str whatever comes next
                tracker.see(list(map(itemgetter(position), batch)))
    return CsvScan(path, header, tuple(t.dtype for t in trackers), rows)


def typed_rows(
    scan: CsvScan, columns: tuple[str, ...], *, dropna: bool
) -> Iterator[list[tuple[object, ...]]]:
    """Second pass: batches of `(pandas row label, *values of columns)` in file order.

    Values are typed as pandas holds them (int / float / str per the scanned dtype). With `dropna`, rows
    with a missing field in ANY column are skipped (the official `dropna()`, docs/fidelity/travelplanner.md §1.1);
    without, a missing value is None.
    """
    _, batches = read_csv(scan.path)
    positions = [scan.position(c) for c in columns]
    converters = [_CONVERT[scan.dtypes[p]] for p in positions]
    first = 0
    for batch in batches:
        labels: range | list[int] = range(first, first + len(batch))
        first += len(batch)
        if dropna:
            keep = list(map(NA_VALUES.isdisjoint, batch))
            if not all(keep):
                labels, batch = list(compress(labels, keep)), list(compress(batch, keep))
        if not batch:
            continue
        raw = list(zip(*batch, strict=True))
        values = [
            (raw[p] if convert is None else map(convert, raw[p]))
            if dropna or NA_VALUES.isdisjoint(raw[p])
            else [None if v in NA_VALUES else v if convert is None else convert(v) for v in raw[p]]
            for p, convert in zip(positions, converters, strict=True)
        ]
        yield list(zip(labels, *values, strict=True))


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
