"""One CSV file per table: raw numbers (percentages in %, dollars unrounded), a header row of column names; text
cells a spreadsheet would run as a formula are neutralised (`datahome.output_files.write_csv`)."""

from __future__ import annotations

from pathlib import Path

from datahome.output_files import write_csv as write_rows
from reports.table import Table, raw


def write_csv(table: Table, folder: Path) -> Path:
    return write_rows(folder / f"{table.name}.csv", (column.name for column in table.columns),
                      ([raw(value, column.kind) for value, column in zip(row, table.columns)] for row in table.rows))
