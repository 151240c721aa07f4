"""Writes a comparison to a folder: `compare.md`, `compare.html` with a page per changed task under `pairs/`,
one CSV per table under `csv/`, and `compare.json` (what `--json` prints)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import orjson

from reports.csv_out import write_csv
from reports.markdown import markdown_table
from reports.paired.analysis import Comparison, to_json
from reports.paired.html import pair_pages, render_compare_html
from reports.staging import staged
from reports.table import Table


def render_markdown(title: str, notes: Sequence[str], tables: Sequence[Table]) -> str:
    return "\n\n".join([f"# {title}", *notes, *(markdown_table(table) for table in tables)]) + "\n"


def write_comparison(comparison: Comparison, title: str, notes: Sequence[str], tables: Sequence[Table],
                     out: Path) -> dict[str, Path]:
    """Renders every output into `out` (replacing an earlier comparison there; written aside and moved into place,
    so a reader never sees half of one) and returns the main files."""
    out = out.resolve()
    with staged(out, "compare.html", "comparison") as staging:
        (staging / "csv").mkdir()
        (staging / "pairs").mkdir()
        for table in tables:
            write_csv(table, staging / "csv")
        (staging / "compare.md").write_text(render_markdown(title, notes, tables), encoding="utf-8")
        (staging / "compare.html").write_text(render_compare_html(title, notes, tables, comparison),
                                              encoding="utf-8")
        for path, page in pair_pages(comparison):
            (staging / path).write_text(page, encoding="utf-8")
        (staging / "compare.json").write_bytes(orjson.dumps(to_json(comparison), option=orjson.OPT_INDENT_2))
    return {"markdown": out / "compare.md", "html": out / "compare.html", "csv": out / "csv",
            "json": out / "compare.json"}
