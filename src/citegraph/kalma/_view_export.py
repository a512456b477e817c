"""What ``runs export`` adds to each KaLMA sample: the counts every micro and macro figure of
``metrics.json`` is computed from, why a metric is unmeasured, and ``kalma run``'s generation
metadata; and the column types of the KaLMA tables, so that a table with no rows keeps them.

Recomputing a figure from the ``samples`` table (``docs/export.md`` shows it in pandas and
DuckDB): over the rows whose ``unmeasured_<metric>`` is null,

- correctness: ``n_correct / n_citations``; precision: ``n_precise / n_citations``; recall:
  ``n_gold_hit / n_gold``; alignment: ``n_aligned / n_alignment_pairs``; [NA] precision and
  recall: ``na_precision_num / na_precision_den``, ``na_recall_num / na_recall_den``;
- micro = sum of numerators / sum of denominators; macro = mean of the per-sample ratios over
  the rows whose denominator is not 0;
- F1: ``2PR / (P + R)`` of the micro (macro) precision and recall.

- citation validity (``metrics.json`` ``citation_validity``), over the rows with a
  ``n_brackets``: malformed rate ``n_malformed_brackets / n_brackets``; outside the retrieved
  graphs ``n_outside_retrieved / n_citations``; not in the KG ``n_not_in_kg / n_citations`` over
  the rows whose ``unmeasured_not_in_kg`` is null; citations per sentence
  ``(n_citations + n_na_markers) / n_sentences``; sentences cited ``n_sentences_cited /
  n_sentences``.

In reference mode alignment keeps only the first ``metrics.json`` ``config.alignment_cap``
answers in dataset order, as the authors' script does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citegraph.kalma.score._report import failed_reason
from citegraph.kalma.score._validity_report import NOT_RECORDED
from citegraph.runs import FAILED

#: The metrics whose ``unmeasured_<metric>`` column says why a sample has no value.
UNMEASURED_METRICS = (
    "correctness",
    "precision",
    "recall",
    "alignment",
    "na_precision",
    "na_recall",
)

#: ``samples`` columns: citation counts, alignment and [NA] numerators and denominators.
COUNT_COLUMNS: dict[str, str] = {
    "n_citations": "int",
    "n_correct": "int",
    "n_precise": "int",
    "n_gold": "int",
    "n_gold_hit": "int",
    "n_aligned": "int",
    "n_alignment_pairs": "int",
    "n_na_markers": "int",
    "na_precision_num": "int",
    "na_precision_den": "int",
    "na_recall_num": "int",
    "na_recall_den": "int",
}
#: ``samples`` columns of citation validity (the record's ``citation_validity``).
VALIDITY_COLUMNS: dict[str, str] = {
    "n_brackets": "int",
    "n_malformed_brackets": "int",
    "n_outside_retrieved": "int",
    "n_not_in_kg": "int",
    "unmeasured_not_in_kg": "string",
    "n_sentences": "int",
    "n_sentences_cited": "int",
}
#: ``samples`` columns of ``kalma run``: how the answer was generated.
GENERATION_COLUMNS: dict[str, str] = {
    "latency_s": "float",
    "prompt_tokens": "int",
    "completion_tokens": "int",
    "finish_reason": "string",
    "attempts": "int",
    "cached": "bool",
}

#: The KaLMA export tables and their column types (after the run-level columns and
#: ``sample_id``).
KALMA_SCHEMA: dict[str, dict[str, str]] = {
    "samples": {f"score_{m}": "float" for m in UNMEASURED_METRICS}
    | COUNT_COLUMNS
    | {f"unmeasured_{m}": "string" for m in UNMEASURED_METRICS}
    | VALIDITY_COLUMNS
    | GENERATION_COLUMNS,
    "citations": {
        "sentence_index": "int",
        "citation_index": "int",
        "kind": "string",
        "subject": "string",
        "subject_label": "string",
        "relation": "string",
        "value": "string",
        "bracket": "string",
        "correct": "bool",
        "in_gold": "bool",
        "precise": "bool",
        "entailed": "bool",
    },
    "sentences": {
        "sentence_index": "int",
        "text": "string",
        "n_citations": "int",
        "has_na": "bool",
    },
}


def kalma_export_columns(record: Mapping[str, Any]) -> dict[str, Any]:
    """The per-sample export columns of a KaLMA record (``None`` where the record has no such
    part: a failed generation, no gold, no NLI pairs)."""
    cited = _part(record, "citations")
    aligned = _part(record, "alignment")
    na = _part(record, "na")
    sentences = _part(record, "parsed").get("sentences")
    markers = sum(
        1
        for s in sentences or ()
        if isinstance(s, Mapping)
        for c in s.get("citations") or ()
        if isinstance(c, Mapping) and c.get("kind") == "na"
    )
    out: dict[str, Any] = {
        name: cited.get(name)
        for name in ("n_citations", "n_correct", "n_precise", "n_gold", "n_gold_hit")
    }
    out |= {
        "n_aligned": aligned.get("aligned"),
        "n_alignment_pairs": aligned.get("total"),
        "n_na_markers": markers if sentences is not None else None,
    }
    out |= {name: na.get(name[3:]) for name in COUNT_COLUMNS if name.startswith("na_")}
    unmeasured = _part(record, "unmeasured")
    failed = failed_reason(record) if record.get("status") == FAILED else None
    for metric in UNMEASURED_METRICS:  # a failed item is unmeasured by every metric, not zero
        reason = failed or unmeasured.get(metric)
        out[f"unmeasured_{metric}"] = None if reason is None else str(reason)
    return out | _validity(record, failed) | _generation(record)


def _validity(record: Mapping[str, Any], failed: str | None) -> dict[str, Any]:
    """The citation-validity counts (all ``None`` for a record without them: failed, or
    written before they existed; ``unmeasured_not_in_kg`` then says why)."""
    validity = _part(record, "citation_validity")
    out = {
        f"n_{name}": validity.get(name)
        for name in (
            "brackets",
            "malformed_brackets",
            "outside_retrieved",
            "not_in_kg",
            "sentences",
            "sentences_cited",
        )
    }
    reason = failed or _part(validity, "unmeasured").get("not_in_kg")
    if reason is None and not validity:
        reason = NOT_RECORDED
    return out | {"unmeasured_not_in_kg": None if reason is None else str(reason)}


def _generation(record: Mapping[str, Any]) -> dict[str, Any]:
    """``kalma run``'s generation metadata (all ``None`` for a ``kalma score`` record)."""
    generation = _part(record, "generation")
    usage = generation.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    return {
        "latency_s": generation.get("latency_s"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "finish_reason": generation.get("finish_reason"),
        "attempts": generation.get("attempts"),
        "cached": generation.get("cached"),
    }


def _part(record: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = record.get(key)
    return value if isinstance(value, Mapping) else {}
