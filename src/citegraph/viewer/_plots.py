"""Charts drawn with matplotlib as SVG text, to inline in a page (no files, no network).

A :class:`~citegraph.runs.Chart` says what to draw (a paper's figure recomputed from runs);
this module only draws it. matplotlib escapes the text it writes into the SVG; every text
from a run (a title, an axis label, a run or model name in a legend or on a tick) goes through
:func:`plain` first, so matplotlib shows it as written and never reads it as mathtext
(``$\\frac{`` in a model name would raise) or drops it as a hidden ``_label``.
"""

from __future__ import annotations

import io
import itertools
import re

from citegraph.errors import MissingDependency
from citegraph.io import encodable
from citegraph.runs import Chart

_XML_HEAD = re.compile(r"^.*?(?=<svg)", re.S)
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf")


def chart_svg(chart: Chart) -> str:
    """The chart as an ``<svg>`` element (no XML prologue), ready to inline in HTML.

    Raises:
        MissingDependency: matplotlib is not installed (the ``viewer`` extra).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependency("matplotlib", "viewer", cause=exc) from exc
    matplotlib.rcParams["svg.hashsalt"] = "citegraph"  # stable ids: identical charts, same bytes
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text (searchable, small)
    fig, ax = plt.subplots(figsize=(6.4, 3.8), dpi=100)
    try:
        _draw(ax, fig, chart)
        ax.set_title(plain(wrapped_title(chart.title)), fontsize=11)
        ax.set_xlabel(plain(chart.x_label))
        ax.set_ylabel(plain(chart.y_label))
        fig.tight_layout()
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    return _XML_HEAD.sub("", out.getvalue(), count=1)


#: Characters per title line: a 6.4-inch figure holds about 60 at 11 pt beside a heatmap's
#: colour bar; longer titles (an evaluator's full name) wrap instead of running off the figure.
TITLE_WIDTH = 56


def plain(text: object) -> str:
    """``text`` as matplotlib should show it, literally: every ``$`` escaped (no mathtext), a
    lone surrogate as U+FFFD, and a leading ``_`` kept visible (matplotlib leaves a legend
    entry whose label starts with ``_`` out)."""
    shown = encodable(str(text)).replace("$", r"\$")
    return "\u200b" + shown if shown.startswith("_") else shown


def wrapped_title(title: str, width: int = TITLE_WIDTH) -> str:
    """``title`` broken into lines of at most ``width`` characters: at spaces, or after a ``:``
    or ``/`` inside a long model name (``llm:vllm/meta-llama/Llama-3.1-70B-Instruct:...``);
    a piece longer than a line is cut."""
    pieces = re.findall(r"[^\s:/]*[:/]?\s*", title)
    lines = [""]
    for piece in filter(None, pieces):
        if lines[-1] and len(lines[-1] + piece.rstrip()) > width:
            lines.append("")
        lines[-1] += piece
        while len(lines[-1].rstrip()) > width:
            lines[-1:] = [lines[-1][:width], lines[-1][width:]]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def _draw(ax, fig, chart: Chart) -> None:  # type: ignore[no-untyped-def]
    if chart.kind == "heatmap":
        _heatmap(ax, fig, chart)
        return
    many = len(chart.series) > 1
    if chart.kind == "bar":
        _bars(ax, chart)
    for i, series in enumerate(chart.series):
        colour = _COLOURS[i % len(_COLOURS)]
        if chart.kind == "line":
            xs = [x for x, y in zip(series.x, series.y, strict=True) if y is not None]
            ys = [y for y in series.y if y is not None]
            ax.plot(xs, ys, marker="o", color=colour, label=plain(series.name))
        elif chart.kind == "scatter":
            pairs = [(x, y) for x, y in zip(series.x, series.y, strict=True) if y is not None]
            ax.scatter(
                [p[0] for p in pairs],
                [p[1] for p in pairs],
                s=14,
                alpha=0.7,
                color=colour,
                label=plain(series.name),
            )
        elif chart.kind == "hist":  # pre-binned: x bin centres, y counts
            centres = [float(x) for x in series.x]
            step = min((b - a for a, b in itertools.pairwise(centres)), default=1.0)
            width = step / len(chart.series)
            shift = (i - (len(chart.series) - 1) / 2) * width
            ax.bar(
                [c + shift for c in centres],
                [y or 0.0 for y in series.y],
                width=width,
                alpha=0.8,
                color=colour,
                label=plain(series.name),
            )
    if chart.kind == "line" and all(
        isinstance(x, int | float) and float(x).is_integer() for s in chart.series for x in s.x
    ):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # a count: 0, 1, 2, not 0.25
    if many or (chart.kind == "bar" and chart.series):
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def _bars(ax, chart: Chart) -> None:  # type: ignore[no-untyped-def]
    groups = list(dict.fromkeys(str(x) for s in chart.series for x in s.x))
    width = 0.8 / max(1, len(chart.series))
    top, low = 0.0, 0.0
    for i, series in enumerate(chart.series):
        at = {
            str(x): (y, (series.err or [None] * len(series.y))[j])
            for j, (x, y) in enumerate(zip(series.x, series.y, strict=True))
        }
        # a group the series has no value for (a level without samples) gets no bar, not a
        # bar of height 0; a value of 0 gets a bar labelled 0, so it is seen
        shown = [
            (g + (i - (len(chart.series) - 1) / 2) * width, y, err or 0.0)
            for g, (y, err) in enumerate(at.get(name, (None, None)) for name in groups)
            if y is not None
        ]
        bars = ax.bar(
            [x for x, _, _ in shown],
            [float(y) for _, y, _ in shown],
            width=width,
            yerr=[e for _, _, e in shown] if any(e for _, _, e in shown) else None,
            capsize=3,
            color=_COLOURS[i % len(_COLOURS)],
            label=plain(series.name),
        )
        ax.bar_label(bars, fmt="%.2g", fontsize=7, padding=1)
        top = max([top, *(float(y) + e for _, y, e in shown)])
        low = min([low, *(float(y) - e for _, y, e in shown)])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(
        [plain(g) for g in groups], rotation=20 if len(groups) > 4 else 0, fontsize=8
    )
    ax.set_xlim(-0.5, len(groups) - 0.5)  # every group keeps its place, with a bar or not
    for g, name in enumerate(groups):
        if not any(
            x == name and y is not None for s in chart.series for x, y in zip(s.x, s.y, strict=True)
        ):
            ax.text(g, 0, "n/a", ha="center", va="bottom", fontsize=7, color="#57606a")
    # bars start at 0: no negative axis under non-negative values (matplotlib centres an
    # all-zero chart on 0, from -0.05 to 0.05); headroom above for the labels and the legend
    top = top if top > 0 else 1.0
    ax.set_ylim(min(low, 0.0) * 1.1, top * 1.3)


def _heatmap(ax, fig, chart: Chart) -> None:  # type: ignore[no-untyped-def]
    matrix = chart.matrix or [[0.0]]
    image = ax.imshow(matrix, cmap="Blues")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ax.set_xticks(range(len(matrix[0])))
    ax.set_yticks(range(len(matrix)))
    if chart.x_ticks:
        ax.set_xticklabels([plain(t) for t in chart.x_ticks], rotation=30, ha="right", fontsize=8)
    if chart.y_ticks:
        ax.set_yticklabels([plain(t) for t in chart.y_ticks], fontsize=8)
    top = max((v for row in matrix for v in row), default=0.0)
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            ax.text(
                c,
                r,
                f"{value:g}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if top and value > top / 2 else "black",
            )
