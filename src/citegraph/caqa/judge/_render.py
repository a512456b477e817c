"""Text and Markdown renderings of an :class:`EvaluatorReport`: a Table 5 style row per label,
a Table 6 style complexity row, and the confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from citegraph.caqa.judge._report import EvaluatorReport
from citegraph.errors import ConfigError
from citegraph.io import markdown_table
from citegraph.metrics import ConfidenceInterval

_ABBREVIATIONS = {
    "supportive": "Sup.",
    "insufficient": "Ins.",
    "contradictory": "Con.",
    "irrelevant": "Irr.",
    "unsupported": "Uns.",
    "single": "S.",
    "concatenation": "C.",
    "intersection": "I.",
    "union": "U.",
}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(ci: ConfidenceInterval | None) -> str:
    return "-" if ci is None else f"[{ci.low:.3f}, {ci.high:.3f}]"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> list[str]:
    if fmt == "markdown":
        return markdown_table(headers, rows).split("\n")
    widths = [max(len(r[k]) for r in [headers, *rows]) for k in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(headers)] + [line(row) for row in rows]


def render_report(report: EvaluatorReport, *, fmt: Literal["text", "markdown"] = "text") -> str:
    """The report as plain text or Markdown: a Table 5 row (per-label F1 and Overall), per-label
    details, a Table 6 row (per complexity), the confusion matrix and the counts.

    Raises:
        ConfigError: On an unknown format.
    """
    if fmt not in ("text", "markdown"):
        raise ConfigError(f"fmt must be 'text' or 'markdown', got {fmt!r}")
    title = f"CAQA evaluator report: {report.name or 'evaluator'}"
    out = [f"### {title}" if fmt == "markdown" else title, ""]
    out += [f"Label set {report.label_set}, {report.mode} mode. {report.description}", ""]
    abbr = [_ABBREVIATIONS.get(label, label) for label in report.labels]
    f1s = [_num(s.f1) for s in report.per_label]
    out += _table(["", *abbr, "Overall"], [["F1", *f1s, _num(report.micro_f1)]], fmt)
    out.append("")
    with_ci = report.bootstrap is not None
    headers = ["label", "precision", "recall", "F1", *(["F1 CI"] if with_ci else [])]
    rows = [
        [
            s.label,
            _num(s.precision),
            _num(s.recall),
            _num(s.f1),
            *([_ci(s.f1_ci)] if with_ci else []),
            str(s.support),
            str(s.predicted),
        ]
        for s in report.per_label
    ]
    out += _table([*headers, "support", "predicted"], rows, fmt)
    out.append("")
    micro_ci = f" {_ci(report.micro_f1_ci)}" if with_ci else ""
    out.append(
        f"micro-F1 (Overall): {_num(report.micro_f1)}{micro_ci} "
        f"({report.n_correct} correct / {report.n_scored} scored)"
    )
    macro_ci = f" {_ci(report.macro_f1_ci)}" if with_ci else ""
    over = f" over {', '.join(report.macro_over)}" if report.macro_over else ""
    out.append(f"macro-F1: {_num(report.macro_f1)}{macro_ci}{over}")
    if report.reason:
        out.append(f"note: {report.reason}")
    if report.per_complexity:
        out.append("")
        levels = [_ABBREVIATIONS[c.complexity] for c in report.per_complexity]
        out += _table(
            ["complexity", *levels],
            [
                ["micro-F1", *(_num(c.micro_f1) for c in report.per_complexity)],
                ["samples", *(str(c.n) for c in report.per_complexity)],
            ],
            fmt,
        )
        if report.n_without_complexity:
            out.append(f"{report.n_without_complexity} samples have no complexity level.")
    out += ["", "Confusion matrix (rows: gold, columns: predicted):", ""]
    matrix = report.confusion
    out += _table(
        ["gold \\ predicted", *matrix.columns],
        [[label, *map(str, row)] for label, row in zip(matrix.labels, matrix.counts, strict=True)],
        fmt,
    )
    out.append("")
    if report.human is not None:
        h = report.human
        kappa = _num(h.kappa.value) + (f" ({h.kappa.reason})" if h.kappa.reason else "")
        out.append(
            f"Human labels on {h.n} samples: Cohen's kappa (gold vs human) = {kappa}; "
            f"micro-F1 on human labels = {_num(h.micro_f1_human)}, on gold labels of the same "
            f"samples = {_num(h.micro_f1_gold)}."
        )
    errors = ", ".join(f"{k}: {v}" for k, v in report.n_errors.items()) or "none"
    out.append(
        f"Samples: {report.n}; unparseable: {report.n_unparseable}; dropped: "
        f"{report.n_dropped}; errors: {errors}."
    )
    return "\n".join(out) + "\n"
