"""``caqa compare``: several evaluators' judge runs side by side (Tables 5 and 6), and the
agreement of their scores on automatic and human labels (§6.3, Figure 2):
:func:`pearson_across_evaluators` correlates the evaluators' micro-F1 on automatic and on human
labels."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa.judge._report import EvaluatorReport
from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.metrics import Agreement, pearson
from citegraph.runs import METRICS_FILE

_SHORT = {"supportive": "Sup.", "insufficient": "Ins.", "contradictory": "Con.",
          "irrelevant": "Irr.", "unsupported": "Uns."}  # fmt: skip
_LEVELS = {"single": "S.", "concatenation": "C.", "intersection": "I.", "union": "U."}


class EvaluatorCorrelation(BaseModel):
    """Pearson r between evaluators' micro-F1 on automatic and on human labels (Figure 2)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pearson: Agreement = Field(description="r, n and two-sided p (paper: r = 0.97).")
    evaluators: tuple[str, ...] = Field(description="Names of the evaluators used, in order.")
    auto: tuple[float, ...] = Field(description="Micro-F1 on automatic (gold) labels.")
    human: tuple[float, ...] = Field(description="Micro-F1 on human labels.")
    n_skipped: int = Field(description="Reports without both scores, left out.")
    auto_scores: Literal["subset", "all"] = Field(
        description="'subset': automatic-label micro-F1 on the human-labelled samples only; "
        "'all': on every sample of the report."
    )


def pearson_across_evaluators(
    reports: Sequence[EvaluatorReport], *, auto: Literal["subset", "all"] = "subset"
) -> EvaluatorCorrelation:
    """Correlate evaluators' micro-F1 on automatic labels with their micro-F1 on human labels.

    Args:
        reports: One report per evaluator, each computed with ``human=`` labels.
        auto: Which automatic-label score to pair with the human-label one: on the same
            human-labelled samples (default, like with like) or on the whole set.

    Returns:
        The correlation; its value is ``None`` (with a reason) when fewer than 3 evaluators have
        both scores.

    Raises:
        ConfigError: On an unknown ``auto``.
    """
    if auto not in ("subset", "all"):
        raise ConfigError(f"auto must be 'subset' or 'all', got {auto!r}")
    names: list[str] = []
    xs: list[float] = []
    ys: list[float] = []
    for k, report in enumerate(reports):
        if report.human is None:
            continue
        x = report.human.micro_f1_gold if auto == "subset" else report.micro_f1
        y = report.human.micro_f1_human
        if x is None or y is None:
            continue
        names.append(report.name or f"evaluator {k + 1}")
        xs.append(x)
        ys.append(y)
    if len(xs) < 3:
        result = Agreement(
            statistic="pearson",
            value=None,
            n=len(xs),
            reason=f"needs at least 3 evaluators with human-label scores, got {len(xs)}",
        )
    else:
        result = pearson(xs, ys)
    return EvaluatorCorrelation(
        pearson=result,
        evaluators=tuple(names),
        auto=tuple(xs),
        human=tuple(ys),
        n_skipped=len(reports) - len(xs),
        auto_scores=auto,
    )


def load_report(run_dir: str | Path) -> EvaluatorReport:
    """The :class:`EvaluatorReport` a ``caqa judge`` run wrote to ``metrics.json``.

    Raises:
        DataNotFoundError: no ``metrics.json`` (the run has not finished).
        DataError: the file is not a judge report.
    """
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        raise DataNotFoundError("no metrics.json: is this a finished caqa judge run?", path=path)
    data = json.loads(path.read_text(encoding="utf-8"))
    try:
        return EvaluatorReport.from_metrics(data)
    except ValueError as exc:
        raise DataError(f"not a caqa judge report: {exc}", path=path) from exc


def compare_runs(
    run_dirs: Sequence[str | Path],
) -> tuple[list[EvaluatorReport], EvaluatorCorrelation]:
    """The reports of ``run_dirs`` and the Pearson correlation of their micro-F1 on automatic
    and on human labels (None, with the reason, unless 3 or more runs have human labels)."""
    reports = [load_report(d) for d in run_dirs]
    return reports, pearson_across_evaluators(reports)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_comparison(reports: Sequence[EvaluatorReport], correlation: EvaluatorCorrelation) -> str:
    """Markdown: a Table 5 row (per-label F1, Overall micro-F1) and a Table 6 row (micro-F1 per
    complexity) per evaluator, then kappa / human-label scores and the Pearson correlation."""
    labels = list(dict.fromkeys(lab for r in reports for lab in r.labels))
    head = ["evaluator", "mode", *(_SHORT.get(lab, lab) for lab in labels), "Overall", "n"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in reports:
        f1 = {s.label: s.f1 for s in r.per_label}
        cells = [r.name or "?", r.mode, *(_num(f1.get(lab)) for lab in labels), _num(r.micro_f1)]
        lines.append("| " + " | ".join([*cells, str(r.n)]) + " |")
    lines += ["", "| evaluator | " + " | ".join(_LEVELS.values()) + " |", "|---" * 5 + "|"]
    for r in reports:
        by_level: dict[str, float | None] = {c.complexity: c.micro_f1 for c in r.per_complexity}
        lines.append(
            f"| {r.name or '?'} | " + " | ".join(_num(by_level.get(c)) for c in _LEVELS) + " |"
        )
    humans = [r for r in reports if r.human is not None]
    if humans:
        lines += ["", "| evaluator | kappa (auto vs human) | micro-F1 human | micro-F1 auto | n |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for r in humans:
            h = r.human
            assert h is not None
            lines.append(
                f"| {r.name or '?'} | {_num(h.kappa.value)} | {_num(h.micro_f1_human)} | "
                f"{_num(h.micro_f1_gold)} | {h.n} |"
            )
    a = correlation.pearson
    value = _num(a.value) + (f" (p = {a.p_value:.3g})" if a.p_value is not None else "")
    lines += ["", f"Pearson r, micro-F1 on automatic vs human labels: {value}, n = {a.n}"]
    if a.reason:
        lines[-1] += f" ({a.reason})"
    return "\n".join(lines) + "\n"
