"""`compare.html` and a page per changed task: self-contained, under the report's style, policy and sort script
(`reports.html`). A changed task's page sets A's and B's rollouts side by side, their LLM calls aligned by index with
the first differing call highlighted, then their steps."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import zip_longest
from typing import Any

from reports.collect import RolloutView
from reports.html import STEP_LIMIT, esc, page, table_html
from reports.paired.analysis import Change, Comparison
from reports.table import Table
from runner.store.results import CallRecord

DIFFERS = "background: #ffebe9; font-weight: bold"
"""The style of the first differing call's row."""


def change_path(n: int) -> str:
    return f"pairs/{n}.html"


def changes(comparison: Comparison) -> list[Change]:
    """Every changed task, regressed first, in the order their pages are numbered."""
    return [change for result in comparison.results for change in (*result.regressed, *result.improved)]


def render_compare_html(title: str, notes: Sequence[str], tables: Sequence[Table], comparison: Comparison) -> str:
    body = [f"<h1>{esc(title)}</h1>", *(f'<p class="note">{esc(note)}</p>' for note in notes),
            *(table_html(table) for table in tables)]
    links = [f'<li><a href="{change_path(n)}">{esc(_title(change))}</a></li>'
             for n, change in enumerate(changes(comparison))]
    if links:
        body.append('<h2 id="pairs">Changed tasks side by side</h2><ul class="index">' + "".join(links) + "</ul>")
    return page(title, "".join(body), script=True)


def pair_pages(comparison: Comparison) -> Iterator[tuple[str, str]]:
    """(path relative to `compare.html`, page) of every changed task."""
    for n, change in enumerate(changes(comparison)):
        title = _title(change)
        calls = _calls(change.a.calls, change.b.calls, change.first_difference)
        steps = _steps(change.a.steps, change.b.steps)
        verdicts = "".join(f"<li>{esc(name)} ({esc(group)}): {esc(x)} → {esc(y)}</li>"
                           for group, name, x, y in change.changed)
        body = (f'<p><a href="../compare.html#pairs">← the comparison</a></p><h1>{esc(title)}</h1>'
                f"<p>{_outcome(change.a, 'A')} · {_outcome(change.b, 'B')}</p>"
                + (f"<h3>Verdicts that changed</h3><ul>{verdicts}</ul>" if verdicts else "")
                + f"<h3>LLM calls</h3>{calls}<h3>Steps</h3>{steps}")
        yield change_path(n), page(title, body)


def _title(change: Change) -> str:
    split, task, sample = change.key
    kind = "regressed" if change.regressed else "improved"
    return (f"{kind}: task {task} ({split}, sample {sample}), {change.pairing.a.label} → {change.pairing.b.label}, "
            f"first differing call: {'none' if change.first_difference is None else f'#{change.first_difference}'}")


def _outcome(view: RolloutView, side: str) -> str:
    return f"<b>{side}</b>: {esc(view.stored.status)}, {view.stored.calls} calls, ${view.stored.cost_usd:.4f}"


def _calls(a: Sequence[CallRecord], b: Sequence[CallRecord], first: int | None) -> str:
    rows = []
    for n, (x, y) in enumerate(zip_longest(a, b)):
        style = f' style="{DIFFERS}" class="first-difference"' if n == first else ""
        rows.append(f"<tr{style}><td>#{n}</td>{_call(x)}{_call(y)}</tr>")
    return ('<div class="scroll"><table class="steps"><thead><tr><th>call</th><th>A: request key</th>'
            "<th>A: tokens in / out</th><th>B: request key</th><th>B: tokens in / out</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")


def _call(call: CallRecord | None) -> str:
    if call is None:
        return "<td>–</td><td></td>"
    return (f"<td>{esc((call.cache_key or 'not sent')[:16])}</td>"
            f"<td>{call.usage.input_tokens:,} / {call.usage.output_tokens:,}</td>")


def _steps(a: Sequence[Any], b: Sequence[Any]) -> str:
    rows = "".join(f"<tr><td>{n}</td><td>{_step(x)}</td><td>{_step(y)}</td></tr>"
                   for n, (x, y) in enumerate(zip_longest(a, b)))
    return ('<div class="scroll"><table class="steps"><thead><tr><th>step</th><th>A</th><th>B</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>")


def _step(step: Any) -> str:
    if step is None:
        return "–"
    text = "\n".join(f"{key}: {value}" for key, value in step.items()) if isinstance(step, dict) else str(step)
    return esc(text if len(text) <= STEP_LIMIT else text[:STEP_LIMIT] + "…")
