"""How KaLMA runs (``kalma run``, ``kalma score``) are shown: :class:`KalmaPresenter`.

The sample page (:mod:`._sample`), the paper's figures (:mod:`._charts`), the sample
list's tags, the metrics table and the export tables, all from the records and ``metrics.json``
alone (no dataset lookup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.kalma._reasons import nli_stand_in_warning, warning_lines
from citegraph.kalma.view._charts import kalma_charts
from citegraph.kalma.view._compare import CompareFigures, compare_figures, compare_settings
from citegraph.kalma.view._export import KALMA_SCHEMA, citation_rows, kalma_export_columns
from citegraph.kalma.view._sample import citation_refs, sample_blocks
from citegraph.kalma.view._validity import validity_rows, validity_table, validity_tags
from citegraph.runs import (
    FAILED,
    Block,
    Chart,
    MetricRow,
    Presenter,
    Record,
    RunData,
    RunPresentation,
    SampleSummary,
)

#: The KaLMA metrics in ``metrics.json``, with their display names.
METRIC_NAMES = {
    "correctness": "citation correctness",
    "precision": "citation precision",
    "recall": "citation recall",
    "f1": "citation F1",
    "alignment": "text-citation alignment",
    "na_precision": "[NA] precision",
    "na_recall": "[NA] recall",
}
_NLI_METRICS = ("alignment", "na_precision", "na_recall")


class KalmaPresenter(Presenter):
    """The KaLMA view: answers with citations marked by verdict, the KG the model was given,
    alignment verdicts, the metrics table with the NLI model behind each, the paper's figures."""

    @classmethod
    def summary(cls, record: Record) -> SampleSummary:
        """Title = question; tags ``failed``, ``unmeasured``, ``has-na``, ``verdict:wrong``
        (a citation not in the KG), ``verdict:malformed`` (parse issues), ``empty``,
        ``no-citation``, and the citation-validity tags (``validity:...``, see
        :mod:`._validity`); a failed item (no answer came) is tagged ``failed`` alone."""
        base = super().summary(record)
        tags = list(base.tags)
        title = str(record.get("question") or record.get("id"))
        if record.get("status") == FAILED:  # no answer came: not an empty, uncited answer
            return base.model_copy(update={"title": title, "tags": tags})
        refs = citation_refs(record)
        kg = [r for r in refs if r.kind == "kg"]
        if any(r.kind == "na" for r in refs):
            tags.append("has-na")
        if any((r.verdict or {}).get("correct") is False for r in kg):
            tags.append("verdict:wrong")
        if record.get("parse_issues") or (record.get("parsed") or {}).get("issues"):
            tags.append("verdict:malformed")
        if record.get("empty_answer") or not (record.get("answer") or "").strip():
            tags.append("empty")
        if not kg:
            tags.append("no-citation")
        tags += validity_tags(record)
        return base.model_copy(update={"title": title, "tags": tags})

    @classmethod
    def sample(cls, record: Record, info: Mapping[str, Any]) -> list[Block]:
        """Answer (citations marked), KG table, alignment, scores, generation, raw, JSON."""
        return sample_blocks(record, info)

    @classmethod
    def metrics(cls, metrics: Mapping[str, Any], info: Mapping[str, Any]) -> RunPresentation:
        """One row per KaLMA metric (micro / macro, measured and unmeasured counts with reasons,
        the deciding model and whether it is a stand-in), text quality, retrieval; notes; the
        citation-validity table (its counts link to the samples they count)."""
        config = {**(info.get("config") or {}), **(metrics.get("config") or {})}
        mode = str(config.get("mode", "paper"))
        nli = str(config.get("nli_name") or config.get("nli") or "lexical")
        stand_in = nli_stand_in_warning("reference" if mode == "reference" else "paper", nli)
        details = metrics.get("details") or {}
        reasons = metrics.get("unmeasured") or {}
        rows = []
        for name, label in METRIC_NAMES.items():
            value = metrics.get(name)
            if not isinstance(value, Mapping):
                continue
            detail = details.get(name) or {}
            n = detail.get("n")
            kept = None
            if isinstance(n, int):
                kept = n - int(detail.get("n_excluded") or 0) - int(detail.get("n_unmeasured") or 0)
            by_nli = name in _NLI_METRICS
            how = f"{mode} mode · parser {config.get('parser_version', config.get('parser'))}"
            if by_nli:
                how += f" · hypothesis {config.get('hypothesis')}"
            rows.append(
                MetricRow(
                    name=label,
                    value=value.get("micro"),
                    micro=value.get("micro"),
                    macro=value.get("macro"),
                    percent=True,
                    n_measured=kept,
                    unmeasured={str(k): int(v) for k, v in (reasons.get(name) or {}).items()},
                    model=nli
                    if by_nli
                    else ("normalised match" if config.get("normalize") else "exact match"),
                    stand_in=by_nli and stand_in is not None,
                    how=how,
                )
            )
        rows += _text_quality_rows(metrics, info)
        rows += _agreement_rows(metrics, info)
        rows += _retrieval_rows(metrics)
        rows += validity_rows(metrics, str(config.get("parser_version", config.get("parser"))))
        table = validity_table(metrics)
        return RunPresentation(
            metrics=rows,
            blocks=[table] if table is not None else [],
            notes=_notes(metrics, mode, stand_in),
        )

    @classmethod
    def charts(cls, runs: Sequence[RunData]) -> list[Chart]:
        """Figures 4 and 5, Table 5 and Table 3 of the paper, from the runs that support them."""
        return kalma_charts(runs)

    @classmethod
    def export_columns(cls, record: Record, info: Mapping[str, Any]) -> dict[str, Any]:
        """The counts every metric is recomputed from, why each is unmeasured, and ``kalma
        run``'s generation metadata (see :mod:`._export`)."""
        return kalma_export_columns(record)

    @classmethod
    def export_schema(cls) -> dict[str, dict[str, str]]:
        """The types of the ``samples`` columns above, of ``citations`` and ``sentences``."""
        return KALMA_SCHEMA

    @classmethod
    def tables(cls, record: Record) -> dict[str, list[dict[str, Any]]]:
        """``citations``: one row per cited triple, ``[NA]`` marker and malformed bracket
        (:func:`._export.citation_rows`); ``sentences``: one row per sentence."""
        sample = str(record.get("id"))
        citations = citation_rows(record)
        sentences = [
            {
                "sample_id": sample,
                "sentence_index": i,
                "text": s.get("text"),
                "n_citations": sum(1 for c in s.get("citations") or [] if c.get("kind") == "kg"),
                "has_na": any(c.get("kind") == "na" for c in s.get("citations") or []),
            }
            for i, s in enumerate((record.get("parsed") or {}).get("sentences") or [])
        ]
        return {"citations": citations, "sentences": sentences}

    @classmethod
    def compare_settings(
        cls, config: Mapping[str, Any], metrics: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The settings ``runs compare`` tells KaLMA runs apart by: ``run.json``'s ``config``
        plus the split, model, removed facts and retrieval accuracy ``metrics`` records
        (:func:`._compare.compare_settings`)."""
        return compare_settings(config, metrics)

    @classmethod
    def compare_figures(cls, metrics: Sequence[Mapping[str, Any]], kind: str) -> CompareFigures:
        """What ``runs compare`` shows of KaLMA runs' ``metrics.json`` (``kind``: micro or
        macro): citation and [NA] metrics, text-quality means
        (:func:`._compare.compare_figures`)."""
        return compare_figures(metrics, kind)


def _judge_name(metrics: Mapping[str, Any], info: Mapping[str, Any]) -> str | None:
    return (metrics.get("setup") or {}).get("judge") or (info.get("config") or {}).get("judge_name")


#: The agreement coefficients of ``text_quality_agreement``, with their display names.
_COEFFICIENTS = {
    "spearman": "Spearman rho",
    "kendall_tau_b": "Kendall tau-b",
    "somers_d": "Somers' D(judge | human)",
}


def _agreement_rows(metrics: Mapping[str, Any], info: Mapping[str, Any]) -> list[MetricRow]:
    """One row per criterion and coefficient of the judge's agreement with human scores: the
    value, the pairs counted, the answers left out (why), the p-value and bootstrap interval."""
    agreement = metrics.get("text_quality_agreement")
    if not isinstance(agreement, Mapping):
        return []
    judge = _judge_name(metrics, info)
    rows = []
    for criterion, block in agreement.items():
        if not isinstance(block, Mapping):
            continue
        unmeasured = {str(k): int(v) for k, v in (block.get("unmeasured_reasons") or {}).items()}
        for key, label in _COEFFICIENTS.items():
            c = block.get(key) or {}
            ci = c.get("ci")
            how = [f"{block.get('n')} answer pairs (judge, human)"]
            if c.get("p_value") is not None:
                how.append(f"p = {c['p_value']:.3g}")
            if ci:
                how.append(
                    f"{100 * ci['confidence']:.0f}% CI [{ci['low']:.3f}, {ci['high']:.3f}] "
                    f"({ci['n_resamples']} bootstrap resamples of answers)"
                )
            if c.get("reason"):
                how.append(str(c["reason"]))
            rows.append(
                MetricRow(
                    name=f"judge vs human: {criterion} {label}",
                    value=c.get("value"),
                    n_measured=block.get("n"),
                    unmeasured=unmeasured,
                    model=str(judge) if judge else None,
                    how=" · ".join(how),
                )
            )
    return rows


def _text_quality_rows(metrics: Mapping[str, Any], info: Mapping[str, Any]) -> list[MetricRow]:
    quality = metrics.get("text_quality")
    if not isinstance(quality, Mapping):
        return []
    judge = _judge_name(metrics, info)
    return [
        MetricRow(
            name=f"text quality: {name}",
            value=s.get("mean"),
            n_measured=s.get("n_measured"),
            unmeasured={str(k): int(v) for k, v in (s.get("unmeasured_reasons") or {}).items()},
            model=str(judge) if judge else None,
            how=f"{s.get('mode')} mode · prompt {s.get('prompt_version')} · 1-5 scale · "
            f"{s.get('judge_replies') or 'free'} judge replies",
        )
        for name, s in quality.items()
        if isinstance(s, Mapping)
    ]


def _retrieval_rows(metrics: Mapping[str, Any]) -> list[MetricRow]:
    retrieval = metrics.get("retrieval")
    if not isinstance(retrieval, Mapping):
        return []
    reason = retrieval.get("unmeasured_reason")
    unmeasured = {str(reason): int(retrieval.get("n_unmeasured") or 0)} if reason else {}
    rows = []
    for name in ("precision", "recall", "f1"):
        value = retrieval.get(name) or {}
        rows.append(
            MetricRow(
                name=f"retrieval {name}",
                value=value.get("micro"),
                micro=value.get("micro"),
                macro=value.get("macro"),
                percent=True,
                n_measured=retrieval.get("n_measured"),
                unmeasured=unmeasured,
                how=f"{retrieval.get('mode')} mode · graphs retrieved vs the question's own",
            )
        )
    if retrieval.get("exact_match") is not None:
        rows.append(
            MetricRow(name="retrieval exact match", value=retrieval["exact_match"], percent=True)
        )
    return rows


def _notes(metrics: Mapping[str, Any], mode: str, stand_in: str | None) -> list[str]:
    notes = [
        f"{mode} mode: "
        + (
            "the paper's definitions"
            if mode != "reference"
            else "what the authors' scripts compute (docs/modes.md)"
        )
    ]
    if stand_in:
        notes.append(stand_in)
    edge = metrics.get("na_edge_case")
    if isinstance(edge, Mapping) and edge.get("rule"):
        notes.append(f"[NA] edge case: {edge['rule']} ({edge.get('n_sentences', 0)} sentences)")
    setup = metrics.get("setup") or {}
    if setup.get("gold_note"):
        notes.append(str(setup["gold_note"]))
    cap = (metrics.get("config") or {}).get("alignment_cap")
    if cap is not None:
        notes.append(f"alignment measured on the first {cap} answers (reference-mode cap)")
    experiment = metrics.get("experiment") or {}
    if experiment.get("remove_knowledge"):
        notes.append(
            f"conscious incompetence: {experiment['remove_knowledge']} gold facts removed per "
            f"question ({experiment.get('remove_strategy')} order)"
        )
    if experiment.get("retrieval_accuracy_requested", 100) < 100:
        notes.append(
            f"retrieval ablation: accuracy {experiment['retrieval_accuracy_requested']}% "
            f"requested, {experiment.get('retrieval_accuracy_achieved')} achieved"
        )
    notes += [f"input warning: {line}" for line in warning_lines(metrics.get("warnings"))]
    return notes
