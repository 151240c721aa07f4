"""Writes a comparison to a folder: `compare.md`, `compare.html` with a page per changed task under `pairs/`,
one CSV per table under `csv/`, and `compare.json` (what `--json` prints)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import orjson

from errors import UsageError, UserError
from reports.csv_out import write_csv
from reports.markdown import markdown_table
from reports.paired.analysis import Comparison, to_json
from reports.paired.html import pair_pages, render_compare_html
from reports.table import Table


def render_markdown(title: str, notes: Sequence[str], tables: Sequence[Table]) -> str:
    return "\n\n".join([f"# {title}", *notes, *(markdown_table(table) for table in tables)]) + "\n"


def write_comparison(comparison: Comparison, title: str, notes: Sequence[str], tables: Sequence[Table],
                     out: Path) -> dict[str, Path]:
    """Renders every output into `out` (replacing an earlier comparison there; written aside and moved into place,
    so a reader never sees half of one) and returns the main files."""
    out = out.resolve()
    if out.is_dir() and any(out.iterdir()) and not (out / "compare.html").is_file():
        raise UsageError(f"{out}: a folder that is not a comparison (no compare.html), which writing one would "
                         "replace: give --out a new or empty folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    except OSError as exc:
        why = f"{exc.filename} is a file, not a folder" if isinstance(exc, FileExistsError) else exc.strerror
        raise UserError(f"{out}: cannot write the comparison there ({why})") from None
    try:
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
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"markdown": out / "compare.md", "html": out / "compare.html", "csv": out / "csv",
            "json": out / "compare.json"}
