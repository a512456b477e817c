"""How a ``conner score`` run is shown (viewer, HTML report, ``runs export``).

A score record (see :func:`~citegraph.conner.score.score_batch`) holds the item's ``query``, the
``knowledge`` text scored and each metric's value; factuality's ``details["sentences"]`` gives
each sentence's verdict and the evidence that decided it. :class:`ConnerScorePresenter` turns it
into the knowledge with every sentence marked by its verdict (consistent, inconsistent,
non-verified), a per-sentence table, each metric's value or unmeasured reason with its model,
and flat export tables; ``metrics.json`` into one row per metric (plus factuality's and
validity's three-way label shares) with the stand-in flags of
:func:`~citegraph.conner.score.stand_in_metrics`. The charts are in
:mod:`citegraph.conner.score._view_charts`.
Model text stays plain strings: the renderers escape it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from citegraph.conner._format import number, shorten
from citegraph.conner._types import METRICS
from citegraph.conner.score._config import (
    ConnerScoreConfig,
    metric_role,
    stand_in_metrics,
    stand_in_warning,
)
from citegraph.conner.score._view_charts import score_charts
from citegraph.io import json_text
from citegraph.runs import (
    Block,
    Chart,
    FieldsBlock,
    Mark,
    MetricRow,
    Presenter,
    RawBlock,
    Record,
    RunData,
    RunPresentation,
    SampleSummary,
    Segment,
    TableBlock,
    TextBlock,
)

__all__ = ["LABEL_MARKS", "ConnerScorePresenter", "sentence_rows"]

#: How a sentence's factuality label is highlighted.
LABEL_MARKS: dict[str, Literal["correct", "wrong", "unknown"]] = {
    "consistent": "correct",
    "inconsistent": "wrong",
    "non-verified": "unknown",
}
_LABEL_SHARES = (
    ("factual_consistent", "consistent"),
    ("non_verified", "non-verified"),
    ("factual_inconsistent", "inconsistent"),
)


#: What a sentence's colour says in the knowledge text (its factuality verdict).
_LEGEND: list[tuple[Mark, str]] = [
    ("correct", "consistent with the evidence"),
    ("wrong", "inconsistent"),
    ("unknown", "not verified"),
]


def _metrics(record: Record) -> dict[str, Mapping[str, Any]]:
    metrics = record.get("metrics")
    if not isinstance(metrics, Mapping):
        return {}
    return {str(k): v for k, v in metrics.items() if isinstance(v, Mapping)}


def sentence_rows(record: Record) -> list[Mapping[str, Any]]:
    """Factuality's per-sentence verdicts of a score record (``[]`` when it has none)."""
    details = _metrics(record).get("factuality", {}).get("details")
    rows = details.get("sentences") if isinstance(details, Mapping) else None
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []


def _tip(row: Mapping[str, Any]) -> str:
    label = str(row.get("label"))
    p = number(row.get("entailment"))
    head = label if p is None else f"{label} (P(entailment) {p:.3f})"
    return f"{head}; evidence #{row.get('evidence_index')}: {row.get('evidence')}"


def _knowledge_paragraphs(text: str, rows: Sequence[Mapping[str, Any]]) -> list[list[Segment]]:
    """The knowledge text cut at its sentences (each marked by its label); the text between
    sentences stays unmarked, and a line break starts a new paragraph."""
    paragraphs: list[list[Segment]] = [[]]

    def gap(between: str) -> None:
        parts = between.split("\n")
        for i, part in enumerate(parts):
            if i:
                paragraphs.append([])
            if part:
                paragraphs[-1].append(Segment(text=part))

    position = 0
    for row in rows:
        sentence = str(row.get("text", ""))
        found = text.find(sentence, position) if sentence else -1
        if found < 0:  # not verbatim in the text: show it after what came before
            gap(" ")
        else:
            gap(text[position:found])
            position = found + len(sentence)
        label = str(row.get("label"))
        paragraphs[-1].append(Segment(text=sentence, mark=LABEL_MARKS.get(label), tip=_tip(row)))
    gap(text[position:])
    return [p for p in paragraphs if p] or [[Segment(text=text)]]


def _value_text(value: Mapping[str, Any]) -> str:
    got = number(value.get("value"))
    shown = f"{got:.4f}" if got is not None else f"unmeasured: {value.get('reason')}"
    return f"{shown} ({value.get('model')})"


