"""Writes a report to a folder: `report.md`, `report.html` with a page per rollout under `rollouts/`, one CSV per
table, one PNG per plot, and `provenance.json` (what made the numbers: `runner.store.provenance`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reports.build import Report
from reports.csv_out import write_csv
from reports.html import html_parts, rollout_pages
from reports.markdown import render_markdown
from reports.staging import staged
from runner.store.provenance import PROVENANCE_FILE


def write_report(report: Report, out: str | os.PathLike[str]) -> dict[str, Path]:
    """Renders every output into `out` (replacing an earlier report there) and returns the main files.

    Files are written into a temporary folder beside `out` and moved into place at the end, so a reader never
    sees half a report.

    Args:
        report: The report to render.
        out: The report folder (a `str` from a notebook works as well as a `Path`).
    """
    out = Path(out).resolve()
    with staged(out, "report.html", "report") as staging:
        (staging / "csv").mkdir()
        (staging / "plots").mkdir()
        for table in report.tables():
            write_csv(table, staging / "csv")
        for plot in report.plots():
            (staging / "plots" / f"{plot.name}.png").write_bytes(plot.png)
        (staging / "report.md").write_text(render_markdown(report), encoding="utf-8")
        with (staging / "report.html").open("w", encoding="utf-8") as html:
            html.writelines(html_parts(report))
        provenance = [run.provenance for run in report.runs]
        (staging / PROVENANCE_FILE).write_text(json.dumps(provenance[0] if len(provenance) == 1 else provenance,
                                                          indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        for path, page in rollout_pages(report):
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(page, encoding="utf-8")
    return {"markdown": out / "report.md", "html": out / "report.html", "provenance": out / PROVENANCE_FILE,
            "csv": out / "csv", "plots": out / "plots"}
