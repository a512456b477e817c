"""Charts drawn as inline SVG: every kind draws, text is escaped, the same chart gives the same
bytes (so a report can be diffed)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from citegraph.runs import Chart, Series
from citegraph.viewer import chart_svg

pytest.importorskip("matplotlib", reason="the viewer extra is not installed")


@pytest.mark.parametrize(
    "chart",
    [
        Chart(
            kind="line",
            title="Figure 4",
            x_label="removed",
            y_label="%",
            series=[Series(name="[NA] recall", x=[0, 1, 2], y=[10.0, None, 30.0])],
        ),
        Chart(
            kind="bar",
            title="Table 3",
            series=[
                Series(name="P", x=["gpt-4", "chatgpt"], y=[36.0, 37.0], err=[0.6, None]),
                Series(name="R", x=["gpt-4", "chatgpt"], y=[43.6, 42.0]),
            ],
        ),
        Chart(
            kind="heatmap",
            title="confusion",
            matrix=[[3.0, 1.0], [0.0, 4.0]],
            x_ticks=["supportive", "insufficient"],
            y_ticks=["supportive", "insufficient"],
        ),
        Chart(
            kind="hist",
            title="relevance",
            series=[
                Series(name="run a", x=[0.25, 0.75], y=[3.0, 1.0]),
                Series(name="run b", x=[0.25, 0.75], y=[0.0, 2.0]),
            ],
        ),
        Chart(
            kind="scatter",
            title="vs human",
            series=[Series(name="run a", x=[0, 1, 2], y=[0.2, 0.4, 0.9])],
        ),
    ],
    ids=lambda c: c.kind,
)
def test_every_kind_draws_valid_svg(chart: Chart) -> None:
    svg = chart_svg(chart)
    assert svg.startswith("<svg")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert chart.title in svg


def test_text_is_escaped_and_output_is_stable() -> None:
    chart = Chart(kind="line", title="<script>alert(1)</script> & co",
                  series=[Series(name="a<b", x=[1, 2], y=[1.0, 2.0])])  # fmt: skip
    svg = chart_svg(chart)
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in svg
    assert chart_svg(chart) == svg
    assert not re.search(r"<\?xml|<!DOCTYPE", svg)


#: Issue 27: run and model names that matplotlib read as mathtext (``$\\frac{$`` raised, and
#: crashed ``report`` and /compare), hid (``_x`` in a legend) or could not encode (a surrogate).
HOSTILE_LABELS = [
    "$\\frac{",
    "$\\frac{$",
    "$x$",
    "a$b",
    "_hidden",
    "\ud800$",
    "<script>alert(1)</script>",
]


def _texts(svg: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<text\b.*?</text>", svg, re.S)]


@pytest.mark.parametrize("kind", ["bar", "line", "scatter", "hist", "heatmap"])
def test_chart_labels_are_drawn_as_written_never_as_mathtext(kind: str) -> None:
    series = [
        Series(name=name, x=[name, "b"] if kind == "bar" else [1, 2], y=[1.0, 2.0])
        for name in HOSTILE_LABELS
    ]
    chart = Chart(
        kind=kind,
        title="$\\frac{ title",
        x_label="$x$",
        y_label="$",
        series=series,
        matrix=[[1.0, 2.0], [3.0, 4.0]] if kind == "heatmap" else None,
        x_ticks=["$\\frac{", "$x$"] if kind == "heatmap" else None,
        y_ticks=["\ud800", "_t"] if kind == "heatmap" else None,
    )
    svg = chart_svg(chart)
    svg.encode("utf-8")  # no lone surrogate left
    texts = _texts(svg)
    assert "$\\frac{ title" in texts and "$x$" in texts
    assert "<script>" not in svg
    if kind != "heatmap":
        assert "\u200b_hidden" in texts  # a legend entry matplotlib would have dropped
        assert "\ufffd$" in texts
