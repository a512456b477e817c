"""How a KaLMA record's triples and entity ids are written on its sample page.

Entity ids that are IRIs are shown by their short id with the full IRI beside it (in the
tooltip, or after ``=`` in plain fields): the record's ``short_ids`` (full id -> short id, what
the prompt showed) when it has one, else :func:`citegraph.kg.compact_ids` over the record's ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from citegraph.kg import compact_ids, is_iri
from citegraph.runs import Record, Segment

TripleKey = tuple[str, str, str]
"""``(subject, relation, value)``."""


def triple_key(triple: Mapping[str, Any] | Sequence[Any]) -> TripleKey:
    """``(subject, relation, value)`` of a triple dict or ``[s, r, v]`` list."""
    if isinstance(triple, Mapping):
        return (str(triple.get("subject")), str(triple.get("relation")), str(triple.get("value")))
    subject, relation, value = (str(x) for x in triple[:3])
    return (subject, relation, value)


def triple_text(triple: Mapping[str, Any], short_ids: Mapping[str, str] | None = None) -> str:
    """``subject label · relation · value (Qid)``; without a label, ``Qid · relation · value``.

    A subject with a short id in ``short_ids`` is written ``ex:MarieCurie = <full IRI>``.
    """
    subject, relation, value = triple_key(triple)
    shown = id_text(subject, short_ids or {})
    label = triple.get("subject_label")
    if label and label != subject:
        return f"{label} · {relation} · {value} ({shown})"
    return f"{shown} · {relation} · {value}"


def id_text(entity_id: str, short_ids: Mapping[str, str]) -> str:
    """``ex:MarieCurie = http://example.org/kg/MarieCurie`` for an id with a short id, else the
    id."""
    short = short_ids.get(entity_id)
    return f"{short} = {entity_id}" if short and short != entity_id else entity_id


def id_segment(entity_id: str, short_ids: Mapping[str, str]) -> Segment:
    """The short id, with the full id as its tooltip; an id without one as it is."""
    short = short_ids.get(entity_id)
    if short and short != entity_id:
        return Segment(text=short, tip=entity_id)
    return Segment(text=entity_id)


def record_short_ids(record: Record) -> dict[str, str]:
    """Full id -> short id for the IRI ids of a record (see the module docstring)."""
    given = record.get("short_ids")
    out = {str(k): str(v) for k, v in given.items()} if isinstance(given, Mapping) else {}
    ids = [i for i in _record_ids(record) if i not in out and is_iri(i)]
    if ids:
        known = set(out.values())
        out |= {k: v for k, v in compact_ids(ids).items() if v not in known}
    return out


def _record_ids(record: Record) -> list[str]:
    """The subject and graph ids a record mentions, in order of appearance."""
    found: dict[str, None] = {}
    triples: list[Any] = list(record.get("kg_triples") or record.get("kg_given") or [])
    citations = record.get("citations") or {}
    triples += [v.get("triple") for v in citations.get("verdicts") or []]
    triples += list(citations.get("gold_missed") or [])
    triples += list((record.get("na") or {}).get("absent") or []) + list(
        record.get("removed") or []
    )
    for triple in triples:
        if isinstance(triple, Mapping | Sequence) and not isinstance(triple, str) and triple:
            found.setdefault(triple_key(triple)[0])
    retrieval = record.get("retrieval")
    if isinstance(retrieval, Mapping):
        for key in ("qids", "gold_qids"):
            for entity_id in retrieval.get(key) or []:
                found.setdefault(str(entity_id))
    for entity_id in record.get("graph_qids") or []:
        found.setdefault(str(entity_id))
    return list(found)