class ConnerScorePresenter(Presenter):
    """The view of ``conner score`` runs."""

    @classmethod
    def summary(cls, record: Record) -> SampleSummary:
        """Title: the query (shortened) or the id; scores: each metric's value; tags:
        ``failed``, ``unmeasured`` and ``unmeasured:<metric>``, ``verdict:inconsistent`` /
        ``verdict:non-verified`` when factuality found such a sentence."""
        status = str(record.get("status") or "ok")
        metrics = _metrics(record)
        scores = {name: number(v.get("value")) for name, v in metrics.items()}
        tags = ["failed"] if status == "failed" else []
        unmeasured = [name for name, value in scores.items() if value is None]
        if unmeasured:
            tags += ["unmeasured", *(f"unmeasured:{name}" for name in unmeasured)]
        labels = {str(row.get("label")) for row in sentence_rows(record)}
        tags += [
            f"verdict:{label}" for label in ("inconsistent", "non-verified") if label in labels
        ]
        query = record.get("query")
        title = shorten(query) if isinstance(query, str) and query.strip() else record.get("id")
        return SampleSummary(
            id=str(record.get("id")), title=str(title), status=status, scores=scores, tags=tags
        )

    @classmethod
    def sample(cls, record: Record, info: Mapping[str, Any]) -> list[Block]:
        """The query and source; the knowledge with each sentence marked by its factuality
        verdict (tooltip: label and evidence); the per-sentence table; each metric's value or
        unmeasured reason and model; the answer validity judged; the JSON record."""
        fields = [("query", str(record.get("query") or "—")), ("source", str(record.get("source")))]
        for key in ("knowledge_missing", "error", "answer_error"):
            if record.get(key):
                fields.append((key.replace("_", " "), str(record[key])))
        blocks: list[Block] = [FieldsBlock(title="Item", fields=fields)]
        rows = sentence_rows(record)
        knowledge = record.get("knowledge")
        if isinstance(knowledge, str):
            paragraphs = _knowledge_paragraphs(knowledge, rows)
            blocks.append(
                TextBlock(title="Knowledge", paragraphs=paragraphs, legend=_LEGEND if rows else [])
            )
        if rows:
            blocks.append(_sentence_table(rows))
        metrics = [(name, _value_text(v)) for name, v in _metrics(record).items()]
        blocks.append(FieldsBlock(title="Metrics", fields=metrics))
        if isinstance(record.get("answer"), str):
            title = f"Answer (validity; prompt {record.get('answer_prompt')})"
            blocks.append(RawBlock(title=title, text=record["answer"], open=True))
        blocks.append(RawBlock(title="JSON record", text=json_text(record, indent=2)))
        return blocks

    @classmethod
    def metrics(cls, metrics: Mapping[str, Any], info: Mapping[str, Any]) -> RunPresentation:
        """One row per metric of ``metrics.json`` (mean, measured and unmeasured counts with
        reasons, models, stand-in, mode and formula), then factuality's and validity's label
        shares; notes: the stand-in warning, the model notes, failed and missing items."""
        config = _config(info)
        stand_ins = stand_in_metrics(config) if config is not None else frozenset()
        setup = metrics.get("setup")
        setup = setup if isinstance(setup, Mapping) else {}
        models = setup.get("models")
        models = models if isinstance(models, Mapping) else {}
        mode = metrics.get("mode")
        rows: list[MetricRow] = []
        shares: list[MetricRow] = []
        for name, m in (metrics.get("metrics") or {}).items():
            if not isinstance(m, Mapping):
                continue
            role = metric_role(name)
            used = m.get("models") or ([models[role]] if role in models else [])
            model = ", ".join(str(u) for u in used) or None
            rows.append(
                MetricRow(
                    name=name,
                    value=number(m.get("mean")),
                    n_measured=m.get("n") if isinstance(m.get("n"), int) else None,
                    unmeasured=_unmeasured(m),
                    model=model,
                    stand_in=name in stand_ins,
                    how=f"{mode} mode: {m.get('how')}" if m.get("how") else mode,
                )
            )
            shares += _share_rows(name, m, model, name in stand_ins)
        return RunPresentation(metrics=rows + shares, notes=_notes(metrics, config, setup))

    @classmethod
    def charts(cls, runs: Sequence[RunData]) -> list[Chart]:
        """Per-metric value histograms (one series per run) and, where records carry human
        ratings, metric-vs-rating scatter plots (see :mod:`citegraph.conner.score._view_charts`)."""
        return score_charts(runs)

    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        """``metrics``: one row per metric (metric, value, reason, metric_model: what decided it;
        ``model`` is the run's answering model in every table); ``sentences``: one
        row per factuality sentence (index, text, label, entailment, evidence). ``runs export``
        adds the sample's id (``sample_id``)."""
        metrics = [
            {
                "metric": name,
                "value": number(v.get("value")),
                "reason": v.get("reason"),
                "metric_model": v.get("model"),
            }
            for name, v in _metrics(record).items()
        ]
        keys = ("index", "text", "label", "entailment", "evidence_index", "evidence")
        sentences = [{k: row.get(k) for k in keys} for row in sentence_rows(record)]
        return {"metrics": metrics, "sentences": sentences}

    @classmethod
    def export_columns(cls, record: Record, info: Mapping[str, Any]) -> dict[str, Any]:
        """Per metric, why it is unmeasured (``unmeasured_<metric>``; each metric's run value is
        the mean of ``score_<metric>`` over the samples that have one), and for factuality and
        validity the sample's label fractions (``<metric>_consistent``,
        ``<metric>_inconsistent``, ``<metric>_non_verified``) behind the run's label shares."""
        values = _metrics(record)
        out: dict[str, Any] = {}
        for metric in METRICS:
            reason = values.get(metric, {}).get("reason")
            out[f"unmeasured_{metric}"] = None if reason is None else str(reason)
        for labelled in _LABELLED:
            details = values.get(labelled, {}).get("details")
            details = details if isinstance(details, Mapping) else {}
            for column, key in _LABEL_KEYS.items():
                out[f"{labelled}_{column}"] = number(details.get(key))
        return out

    @classmethod
    def export_schema(cls) -> dict[str, dict[str, str]]:
        """The ``samples`` columns (a score and an unmeasured reason per metric, the label
        fractions), ``metrics`` and ``sentences``."""
        samples = {f"score_{name}": "float" for name in METRICS}
        samples |= {f"unmeasured_{name}": "string" for name in METRICS}
        samples |= {f"{n}_{c}": "float" for n in _LABELLED for c in _LABEL_KEYS}
        return {
            "samples": samples,
            "metrics": {
                "metric": "string",
                "value": "float",
                "reason": "string",
                "metric_model": "string",
            },
            "sentences": {
                "index": "int",
                "text": "string",
                "label": "string",
                "entailment": "float",
                "evidence_index": "int",
                "evidence": "string",
            },
        }


