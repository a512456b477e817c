"""The numbers and figures of ``caqa judge`` runs, for :class:`CaqaJudgePresenter`: the metric
rows of a ``metrics.json`` (Tables 5-7), the confusion matrix whose cells link to their samples,
and the charts recomputed from several runs' records (confusion heatmap, Table 6 micro-F1 per
complexity level) with :func:`~citegraph.caqa.judge._report.records_report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from citegraph.caqa.judge._report import TABLE6_ORDER, EvaluatorReport, records_report
from citegraph.caqa.judge._rules import CaqaRules
from citegraph.io import canonical_json
from citegraph.metrics import UNPARSEABLE
from citegraph.runs import (
    Chart,
    MetricRow,
    Record,
    RunData,
    Segment,
    Series,
    TableBlock,
    field_text,
)

#: How a verdict or a confusion-matrix cell is marked.
Verdict = Literal["correct", "wrong", "unknown"]

#: Evaluators that only stand in for the paper's (a scripted mock, the lexical NLI matcher).
_STAND_INS = ("llm:mock/", "nli:lexical")


def _is_stand_in(name: str) -> bool:
    return name.startswith(_STAND_INS)


def metric_rows(report: EvaluatorReport, metrics: Mapping[str, Any]) -> list[MetricRow]:
    name = report.name or str(metrics.get("setup", {}).get("evaluator") or "") or None
    common: dict[str, Any] = {"model": name, "stand_in": bool(name) and _is_stand_in(name or "")}
    unmeasured: dict[str, int] = {}
    if metrics.get("n_failed"):
        unmeasured["evaluator call failed"] = int(metrics["n_failed"])
    if report.n_dropped:
        unmeasured["unparseable reply (dropped, reference mode)"] = report.n_dropped
    counted = (
        f"; {report.n_unparseable} unparseable replies counted as wrong"
        if report.n_unparseable and not report.n_dropped
        else ""
    )
    rules = CaqaRules.for_mode(report.mode)
    rows = [
        MetricRow(
            name="micro-F1",
            value=report.micro_f1,
            micro=report.micro_f1,
            macro=report.macro_f1,
            n_measured=report.n_scored,
            unmeasured=unmeasured,
            how=f"{report.mode} mode: correct / scored (= accuracy){counted}",
            **common,
        ),
        MetricRow(
            name="macro-F1",
            value=report.macro_f1,
            n_measured=report.n_scored,
            unmeasured=unmeasured,
            how=f"macro policy {rules.macro}: mean over {', '.join(report.macro_over) or 'none'}"
            + (f"; as 0: {', '.join(report.macro_as_zero)}" if report.macro_as_zero else "")
            + (f"; left out: {', '.join(report.macro_left_out)}" if report.macro_left_out else "")
            + (f"; {report.reason}" if report.reason else ""),
            **common,
        ),
    ]
    for s in report.per_label:
        rows.append(
            MetricRow(
                name=f"F1 {s.label}",
                value=s.f1,
                n_measured=s.support,
                unmeasured=unmeasured,
                how=f"P {field_text(s.precision)}, R {field_text(s.recall)}, "
                f"predicted {s.predicted}, correct {s.correct}"
                + (f"; {s.reason}" if s.reason else ""),
                **common,
            )
        )
    for c in report.per_complexity:
        rows.append(
            MetricRow(
                name=f"micro-F1 {c.complexity}",
                value=c.micro_f1,
                n_measured=c.n_scored,
                how=f"{c.n_correct} correct of {c.n_scored} scored ({c.n} samples; Table 6)"
                if c.n
                else "no sample of this level",
                **common,
            )
        )
    if report.human is not None:
        human = report.human
        rows += [
            MetricRow(
                name="kappa gold vs human",
                value=human.kappa.value,
                n_measured=human.n,
                how="Cohen's kappa between the automatic and the human labels (§6.3)",
            ),
            MetricRow(
                name="micro-F1 on human labels",
                value=human.micro_f1_human,
                n_measured=human.n_scored,
                how=f"on gold labels of the same samples: {field_text(human.micro_f1_gold)}",
                **common,
            ),
        ]
    return rows


def confusion_block(report: EvaluatorReport, *, binary_scoring: bool) -> TableBlock:
    matrix = report.confusion
    dropped = report.mode == "reference"
    rows = []
    for i, gold in enumerate(matrix.labels):
        cells = [Segment(text=gold)]
        for j, predicted in enumerate(matrix.columns):
            mark: Verdict
            if predicted == gold:
                mark = "correct"
            elif predicted == UNPARSEABLE and dropped:
                mark = "unknown"
            else:
                mark = "wrong"
            link = None if binary_scoring else {"tag": f"cell:{gold}|{predicted}"}
            cells.append(Segment(text=str(matrix.counts[i][j]), mark=mark, link=link))
        rows.append(cells)
    note = "rows: gold label; columns: the evaluator's label (unparseable: none read); "
    note += "click a count to list its samples"
    if binary_scoring:
        note = note.rpartition(";")[0] + "; labels collapsed to binary (cells do not link)"
    return TableBlock(
        title="Confusion matrix",
        columns=["gold \\ predicted", *matrix.columns],
        rows=rows,
        note=note,
    )


def _report_of(records: Sequence[Record], info: Mapping[str, Any]) -> EvaluatorReport:
    config = info.get("config", {})
    labels: Literal["auto", "binary"] = "binary" if config.get("labels") == "binary" else "auto"
    return records_report(
        records,
        label_set=config.get("label_set", "four"),
        labels=labels,
        mode=config.get("extraction", "paper"),
        name=str(config.get("evaluator_name") or config.get("evaluator") or ""),
    )


def _groups(runs: Sequence[RunData]) -> list[tuple[str, EvaluatorReport, int]]:
    """``(name, report, runs in the group)`` per configuration, runs of one config summed."""
    by_config: dict[str, list[RunData]] = {}
    for run in runs:
        key = canonical_json(run.info.get("config", {}), allow_nan=True)
        by_config.setdefault(key, []).append(run)
    out = []
    for group in by_config.values():
        records = [r for run in group for r in run.records]
        report = _report_of(records, group[0].info)
        out.append((report.name or group[0].path.name, report, len(group)))
    names = [name for name, _, _ in out]
    return [
        (f"{name} ({group_runs[0].path.name})" if names.count(name) > 1 else name, report, n)
        for (name, report, n), group_runs in zip(out, by_config.values(), strict=True)
    ]


def _heatmap(name: str, report: EvaluatorReport, n_runs: int) -> Chart:
    matrix = report.confusion
    summed = f"; summed over {n_runs} runs of one configuration" if n_runs > 1 else ""
    return Chart(
        kind="heatmap",
        title=f"Confusion matrix: {name}",
        x_label="predicted",
        y_label="gold",
        matrix=[[float(c) for c in row] for row in matrix.counts],
        x_ticks=list(matrix.columns),
        y_ticks=list(matrix.labels),
        note=f"Samples per (gold, predicted) pair, recomputed from the records ({report.mode} "
        "mode); column unparseable: no label read from the reply; failed calls left out"
        + summed
        + ".",
    )


def judge_charts(runs: Sequence[RunData]) -> list[Chart]:
    """A confusion-matrix heatmap per configuration (runs of one config, such as shards,
    summed) and micro-F1 per complexity level (Table 6), a series per configuration; both
    recomputed from the records (:func:`records_report`)."""
    groups = _groups(runs)
    charts = [_heatmap(name, report, n) for name, report, n in groups]
    series = [
        Series(
            name=name,
            x=[s.complexity for s in report.per_complexity],
            y=[s.micro_f1 for s in report.per_complexity],
        )
        for name, report, _ in groups
        if report.per_complexity
    ]
    if series:
        charts.append(
            Chart(
                kind="bar",
                title="micro-F1 per attribution complexity (Table 6)",
                x_label="complexity",
                y_label="micro-F1",
                series=series,
                note="Per complexity level (Table 6 order: "
                + ", ".join(TABLE6_ORDER)
                + "): micro-F1 = correct / samples scored in that level (= accuracy, one "
                "label per sample, as the paper's §5.3); paper mode counts unparseable "
                "replies as wrong, reference mode drops them; failed calls left out; "
                "recomputed from the records; a level without samples has no bar.",
            )
        )
    return charts
