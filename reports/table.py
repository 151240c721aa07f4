"""One table value every renderer reads: Markdown, CSV and HTML show the same rows, formatted per column kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

Cell = str | int | float | None


class Kind(StrEnum):
    """How a column's values are shown (CSV keeps the raw number; None is an empty cell or a dash)."""

    TEXT = "text"
    INT = "int"
    PCT = "pct"
    """A fraction shown as a percentage with one decimal (CSV: the percentage, 4 decimals)."""
    DELTA = "delta"
    """A difference of two fractions, in percentage points with a sign."""
    USD = "usd"
    SECONDS = "seconds"
    FLOAT = "float"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind = Kind.TEXT


@dataclass(slots=True)
class Table:
    """A titled table; `name` is its CSV file stem and HTML anchor (unique within a report)."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: list[tuple[Cell, ...]] = field(default_factory=list)
    note: str | None = None
    """A sentence shown under the table (what it counts, what is left out)."""

    def add(self, *cells: Cell) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"table {self.name}: {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(cells)


def show(value: Cell, kind: Kind) -> str:
    """The text of a cell as Markdown and HTML show it."""
    if value is None:
        return "–"
    if kind is Kind.PCT:
        return f"{100 * float(value):.1f}"
    if kind is Kind.DELTA:
        return f"{100 * float(value):+.1f}"
    if kind is Kind.USD:
        return f"${float(value):,.4f}" if abs(float(value)) < 1 else f"${float(value):,.2f}"
    if kind is Kind.SECONDS:
        return f"{float(value):.3f} s"
    if kind is Kind.FLOAT:
        return f"{float(value):.2f}"
    if kind is Kind.INT:
        return f"{int(value):,}"
    return str(value)


def raw(value: Cell, kind: Kind) -> Cell:
    """The value of a cell as CSV writes it and HTML sorts it: numbers stay numbers, percentages in %."""
    if value is None:
        return None
    if kind in (Kind.PCT, Kind.DELTA):
        return round(100 * float(value), 4)
    if kind in (Kind.USD, Kind.SECONDS, Kind.FLOAT):
        return round(float(value), 6)
    return value


def group_columns(with_run: bool) -> tuple[Column, ...]:
    """The columns naming a group: its run (only when a report covers several), model, strategy."""
    return ((Column("run"),) if with_run else ()) + (Column("model"), Column("strategy"))
