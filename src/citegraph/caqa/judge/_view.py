"""How ``caqa judge`` runs are shown: each judged sample, the metrics table with its clickable
confusion matrix, and the paper's figures (confusion heatmap, per-complexity F1, Table 6).

A record's cell in the confusion matrix is its ``cell:<gold>|<predicted>`` tag (``unparseable``
when no label could be read); the matrix cells link to those tags, so clicking a cell lists its
samples. Labels are compared as the report compares them: when either label is binary
(``unsupported``, as on AttributionBench or with a binary evaluator) both are collapsed with
:func:`~citegraph.caqa.to_binary`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.caqa._types import to_binary
from citegraph.caqa._view import (
    FACT_KEYS,
    fact_export_rows,
    fact_rows_of,
    facts_table,
)
from citegraph.caqa.judge._report import EvaluatorReport
from citegraph.caqa.judge._rules import CaqaRules
from citegraph.caqa.judge._view_figures import (
    Verdict,
    confusion_block,
    judge_charts,
    metric_rows,
)
from citegraph.io import json_text
from citegraph.metrics import UNPARSEABLE
from citegraph.runs import (
    FAILED,
    Block,
    Chart,
    FieldsBlock,
    Presenter,
    RawBlock,
    Record,
    RunData,
    RunPresentation,
    SampleSummary,
    Segment,
    TextBlock,
    field_text,
)


def judged_labels(record: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(gold, predicted)`` as the report scores them: both collapsed to supportive /
    unsupported when either is ``unsupported``."""
    gold, predicted = str(record.get("gold")), record.get("predicted")
    if "unsupported" in (gold, predicted):
        gold = to_binary(gold)
        predicted = to_binary(predicted) if predicted is not None else None
    return gold, None if predicted is None else str(predicted)


def _cell_tag(gold: str, predicted: str | None) -> str:
    return f"cell:{gold}|{predicted or UNPARSEABLE}"


def unparseable_is_wrong(info: Mapping[str, Any]) -> bool:
    """Whether the run's mode (``config.extraction``) counts a reply no label was read from as
    wrong (paper mode) rather than leaving it out (reference mode, as the authors' scripts)."""
    config = info.get("config")
    mode = (config if isinstance(config, Mapping) else {}).get("extraction")
    return (
        CaqaRules.for_mode("reference" if mode == "reference" else "paper").unparseable == "wrong"
    )


