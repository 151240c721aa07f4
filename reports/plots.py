"""PNG plots with matplotlib (Agg, no display): error distribution, pass rate per constraint and level, cost.

Each function returns a `Plot` holding the PNG bytes, or None when there is nothing to draw; the Markdown report
links the files, the HTML page embeds the same bytes as data URIs.

matplotlib is imported on the first drawing, not with this module: it costs about half a second, which every
`import reports` (and so `tripbench report --help`) paid. Figures are made on an Agg canvas directly rather than
through pyplot, so no global backend is chosen (a notebook's own backend is left alone) and nothing needs closing.
"""

from __future__ import annotations

import functools
import io
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from benchmarks.reporting import Chart, GroupedRates, Heatmap, Radar

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_P = ParamSpec("_P")
_R = TypeVar("_R")
DPI = 100
LABEL_CHARS = 40
"""Axis labels are shortened to this many characters (model strings can be long; see `_short`)."""


@dataclass(frozen=True, slots=True)
class Plot:
    name: str
    """File stem of the PNG."""
    title: str
    png: bytes


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    """A figure with one axes on its own Agg canvas (PNG bytes, no display, no GUI toolkit)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    return figure, figure.subplots()


def _render(name: str, title: str, figure: Figure, *, whole: bool = False) -> Plot:
    """The figure as PNG bytes; `whole`: the canvas grows to hold every label, title and legend (a polar plot's
    spoke labels and an outside legend, which `tight_layout` leaves clipped)."""
    buffer = io.BytesIO()
    figure.tight_layout()
    # metadata without the software version or a date: the same report renders to the same bytes
    if whole:
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, bbox_inches="tight",
                       pad_inches=0.25)
    else:
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return Plot(name, title, buffer.getvalue())


def _shorts(labels: Sequence[str]) -> list[str]:
    """Labels shortened for an axis (`_short`), each still told apart: one whose short form another label shares
    keeps its whole `_endpoint` form instead."""
    short = [_short(label) for label in labels]
    taken = Counter(short)
    return [_endpoint(label) if taken[brief] > 1 else brief for label, brief in zip(labels, short)]


def _plain_text(draw: Callable[_P, _R]) -> Callable[_P, _R]:
    """Draws with every text as plain text: a label holding `$` (a model name, a strategy) is not mathtext, which
    would fail on `$\\foo^{$` and kill the report."""
    @functools.wraps(draw)
    def plain(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)
    return plain


def _short(label: str) -> str:
    """A long label in at most `LABEL_CHARS` characters: its `_endpoint` form, then without its middle, so both the
    start (the model) and the end (the server, the strategy) stay."""
    label = _endpoint(label) if len(label) > LABEL_CHARS else label
    if len(label) <= LABEL_CHARS:
        return label
    head = (LABEL_CHARS - 1) // 2
    return label[:head] + "…" + label[-(LABEL_CHARS - 1 - head):]


def _endpoint(label: str) -> str:
    """A `PROVIDER:NAME@URL` model string (and what follows it) as `NAME@HOST:PORT`: the provider and the URL's
    scheme and path go."""
    found = re.fullmatch(r"[\w-]+:(?P<name>[^@\s]+)@\w+://(?P<host>[^/\s]+)(/\S*)?(?P<rest>.*)", label)
    return label if found is None else f"{found['name']}@{found['host']}{found['rest']}"


@_plain_text
def stacked_shares(name: str, title: str, rows: Sequence[tuple[str, dict[str, int]]],
                   axis: str = "% of rollouts") -> Plot | None:
    """Horizontal bars, one per row label, split into the shares of its categories (e.g. how rollouts ended)."""
    rows = [(label, counts) for label, counts in rows if sum(counts.values())]
    if not rows:
        return None
    # Most frequent first; ties by name, so equal counts keep one order (and colour) from run to run.
    categories = sorted({c for _, counts in rows for c in counts},
                        key=lambda c: (-sum(r[1].get(c, 0) for r in rows), c))
    from matplotlib import colormaps

    figure, axes = _figure(9, 1.2 + 0.45 * len(rows))
    left = [0.0] * len(rows)
    tab20 = colormaps["tab20"]  # qualitative: an integer picks one of its 20 colours
    for i, category in enumerate(categories):
        shares = [100 * counts.get(category, 0) / sum(counts.values()) for _, counts in rows]
        axes.barh(range(len(rows)), shares, left=left, label=category, color=tab20(i % tab20.N))
        left = [a + b for a, b in zip(left, shares)]
    axes.set_yticks(range(len(rows)), _shorts([label for label, _ in rows]))
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel(axis)
    axes.set_title(title)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return _render(name, title, figure)


@_plain_text
def grouped_rates(name: str, title: str, labels: Sequence[str],
                  series: Sequence[tuple[str, Sequence[float | None]]]) -> Plot | None:
    """Grouped vertical bars: one group per label (e.g. a constraint), one bar per series (e.g. a level), in %."""
    if not labels or not series:
        return None
    figure, axes = _figure(max(6.0, 0.6 * len(labels) * max(1, len(series)) / 2 + 2), 4.2)
    width = 0.8 / len(series)
    names = _shorts([series_name for series_name, _ in series])
    for i, (series_name, values) in enumerate(series):
        xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
        axes.bar(xs, [100 * v if v is not None else 0.0 for v in values], width, label=names[i])
    axes.set_xticks(range(len(labels)), _shorts(labels), rotation=35, ha="right",
                    fontsize="small")
    axes.set_ylim(0, 100)
    axes.set_ylabel("pass rate %")
    axes.set_title(title)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)  # off the bars
    return _render(name, title, figure, whole=True)


@_plain_text
def money(name: str, title: str, rows: Sequence[tuple[str, float, float]]) -> Plot | None:
    """Horizontal bars per row label: dollars spent, and dollars the cache saved beside them."""
    if not rows or not any(spent or saved for _, spent, saved in rows):
        return None
    figure, axes = _figure(8, 1.2 + 0.5 * len(rows))
    ys = range(len(rows))
    axes.barh([y - 0.2 for y in ys], [spent for _, spent, _ in rows], 0.4, label="spent")
    axes.barh([y + 0.2 for y in ys], [saved for _, _, saved in rows], 0.4, label="saved by the cache")
    axes.set_yticks(list(ys), _shorts([label for label, _, _ in rows]))
    axes.invert_yaxis()
    axes.set_xlabel("USD")
    axes.set_title(title)
    axes.legend(fontsize="small", frameon=False)
    return _render(name, title, figure)


def radar(name: str, title: str, labels: Sequence[str],
          series: Sequence[tuple[str, Sequence[float | None]]]) -> Plot | None:
    """One spoke per label (values 0..1, None drawn at 0), one closed outline per series."""
    if len(labels) < 3 or not series:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 5.2))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(projection="polar")
    angles = [2 * math.pi * i / len(labels) for i in range(len(labels))]
    for series_name, values in series:
        points = [v if v is not None else 0.0 for v in values]
        axes.plot([*angles, angles[0]], [*points, points[0]], label=_short(series_name))
        axes.fill([*angles, angles[0]], [*points, points[0]], alpha=0.12)
    axes.set_xticks(angles, [_short(label) for label in labels])
    axes.tick_params(axis="x", pad=10)  # spoke labels clear of the outer ring
    axes.set_ylim(0, 1)
    axes.set_title(title, pad=22)
    axes.legend(loc="upper left", bbox_to_anchor=(1.12, 1.0), fontsize="small", frameon=False)
    return _render(name, title, figure, whole=True)


@_plain_text
def heatmap(name: str, title: str, labels: Sequence[str], values: Sequence[Sequence[float | None]]) -> Plot | None:
    """A labelled square matrix of values in -1..1 (a diverging colour scale), each cell with its value."""
    if len(labels) < 2:
        return None
    size = 1.6 + 0.5 * len(labels)
    figure, axes = _figure(size + 1.2, size)
    matrix = [[math.nan if value is None else value for value in row] for row in values]
    image = axes.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
    axes.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize="small")
    axes.set_yticks(range(len(labels)), labels, fontsize="small")
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            if value is not None:
                axes.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                          color="white" if abs(value) > 0.6 else "black")
    figure.colorbar(image, ax=axes, shrink=0.8)
    axes.set_title(title)
    return _render(name, title, figure, whole=True)


def draw(chart: Chart) -> Plot | None:
    """A benchmark's chart (`benchmarks.reporting`) as a PNG; None when there is nothing to draw."""
    if isinstance(chart, GroupedRates):
        return grouped_rates(chart.name, chart.title, chart.labels, chart.series)
    if isinstance(chart, Radar):
        return radar(chart.name, chart.title, chart.labels, chart.series)
    if isinstance(chart, Heatmap):
        return heatmap(chart.name, chart.title, chart.labels, chart.values)
    return stacked_shares(chart.name, chart.title, [(label, dict(counts)) for label, counts in chart.rows],
                          chart.axis)
