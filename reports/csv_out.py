"""One CSV file per table: raw numbers (percentages in %, dollars unrounded), a header row of column names."""

from __future__ import annotations

import csv
from pathlib import Path

from reports.table import Cell, Table, raw


def write_csv(table: Table, folder: Path) -> Path:
    path = folder / f"{table.name}.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(column.name for column in table.columns)
        for row in table.rows:
            writer.writerow("" if value is None else _inert(raw(value, column.kind))
                            for value, column in zip(row, table.columns))
    return path


def _inert(value: Cell) -> Cell:
    """A text cell a spreadsheet would run as a formula (`=HYPERLINK(...)`, `+`, `-`, `@`, a tab or a carriage
    return first) is quoted with a leading `'`, as OWASP advises; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r")):
        return "'" + value
    return value
