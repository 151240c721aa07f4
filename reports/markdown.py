"""`report.md`: the report as GitHub-flavoured Markdown, plots linked as PNG files beside it."""

from __future__ import annotations

from reports.build import Report
from reports.table import Kind, Table, show

_ESCAPED = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", **{c: "\\" + c for c in "\\|`*_[]"}})
"""Untrusted text (labels, model output) stays text: no HTML (`<script>`), no links, emphasis or code spans."""


def _cell(text: str) -> str:
    """Text as Markdown shows it literally, on one line (a table cell cannot hold a line break)."""
    return text.translate(_ESCAPED).replace("\n", " ")


def _prose(text: str) -> str:
    """A note (ours, though it may quote labels) with its `code spans` kept as code, the rest as `_cell` shows it:
    inside a span Markdown shows every character as it is (no HTML, no links), so nothing there is escaped."""
    parts = text.replace("\n", " ").split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: all literal
        return _cell(text)
    return "`".join(part if inside else _cell(part) for part, inside in zip(parts, [False, True] * len(parts)))


def markdown_table(table: Table) -> str:
    numeric = [column.kind is not Kind.TEXT for column in table.columns]
    lines = [f"### {_cell(table.title)}", "",
             "| " + " | ".join(_cell(column.name) for column in table.columns) + " |",
             "|" + "|".join("---:" if right else "---" for right in numeric) + "|"]
    for row in table.rows:
        lines.append("| " + " | ".join(_cell(show(value, column.kind)) for value, column in zip(row, table.columns))
                     + " |")
    if not table.rows:  # said, not a blank row
        lines += ["", "_None in these runs._"]
    if table.note:
        lines += ["", f"_{_prose(table.note)}_"]
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    """The whole report; plots are referenced as `plots/<name>.png` (written by `write_report`)."""
    parts = [f"# {_cell(report.title)}"]
    for section in report.sections:
        parts.append(f"## {_cell(section.title)}")
        parts += [_prose(note) for note in section.notes]
        parts += [markdown_table(table) for table in section.tables]
        parts += [f"![{_cell(plot.title)}](plots/{plot.name}.png)" for plot in section.plots]
    return "\n\n".join(parts) + "\n"
