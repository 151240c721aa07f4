"""How renderers show table cells: Markdown, CSV and HTML show the same rows, formatted per column kind.

The table values themselves (`Table`, `Column`, `Kind`) are `benchmarks.reporting`'s, the contract benchmarks build
their sections with; they are re-exported here for the renderers."""

from __future__ import annotations

from benchmarks.reporting import Cell, Column, Kind, Table, group_columns


def show(value: Cell, kind: Kind) -> str:
    """The text of a cell as Markdown and HTML show it."""
    if value is None:
        return "–"
    if isinstance(value, str) and kind is not Kind.TEXT:
        return value  # a word where a number would be ("not measured")
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
    if kind is Kind.NUMBER:
        return f"{float(value):,.4g}"
    if kind is Kind.P_VALUE:
        return "<0.0001" if float(value) < 0.0001 else f"{float(value):.4f}"
    return str(value)


def raw(value: Cell, kind: Kind) -> Cell:
    """The value of a cell as CSV writes it and HTML sorts it: numbers stay numbers, percentages in %."""
    if value is None or isinstance(value, str) and kind is not Kind.TEXT:
        return value
    if kind in (Kind.PCT, Kind.DELTA):
        return round(100 * float(value), 4)
    if kind in (Kind.USD, Kind.SECONDS, Kind.FLOAT, Kind.NUMBER):
        return round(float(value), 6)
    if kind is Kind.P_VALUE:
        return float(f"{float(value):.6g}")
    return value


__all__ = ["Cell", "Column", "Kind", "Table", "group_columns", "raw", "show"]