#: The metrics whose per-sample details hold factual label fractions, and those fractions.
_LABELLED = ("factuality", "validity")
_LABEL_KEYS = {
    "consistent": "factual_consistent",
    "inconsistent": "factual_inconsistent",
    "non_verified": "non_verified",
}


def _sentence_table(rows: Sequence[Mapping[str, Any]]) -> TableBlock:
    cells = []
    for row in rows:
        p = number(row.get("entailment"))
        cells.append(
            [
                Segment(text=str(row.get("index"))),
                Segment(text=str(row.get("text"))),
                Segment(text=str(row.get("label")), mark=LABEL_MARKS.get(str(row.get("label")))),
                Segment(text="—" if p is None else f"{p:.3f}"),
                Segment(text=f"#{row.get('evidence_index')}: {row.get('evidence')}"),
            ]
        )
    return TableBlock(
        title="Factuality by sentence",
        columns=["#", "sentence", "label", "P(entailment)", "deciding evidence"],
        rows=cells,
        row_marks=[LABEL_MARKS.get(str(row.get("label"))) for row in rows],
        note="Each sentence's label is that of its evidence with the highest P(entailment).",
    )


def _config(info: Mapping[str, Any]) -> ConnerScoreConfig | None:
    raw = info.get("config")
    if not isinstance(raw, Mapping):
        return None
    fields = set(ConnerScoreConfig.model_fields)
    try:
        return ConnerScoreConfig(**{k: v for k, v in raw.items() if k in fields})
    except ValueError:
        return None


def _unmeasured(m: Mapping[str, Any]) -> dict[str, int]:
    reasons = m.get("unmeasured_reasons")
    counts = {str(k): v for k, v in (reasons or {}).items() if isinstance(v, int)}
    total = m.get("n_unmeasured")
    if isinstance(total, int) and total > sum(counts.values()):  # only the top reasons kept
        counts["other reasons"] = total - sum(counts.values())
    return counts


def _share_rows(
    name: str, m: Mapping[str, Any], model: str | None, stand_in: bool
) -> list[MetricRow]:
    labels = m.get("labels")
    if not isinstance(labels, Mapping):
        return []
    n = labels.get("n_labels")
    return [
        MetricRow(
            name=f"{name}: {label}",
            value=number(labels.get(key)),
            percent=True,
            n_measured=n if isinstance(n, int) else None,
            model=model,
            stand_in=stand_in,
            how="share of measured items whose label (argmax of the aggregated NLI vector) is "
            + label,
        )
        for key, label in _LABEL_SHARES
    ]


def _notes(
    metrics: Mapping[str, Any], config: ConnerScoreConfig | None, setup: Mapping[str, Any]
) -> list[str]:
    notes = []
    warning = stand_in_warning(config) if config is not None else None
    if warning:
        notes.append(warning)
    model_notes = setup.get("notes")
    if isinstance(model_notes, Mapping):
        notes += [f"{role}: {text}" for role, text in model_notes.items()]
    if metrics.get("n_failed"):
        notes.append(f"{metrics['n_failed']} items failed: {metrics.get('failed_note')}")
    if metrics.get("n_knowledge_missing"):
        notes.append(f"{metrics['n_knowledge_missing']} items have no knowledge (unmeasured)")
    return notes
