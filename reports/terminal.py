"""Report tables in a terminal (rich), readable at 80 columns."""

from __future__ import annotations

from rich.table import Table as RichTable

from reports.table import Kind, Table, show

TEXT_MIN_WIDTH = 10
"""Text columns fold below their widest value, down to this many characters."""


def terminal_table(table: Table) -> RichTable:
    """A report table for a terminal: text columns that hold one value throughout are left out (said in the
    title), and so is the run column when the rows stay distinct without it; numbers are never cut, text folds, so
    it stays readable at 80 columns."""
    constant = [n for n, column in enumerate(table.columns) if column.kind == Kind.TEXT and len(table.rows) > 1
                and len({row[n] for row in table.rows}) == 1]
    kept = [n for n in range(len(table.columns)) if n not in constant]
    if table.columns[kept[0]].name == "run" and len({row[1:] for row in table.rows}) == len(table.rows):
        kept = kept[1:]
    title = table.title + "".join(f", {table.columns[n].name} {table.rows[0][n]}" for n in constant)
    shown = RichTable(title=title)
    for n in kept:
        column = table.columns[n]
        cells = [show(row[n], column.kind) for row in table.rows]
        widest = max(map(len, cells), default=1)
        header = column.short or column.name
        if column.kind == Kind.TEXT:
            shown.add_column(header, overflow="fold", min_width=min(widest, TEXT_MIN_WIDTH))
        else:  # the header wraps onto more lines, the number stays whole
            shown.add_column(header, justify="right", min_width=widest,
                             max_width=max(widest, *(len(word) for word in header.split())))
    for row in table.rows:
        shown.add_row(*(show(row[n], table.columns[n].kind) for n in kept))
    return shown
