"""What ``runs export`` adds to each KaLMA sample: the counts every micro and macro figure of
``metrics.json`` is computed from, why a metric is unmeasured (the reason ``metrics.json``
``unmeasured`` counts for the answer, a 0 / 0 ratio's included), and ``kalma run``'s generation
metadata; the ``citations`` rows (every cited triple, ``[NA]`` marker and malformed bracket);
and the column types of the KaLMA tables, so that a table with no rows keeps them.

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

from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.kalma._reasons import NOT_RECORDED, answer_unmeasured, failed_reason
from citegraph.kalma.view._ids import triple_key
from citegraph.kalma.view._sample import citation_refs
from citegraph.runs import FAILED, Record

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
    "n_no_entity_brackets": "int",
    "n_outside_retrieved": "int",
    "n_not_in_kg": "int",
    "unmeasured_not_in_kg": "string",
    "n_repeated_citations": "int",
    "n_repeated_in_bracket": "int",
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
        "reason": "string",
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
    unmeasured = answer_unmeasured(record)  # with the 0 / 0 reasons metrics.json counts
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
            "no_entity_brackets",
            "outside_retrieved",
            "not_in_kg",
            "repeated_citations",
            "repeated_in_bracket",
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
    return _mapping(record.get(key))


#: ``citations`` ``kind``: the record's citation kinds (``kg``, ``na``) as ``docs/export.md``
#: names them, and ``malformed`` for a bracket that gave no citation.
EXPORT_KINDS = {"kg": "triple", "na": "na"}
MALFORMED = "malformed"
#: ``citations`` ``kind`` of a bracket left unjudged because retrieval found no entity.
NO_ENTITY = "no_entity"


def citation_rows(record: Record) -> list[dict[str, Any]]:
    """The ``citations`` rows of a KaLMA record, in answer order: one per cited triple (kind
    ``triple``), per ``[NA]`` marker (``na``) and per malformed bracket (``malformed``: a
    bracket that gave no citation, with the parser's ``reason``; no ``citation_index``) and
    per bracket left unjudged because retrieval found no entity (``no_entity``), so the table
    has ``n_citations`` triple rows, ``n_na_markers`` na rows, ``n_malformed_brackets``
    malformed rows and ``n_no_entity_brackets`` no_entity rows."""
    sample = str(record.get("id"))
    placed: list[tuple[float, dict[str, Any]]] = []
    for ref in citation_refs(record):
        triple = ref.citation.get("triple") or {}
        verdict = ref.verdict or {}
        kg = ref.kind == "kg"
        subject, relation, value = triple_key(triple) if kg else (None, None, None)
        row = {
            "sample_id": sample,
            "sentence_index": ref.sentence,
            "citation_index": ref.index,
            "kind": EXPORT_KINDS.get(ref.kind, ref.kind),
            "reason": None,
            "subject": subject,
            "subject_label": triple.get("subject_label") if kg else None,
            "relation": relation,
            "value": value,
            "bracket": ref.citation.get("bracket"),
            "correct": verdict.get("correct"),
            "in_gold": verdict.get("in_gold"),
            "precise": verdict.get("precise"),
            "entailed": ref.pair.get("entailed") if ref.pair else None,
        }
        placed.append((_offset(ref.citation.get("start")), row))
    starts = _sentence_starts(record)
    unjudged = _part(record, "citation_validity").get("no_entity")
    for kind, found in ((MALFORMED, _malformed(record)), (NO_ENTITY, unjudged or [])):
        for bracket in found:
            if not isinstance(bracket, Mapping):
                continue
            start = bracket.get("start")
            row = {"sample_id": sample, **dict.fromkeys(KALMA_SCHEMA["citations"])}
            row |= {
                "sentence_index": _sentence_at(starts, start),
                "kind": kind,
                "reason": bracket.get("reason"),
                "bracket": bracket.get("bracket"),
            }
            placed.append((_offset(start), row))
    placed.sort(key=lambda pair: pair[0])  # stable: a bracket's facts keep their order
    return [row for _, row in placed]


def _malformed(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The brackets that gave no citation: citation validity's ``malformed``; for a record
    written before it existed, the parse issues at no citation's offset."""
    validity = _part(record, "citation_validity")
    if isinstance(validity.get("malformed"), list):
        found = validity["malformed"]
    else:
        parsed = _part(record, "parsed")
        cited = {
            c.get("start")
            for s in parsed.get("sentences") or ()
            if isinstance(s, Mapping)
            for c in s.get("citations") or ()
            if isinstance(c, Mapping)
        }
        found = [i for i in parsed.get("issues") or () if _mapping(i).get("start") not in cited]
    return [b for b in found if isinstance(b, Mapping)]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _offset(start: Any) -> float:
    """A bracket's offset in the answer, for ordering rows (unknown: last)."""
    return float(start) if isinstance(start, int) else float("inf")


def _sentence_starts(record: Mapping[str, Any]) -> list[int] | None:
    """The offset of each parsed sentence in the answer (the sentences are the answer's text,
    in order); None when a sentence is not found there."""
    answer = record.get("answer")
    sentences = _part(record, "parsed").get("sentences")
    if not isinstance(answer, str) or not isinstance(sentences, list):
        return None
    starts, pos = [], 0
    for sentence in sentences:
        text = str(_mapping(sentence).get("text") or "").strip()
        found = answer.find(text, pos)
        if not text or found < 0:
            return None
        starts.append(found)
        pos = found + len(text)
    return starts


def _sentence_at(starts: Sequence[int] | None, start: Any) -> int | None:
    """The index of the sentence holding offset ``start`` (None when unknown)."""
    if not starts or not isinstance(start, int):
        return None
    index = None
    for i, first in enumerate(starts):
        if first > start:
            break
        index = i
    return index