class CaqaJudgePresenter(Presenter):
    """A ``caqa judge`` run: each sample with the evaluator's verdict, Tables 5-7's numbers,
    the confusion matrix and Figure-style charts over several runs.

    The class itself shows a reply no label was read from as unmeasured; :meth:`for_run` gives
    the variant of a run whose mode counts it wrong (paper mode: verdict wrong, ``correct`` 0,
    as the metrics count it).
    """

    #: Whether an unparseable reply is shown as wrong (set on the paper-mode variant).
    unparseable_wrong: bool = False

    @classmethod
    def for_run(cls, info: Mapping[str, Any]) -> type[Presenter]:
        """The variant for the run's mode (see the class docstring)."""
        return _PaperJudgePresenter if unparseable_is_wrong(info) else CaqaJudgePresenter

    @classmethod
    def summary(cls, record: Record) -> SampleSummary:
        """Title the question (the id for records without one); score ``correct`` 1 / 0
        (when no label was read: ``None``, or 0 with tag ``unparseable`` in the paper-mode
        variant); tags ``failed``, ``unmeasured``, ``gold:``,
        ``pred:`` (``pred:none``), ``cell:<gold>|<pred>``, ``verdict:correct|wrong``,
        ``complexity:``."""
        status = str(record.get("status") or "ok")
        gold, predicted = judged_labels(record)
        tags = [f"gold:{gold}"]
        scores: dict[str, float | None] = {}
        if status == FAILED:
            tags.insert(0, "failed")
        else:
            tags += [f"pred:{predicted or 'none'}", _cell_tag(gold, predicted)]
            if predicted is None and cls.unparseable_wrong:
                tags += [UNPARSEABLE, "verdict:wrong"]
                scores["correct"] = 0.0
            elif predicted is None:
                tags.append("unmeasured")
                scores["correct"] = None
            else:
                right = predicted == gold
                tags.append("verdict:correct" if right else "verdict:wrong")
                scores["correct"] = 1.0 if right else 0.0
        if record.get("complexity"):
            tags.append(f"complexity:{record['complexity']}")
        title = record.get("question") or record.get("id")
        return SampleSummary(
            id=str(record.get("id")), title=str(title), status=status, scores=scores, tags=tags
        )

    @classmethod
    def sample(cls, record: Record, info: Mapping[str, Any]) -> list[Block]:
        """The sample and the evaluator's label, the answer and citation marked by the
        verdict, the citation subgraph, the evaluator's setup, its raw reply, the record."""
        config = info.get("config", {})
        gold, predicted = judged_labels(record)
        failed = record.get("status") == FAILED
        label = "— (call failed)" if failed else predicted or f"— ({UNPARSEABLE})"
        fields = [
            ("question", field_text(record.get("question"))),
            ("answer statement", field_text(record.get("answer"))),
            ("citation", field_text(record.get("citation"))),
            ("gold category", field_text(record.get("gold"))),
            ("complexity", field_text(record.get("complexity"))),
            ("source", field_text(record.get("source"))),
            ("evaluator's label", label),
        ]
        if record.get("human") is not None:
            fields.append(("human label", field_text(record.get("human"))))
        blocks: list[Block] = [FieldsBlock(title="Sample", fields=fields)]
        if record.get("citation") is not None:
            mark: Verdict = "correct" if predicted == gold else "wrong"
            if predicted is None or failed:
                mark = "unknown"
            tip = f"gold: {gold} · evaluator: {predicted or UNPARSEABLE}"
            blocks.append(
                TextBlock(
                    title="Answer and citation",
                    paragraphs=[
                        [Segment(text=field_text(record.get("answer")))],
                        [Segment(text=str(record["citation"]), mark=mark, tip=tip)],
                    ],
                )
            )
        rows = fact_rows_of(record)
        if rows is not None:
            blocks.append(
                facts_table(
                    "Citation subgraph",
                    rows,
                    note="the facts the citation was written from "
                    f"(gold: {field_text(record.get('gold'))})",
                )
            )
        blocks += [
            FieldsBlock(
                title="Evaluator",
                fields=[
                    (
                        "evaluator",
                        field_text(config.get("evaluator_name") or config.get("evaluator")),
                    ),
                    ("prompt", field_text(config.get("prompt"))),
                    ("extraction", field_text(config.get("extraction"))),
                    ("judge replies", _replies_text(config)),
                    ("predicted", field_text(record.get("predicted"))),
                    ("error", field_text(record.get("error"))),
                ],
            ),
            RawBlock(title="Evaluator's raw reply", text=str(record.get("raw") or ""), open=True),
            RawBlock(title="JSON record", text=json_text(record, indent=2)),
        ]
        return blocks

    @classmethod
    def metrics(cls, metrics: Mapping[str, Any], info: Mapping[str, Any]) -> RunPresentation:
        """micro- and macro-F1, F1 per category and per complexity, agreement with human
        labels; the confusion matrix, its cells linking to their samples."""
        report = EvaluatorReport.from_metrics(dict(metrics))
        config = info.get("config", {})
        return RunPresentation(
            metrics=metric_rows(report, metrics),
            blocks=[confusion_block(report, binary_scoring=config.get("labels") == "binary")],
            notes=[report.description]
            + ([str(metrics.get("failed_note"))] if metrics.get("n_failed") else []),
        )

    @classmethod
    def charts(cls, runs: Sequence[RunData]) -> list[Chart]:
        """A confusion-matrix heatmap per configuration (runs of one config, such as shards,
        summed) and micro-F1 per complexity level (Table 6), a series per configuration;
        both recomputed from the records."""
        return judge_charts(runs)

    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        """``facts``: one row per fact of the citation subgraph."""
        return {"facts": fact_export_rows(str(record.get("id")), fact_rows_of(record) or [])}

    @classmethod
    def export_columns(cls, record: Record, info: Mapping[str, Any]) -> dict[str, Any]:
        """The labels as scored (``gold_label``, ``predicted_label``: both collapsed to binary
        when either is ``unsupported``), whether the sample enters the scores (``scored``) and
        ``score_correct`` as the run's mode counts it: an unparseable reply is 0 (wrong) in
        paper mode and left out (null, not scored) in reference mode, as the authors' scripts
        drop it; a failed call is never scored. micro-F1 = mean of ``score_correct`` over the
        scored samples."""
        gold, predicted = judged_labels(record)
        wrong = unparseable_is_wrong(info)
        failed = record.get("status") == FAILED
        scored = not failed and (predicted is not None or wrong)
        correct = None if not scored else float(predicted is not None and predicted == gold)
        return {
            "gold_label": gold,
            "predicted_label": predicted,
            "scored": scored,
            "score_correct": correct,
        }

    @classmethod
    def export_schema(cls) -> dict[str, dict[str, str]]:
        """The ``samples`` columns above and the ``facts`` table, every fact column a string."""
        return {
            "samples": {
                "gold_label": "string",
                "predicted_label": "string",
                "scored": "bool",
                "score_correct": "float",
            },
            "facts": dict.fromkeys(("sample_id", *FACT_KEYS), "string"),
        }


class _PaperJudgePresenter(CaqaJudgePresenter):
    """:class:`CaqaJudgePresenter` for a run whose mode counts an unparseable reply wrong."""

    unparseable_wrong = True


def _replies_text(config: Mapping[str, Any]) -> str:
    """``free``, or ``constrained (<grammar>)`` (run.json records the mode only when
    constrained)."""
    if config.get("judge_replies", "free") == "free":
        return "free"
    return f"constrained ({config.get('judge_grammar')})"
