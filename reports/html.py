"""`report.html` and its rollout pages: self-contained on disk (inline CSS, plots as data URIs, a small sort script,
no external asset).

Model output is untrusted: every string reaches a page through `esc` (datasette's autoescape idea, one helper),
and a Content-Security-Policy allows only this module's own script (by hash) and data-URI images, so even a string
that slipped through could not run. `report.html` holds the tables, the plots and an index of every rollout (one
line each, so 12,000 rollouts stay a few MB and open at once); each index line links to the rollout's own page under
`rollouts/`, the drill-down: its trajectory with the step states, its plan, and each failed constraint with the
evaluator's message.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable, Iterator
from typing import Any

from benchmarks.base import DELIVERED, Benchmark
from reports.build import Report
from reports.collect import Group, RolloutView, benchmarks_of, load_benchmark, rollout_path
from reports.plots import Plot
from reports.table import Kind, Table, raw, show

TEXT_LIMIT = 4000
"""Characters of an answer, plan or error shown in the drill-down (the rest: the run's trajectories file)."""
STEP_LIMIT = 800
"""Characters of one trajectory cell (observations are whole tables; 30 steps x 1,000 rollouts add up)."""

SORT_SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], index = th.cellIndex;
    var numeric = th.dataset.kind !== "text", ascending = th.dataset.order !== "asc";
    table.querySelectorAll("th").forEach(function (other) { delete other.dataset.order; });
    th.dataset.order = ascending ? "asc" : "desc";
    var rows = Array.from(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[index].dataset.sort, y = b.cells[index].dataset.sort;
      if (numeric) {
        x = parseFloat(x); y = parseFloat(y);  // a blank or a word ("not measured") sorts first
        x = isNaN(x) ? -Infinity : x; y = isNaN(y) ? -Infinity : y;
        return ascending ? x - y : y - x;
      }
      return ascending ? x.localeCompare(y) : y.localeCompare(x);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""

VIEWS_SCRIPT = """
document.querySelectorAll("select.views").forEach(function (select) {
  select.addEventListener("change", function () {
    select.closest("div.views").querySelectorAll(":scope > div.view").forEach(function (view, i) {
      view.hidden = String(i) !== select.value;
    });
  });
});
"""
SCRIPT = SORT_SCRIPT + VIEWS_SCRIPT
"""The page's only script (allowed by its hash): sortable tables, and the selector of collapsed look-alike tables."""
COLLAPSE_AT = 3
"""Consecutive tables of a section that differ only in their numbers (same columns, same row labels) are shown as one
view with a selector from this many on (a Table 4 per model and strategy)."""

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1400px; padding: 0 24px 48px; color: #1b1f24; }
h1 { font-size: 22px; } h2 { margin-top: 36px; border-bottom: 1px solid #d0d7de; } h3 { font-size: 15px; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; margin: 8px 0 4px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; white-space: nowrap; }
th[data-order="asc"]::after { content: " \\25B2"; } th[data-order="desc"]::after { content: " \\25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
p.note { color: #57606a; margin: 2px 0 14px; font-size: 13px; }
img { max-width: 100%; display: block; margin: 10px 0; }
details { margin: 4px 0; } details details { margin-left: 18px; }
summary { cursor: pointer; } .failed { color: #cf222e; } .ok { color: #1a7f37; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: 6px; margin: 4px 0;
      max-height: 360px; overflow: auto; font-size: 12px; }
table.steps td { font-size: 12px; max-width: 520px; white-space: pre-wrap; word-break: break-word; }
ul.index { list-style: none; padding-left: 18px; margin: 4px 0; } ul.index li { margin: 1px 0; }
div.scroll { max-width: 100%; overflow-x: auto; } div.views > label { font-size: 13px; }
"""


def esc(value: Any) -> str:
    """The one way a value reaches the page: as text, quotes escaped too (it may sit in an attribute)."""
    return html.escape("" if value is None else str(value), quote=True)


def _clip(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit:,} more characters)"


def table_html(table: Table) -> str:
    head = "".join(f'<th data-kind="{"text" if c.kind is Kind.TEXT else "num"}">{esc(c.name)}</th>'
                   for c in table.columns)
    rows = []
    for row in table.rows:
        cells = []
        for value, column in zip(row, table.columns):
            sort = raw(value, column.kind)
            css = "" if column.kind is Kind.TEXT else ' class="num"'
            cells.append(f'<td{css} data-sort="{esc("" if sort is None else sort)}">{esc(show(value, column.kind))}'
                         "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{esc(table.note)}</p>' if table.note else ""
    return (f'<h3 id="{esc(table.name)}">{esc(table.title)}</h3><div class="scroll"><table class="sortable"><thead>'
            f"<tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{note}")


def _tables(tables: list[Table]) -> Iterator[str]:
    """The tables of a section; a run of `COLLAPSE_AT` or more look-alikes as one view with a selector."""
    start = 0
    while start < len(tables):
        end = start + 1
        while end < len(tables) and _shape(tables[end]) == _shape(tables[start]):
            end += 1
        run = tables[start:end]
        yield _views(run) if len(run) >= COLLAPSE_AT else "".join(table_html(table) for table in run)
        start = end


def _shape(table: Table) -> tuple[object, ...]:
    return tuple(c.name for c in table.columns), tuple(row[0] for row in table.rows if row)


def _views(tables: list[Table]) -> str:
    options = "".join(f'<option value="{n}">{esc(table.title)}</option>' for n, table in enumerate(tables))
    views = "".join(f'<div class="view"{" hidden" if n else ""}>{table_html(table)}</div>'
                    for n, table in enumerate(tables))
    return (f'<div class="views"><label>{len(tables)} tables alike, one shown: <select class="views">{options}'
            f"</select></label>{views}</div>")


def _plot(plot: Plot) -> str:
    data = base64.b64encode(plot.png).decode("ascii")
    return f'<img alt="{esc(plot.title)}" src="data:image/png;base64,{data}">'


def _steps(steps: list[dict[str, Any]]) -> str:
    if not steps:
        return "<p>No trajectory recorded.</p>"
    keys: list[str] = []
    for step in steps:
        keys += [key for key in step if key not in keys]
    head = "".join(f"<th>{esc(key)}</th>" for key in keys)
    rows = "".join("<tr>" + "".join(f"<td>{esc(_clip(_text(step.get(key)), STEP_LIMIT))}</td>" for key in keys)
                   + "</tr>" for step in steps)
    return f'<div class="scroll"><table class="steps"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _verdicts(view: RolloutView) -> str:
    if view.evaluation is None:
        return "<p>Not evaluated.</p>"
    if not view.evaluation.verdicts:
        return '<p class="failed">No plan delivered: nothing to check.</p>'
    failed = [v for v in view.evaluation.verdicts if v.passed is False]
    if not failed:
        return '<p class="ok">Every checked constraint passed.</p>'
    items = "".join(f"<li><b>{esc(v.constraint)}</b> ({esc(v.group)}): {esc(v.message or 'failed')}</li>"
                    for v in failed)
    return f'<p class="failed">Failed constraints:</p><ul>{items}</ul>'


def _facts(view: RolloutView, benchmark: Benchmark) -> str:
    """The rollout's metric values, when its benchmark's report part offers them (an optional
    `rollout_facts(view) -> [(name, value)]`)."""
    read = getattr(benchmark.report, "rollout_facts", None) if benchmark.report is not None else None
    facts = read(view) if callable(read) else []
    if not facts:
        return ""
    rows = "".join(f"<tr><td>{esc(name)}</td><td>{esc(shown)}</td></tr>" for name, shown in facts)
    return f'<h3>Metrics</h3><div class="scroll"><table class="steps"><tbody>{rows}</tbody></table></div>'


def _outcome(view: RolloutView, benchmark: Benchmark) -> tuple[str, str]:
    """The rollout's mark (✓ / ✗, as HTML) and how it ended in its benchmark's own terms
    (its report part's `rollout_category`; else its status)."""
    category = benchmark.report.rollout_category(view) if benchmark.report is not None else view.stored.status
    failed = view.evaluation is not None and any(v.passed is False for v in view.evaluation.verdicts)
    delivered = view.stored.status == DELIVERED
    mark = '<span class="failed">✗</span>' if failed or not delivered else '<span class="ok">✓</span>'
    return mark, category


def _rollout(view: RolloutView, benchmark: Benchmark) -> str:
    stored = view.stored
    mark, category = _outcome(view, benchmark)
    summary = (f"{mark} task {esc(stored.key.task)} · {esc(category)} · {stored.n_steps} steps · "
               f"{stored.calls} calls · ${stored.cost_usd:.4f}")
    query = view.task.input.get("query") if view.task is not None else None
    parts = [f"<h2>{summary}</h2>",
             f"<p><b>Query:</b> {esc(query)}</p>" if query else "",
             f"<p><b>Error:</b> {esc(_clip(stored.error))}</p>" if stored.error else "",
             _verdicts(view),
             _facts(view, benchmark),
             f"<details><summary>Answer</summary><pre>{esc(_clip(stored.answer))}</pre></details>"
             if stored.answer else "",
             "<details><summary>Structured plan</summary><pre>"
             f"{esc(_clip(json.dumps(plan, indent=1, ensure_ascii=False, default=str)))}</pre></details>"
             if (plan := view.plan) else "",
             f"<h3>Trajectory</h3>{_steps(view.steps)}"]
    return "".join(parts)


def _index(groups: Iterable[tuple[int, Group, Benchmark]]) -> Iterator[str]:
    """One line per rollout, by group (closed until opened: the browser lays out none of it before); a line at a
    time, so that a report of 80,000 rollouts never holds them all as text."""
    for run, group, benchmark in groups:
        statuses: dict[str, int] = {}
        for view in group.rollouts:
            statuses[view.stored.status] = statuses.get(view.stored.status, 0) + 1
        counts = ", ".join(f"{esc(status)} {n}" for status, n in sorted(statuses.items()))
        yield (f"<details><summary><b>{esc(group.run)}: {esc(group.label)}</b> · {esc(group.split)}"
               f" · {len(group.rollouts)} rollouts ({counts})</summary><ul class=\"index\">")
        for view in group.rollouts:
            mark, category = _outcome(view, benchmark)
            yield (f'<li>{mark} <a href="{rollout_path(run, view)}">task {esc(view.stored.key.task)}</a> '
                   f"{esc(category)} · {view.stored.n_steps} steps · ${view.stored.cost_usd:.4f}</li>")
        yield "</ul></details>"


def page(title: str, body: str, *, script: bool = False) -> str:
    """A page with the report's style and policy (and its script, for `report.html`)."""
    return "".join(_page((body,), title, script=script))


def _page(body: Iterable[str], title: str, *, script: bool = False) -> Iterator[str]:
    """`page`, a part at a time: the head, the parts of `body`, the end."""
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    policy = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'"
    yield ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">'
           f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>")
    yield from body
    yield (f"<script>{SCRIPT}</script>" if script else "") + "</body></html>\n"


def rollout_pages(report: Report) -> Iterator[tuple[str, str]]:
    """(path relative to `report.html`, page) of every rollout's drill-down."""
    for run, group, benchmark in _groups(report):
        for view in group.rollouts:
            title = f"{group.run}: {group.label} · task {view.stored.key.task}"
            body = (f'<p><a href="../../report.html#rollouts">← {esc(report.title)}</a></p>'
                    f"<h1>{esc(title)}</h1>{_rollout(view, benchmark)}")
            yield rollout_path(run, view), page(title, body)


def _groups(report: Report) -> Iterator[tuple[int, Group, Benchmark]]:
    """Every group with its run's position and its benchmark."""
    references = benchmarks_of(report.runs)
    for run, data in enumerate(report.runs):
        for group in data.groups:
            yield run, group, load_benchmark(references[group.benchmark])


def render_html(report: Report) -> str:
    """`report.html`. Deterministic for a given report (no timestamps), so two renders compare equal."""
    return "".join(html_parts(report))


def html_parts(report: Report) -> Iterator[str]:
    """`render_html`'s text a part at a time (the rollouts' list a line at a time), to be written as it comes."""
    return _page(_body(report), report.title, script=True)


def _body(report: Report) -> Iterator[str]:
    nav = "".join(f'<a href="#s{n}">{esc(section.title)}</a>' for n, section in enumerate(report.sections))
    yield f"<h1>{esc(report.title)}</h1><nav>{nav}<a href=\"#rollouts\">Rollouts</a></nav>"
    for n, section in enumerate(report.sections):
        yield f'<h2 id="s{n}">{esc(section.title)}</h2>'
        yield from (f'<p class="note">{esc(note)}</p>' for note in section.notes)
        yield from _tables(list(section.tables))
        yield from (_plot(plot) for plot in section.plots)
    yield ('<h2 id="rollouts">Rollouts</h2><p class="note">Every rollout and how it ended; its page (the link) '
           "shows the failed constraints, the plan and the trajectory with its step states.</p>")
    yield from _index(_groups(report))
