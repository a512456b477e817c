"""How KaLMA runs show citation validity: the sample list's tags, the sample page's fields and
the run's table (which the HTML report shows too), from the records' ``citation_validity`` and
``metrics.json``'s block (:mod:`citegraph.kalma.score._validity_report`).

Sample-list tags (the list filters on them; the run table's counts link to them):

- ``validity:malformed-brackets``: a bracket gave no citation;
- ``validity:no-entity``: a bracket was left unjudged, retrieval having found no entity (own KG);
- ``validity:outside-retrieved``: a KG citation is no triple of the retrieved graphs;
- ``validity:not-in-kg``: a KG citation's subject is no entity of the KG;
- ``validity:not-in-kg-unmeasured``: the cited ids could not be looked up (no KG...);
- ``validity:no-citations``: the answer cites nothing, neither a KG triple nor ``[NA]``;
- ``validity:repeated``: a KG citation repeats a triple the answer cited before;
- ``validity:repeated-in-bracket``: one bracket lists a triple twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citegraph.runs import FieldsBlock, MetricRow, Record, Segment, TableBlock, field_text

MALFORMED = "validity:malformed-brackets"
NO_ENTITY = "validity:no-entity"
OUTSIDE = "validity:outside-retrieved"
NOT_IN_KG = "validity:not-in-kg"
NOT_IN_KG_UNMEASURED = "validity:not-in-kg-unmeasured"
NO_CITATIONS = "validity:no-citations"
REPEATED = "validity:repeated"
REPEATED_IN_BRACKET = "validity:repeated-in-bracket"


def validity_tags(record: Record) -> list[str]:
    """The validity tags of a scored record (none for a record without validity counts)."""
    validity = record.get("citation_validity")
    if not isinstance(validity, Mapping):
        return []
    tags = []
    if validity.get("malformed_brackets"):
        tags.append(MALFORMED)
    if validity.get("no_entity_brackets"):
        tags.append(NO_ENTITY)
    if validity.get("outside_retrieved"):
        tags.append(OUTSIDE)
    if validity.get("not_in_kg") is None:
        tags.append(NOT_IN_KG_UNMEASURED)
    elif validity["not_in_kg"]:
        tags.append(NOT_IN_KG)
    if not validity.get("citations"):
        tags.append(NO_CITATIONS)
    if validity.get("repeated_citations"):
        tags.append(REPEATED)
    if validity.get("repeated_in_bracket"):
        tags.append(REPEATED_IN_BRACKET)
    return tags


def _ratio(num: Any, den: Any) -> str:
    if not isinstance(den, int) or not den or not isinstance(num, int | float):
        return "—"
    return f"{num} / {den} = {100 * num / den:.1f}%"


def validity_fields(record: Record) -> FieldsBlock | None:
    """The sample page's citation validity: each count with its denominator, and which brackets,
    citations and ids it counted."""
    v = record.get("citation_validity")
    if not isinstance(v, Mapping):
        return None
    malformed = "; ".join(
        f"{m.get('bracket')} ({m.get('reason')})" for m in v.get("malformed") or []
    )
    outside = "; ".join(" · ".join(str(x) for x in t) for t in v.get("outside") or [])
    not_in_kg = v.get("not_in_kg")
    if not_in_kg is None:
        missing = f"unmeasured: {(v.get('unmeasured') or {}).get('not_in_kg', 'no reason')}"
    else:
        missing = _ratio(not_in_kg, v.get("kg_citations"))
        if v.get("not_in_kg_ids"):
            missing += f" ({', '.join(str(i) for i in v['not_in_kg_ids'])})"
    per_sentence = v.get("citations_per_sentence")
    if v.get("repeated_citations") is None:
        repeated = "unmeasured: record scored before repeated citations were counted"
    else:
        repeated = _ratio(v.get("repeated_citations"), v.get("kg_citations"))
        repeated += f" KG citations; {v.get('repeated_in_bracket')} within one bracket"
    fields = [
        ("malformed brackets", _ratio(v.get("malformed_brackets"), v.get("brackets"))),
        ("KG citations", field_text(v.get("kg_citations"))),
        ("[NA] citations", field_text(v.get("na_citations"))),
        ("outside the retrieved graphs", _ratio(v.get("outside_retrieved"), v.get("kg_citations"))),
        ("cited ids not in the KG", missing),
        ("repeated citations (a triple cited before in the answer)", repeated),
        (
            "citations per sentence",
            f"{v.get('citations')} / {v.get('sentences')}"
            + (f" = {per_sentence:.2f}" if isinstance(per_sentence, int | float) else ""),
        ),
        ("sentences cited", _ratio(v.get("sentences_cited"), v.get("sentences"))),
    ]
    if malformed:
        fields.append(("malformed", malformed))
    if v.get("no_entity"):
        fields.append(
            (
                "left unjudged (retrieval found no entity)",
                "; ".join(f"{m.get('bracket')} ({m.get('reason')})" for m in v["no_entity"]),
            )
        )
    if outside:
        fields.append(("outside", outside))
    if v.get("repeated"):
        fields.append(("repeated", "; ".join(" · ".join(str(x) for x in t) for t in v["repeated"])))
    return FieldsBlock(title="Citation validity", fields=fields)


def _cell(value: Any, percent: bool = False) -> Segment:
    if value is None:
        return Segment(text="unmeasured", mark="unknown")
    if percent:
        return Segment(text=f"{100 * value:.1f}%")
    return Segment(text=f"{value:.3g}" if isinstance(value, float) else str(value))


def _unmeasured(block: Mapping[str, Any], rate: str) -> str:
    reasons = (block.get("unmeasured") or {}).get(rate) or {}
    return "; ".join(f"{reason}: {n}" for reason, n in reasons.items()) or "—"


#: The run table's rows: label, count, what it is over, rate, tag of the samples it counts.
_ROWS: tuple[tuple[str, str, str, str, str | None], ...] = (
    ("malformed brackets", "malformed_brackets", "brackets", "malformed_rate", MALFORMED),
    (
        "brackets left unjudged: retrieval found no entity",
        "no_entity_brackets",
        "brackets",
        "no_entity_rate",
        NO_ENTITY,
    ),
    (
        "KG citations outside the retrieved graphs",
        "outside_retrieved",
        "kg_citations",
        "outside_retrieved_rate",
        OUTSIDE,
    ),
    ("cited ids not in the KG", "not_in_kg", "not_in_kg_checked", "not_in_kg_rate", NOT_IN_KG),
    (
        "KG citations repeating a triple cited before in the answer",
        "repeated_citations",
        "repeated_checked",
        "repeated_rate",
        REPEATED,
    ),
    (
        "… of which cited before in the same bracket",
        "repeated_in_bracket",
        "repeated_checked",
        "repeated_in_bracket_rate",
        REPEATED_IN_BRACKET,
    ),
    ("sentences cited", "sentences_cited", "sentences", "sentences_cited_rate", None),
    (
        "answers without any citation",
        "answers_without_citations",
        "n_answers",
        "answers_without_citations_rate",
        NO_CITATIONS,
    ),
    ("citations per sentence (pooled)", "citations", "sentences", "citations_per_sentence", None),
    (
        "citations per sentence (mean over answers)",
        "",
        "answers_with_sentences",
        "citations_per_sentence_mean",
        None,
    ),
)


#: What each denominator counts, in words.
_OVER = {
    "brackets": "brackets",
    "kg_citations": "KG citations",
    "not_in_kg_checked": "KG citations looked up",
    "repeated_checked": "KG citations checked for repeats",
    "sentences": "sentences",
    "n_answers": "answers",
    "answers_with_sentences": "answers with a sentence",
}


def validity_table(metrics: Mapping[str, Any]) -> TableBlock | None:
    """The run's citation validity: each count, what it is over, the rate, the answers left
    out and why; a count links to the samples it tags."""
    b = metrics.get("citation_validity")
    if not isinstance(b, Mapping):
        return None
    rows = []
    for label, count, over, rate, tag in _ROWS:
        if rate not in b:  # a count metrics.json had no place for yet (older runs)
            continue
        shown = _cell(b.get(count)) if count else Segment(text="—")
        if tag is not None:
            shown = shown.model_copy(update={"link": {"tag": tag}})
        rows.append(
            [
                Segment(text=label),
                shown,
                Segment(text=f"{b.get(over)} {_OVER[over]}"),
                _cell(b.get(rate), percent=rate.endswith("_rate")),
                Segment(text=_unmeasured(b, rate)),
            ]
        )
    note = (
        f"{b.get('kg_citations')} KG citations and {b.get('na_citations')} [NA] over "
        f"{b.get('n_answers')} answers; each rate pools the counts of every answer (a failed "
        "item is left out and counted as unmeasured). A count links to its samples."
    )
    return TableBlock(
        title="Citation validity",
        columns=["count", "n", "of", "rate", "unmeasured (reason: answers)"],
        rows=rows,
        note=note,
    )


#: The metrics-table rows (so ``runs compare`` puts runs side by side): label, rate, its
#: count, and how many answers it was measured on.
_METRIC_ROWS = (
    ("malformed brackets", "malformed_rate", "malformed_brackets", "n_answers"),
    (
        "citations outside the retrieved graphs",
        "outside_retrieved_rate",
        "outside_retrieved",
        "n_answers",
    ),
    ("cited ids not in the KG", "not_in_kg_rate", "not_in_kg", "not_in_kg_answers"),
    ("repeated citations", "repeated_rate", "repeated_citations", "repeated_answers"),
    ("citations per sentence", "citations_per_sentence", "citations", "n_answers"),
    ("sentences cited", "sentences_cited_rate", "sentences_cited", "n_answers"),
)


def validity_rows(metrics: Mapping[str, Any], parser: str) -> list[MetricRow]:
    """The citation-validity rates as metric rows: each pooled over the answers, with its count
    and denominator in ``how`` and the answers left out (and why) in ``unmeasured``."""
    b = metrics.get("citation_validity")
    if not isinstance(b, Mapping):
        return []
    rows = []
    for label, rate, count, answers in _METRIC_ROWS:
        if rate not in b:
            continue
        over = str((b.get("denominators") or {}).get(rate, ""))
        value = b.get(rate)
        reasons = (b.get("unmeasured") or {}).get(rate) or {}
        measured = b.get(answers)
        rows.append(
            MetricRow(
                name=label,
                value=value if isinstance(value, int | float) else None,
                percent=rate.endswith("_rate"),
                n_measured=measured if isinstance(measured, int) else None,
                unmeasured={str(k): int(n) for k, n in reasons.items() if isinstance(n, int)},
                model=f"parser {parser}",
                how=f"{b.get(count)} of {b.get(over)} {_OVER.get(over, over)}, pooled",
            )
        )
    return rows
