"""``kalma score --kg``: answers over your own KG, with your own ids.

Before scoring (when the run opens), the KG is opened and every reference in the inputs is
resolved against it once (:mod:`._resolve`): the answers' ``entities`` and the gold subjects
(ids, IRIs, short ids or labels), so a bad reference stops the run before anything is scored.
Then per answer, its graphs are the one-hop graphs of its ``entities`` when it lists them, else
what ``kalma run --retrieval ner`` retrieves for its question (the same :class:`Retriever`: NER ->
label lookup -> re-ranking). The record keeps what was retrieved (``retrieval``), the facts the
graphs held (``kg_triples``) and the centres' short ids (``short_ids``), so the viewer shows them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from citegraph.datasets import AnswerRecord, GoldRecord
from citegraph.errors import DataError
from citegraph.io import JsonlIndex
from citegraph.kalma.retrieve._config import RetrievalConfig
from citegraph.kalma.retrieve._retrieve import Retriever
from citegraph.kalma.score._config import ScoreConfig
from citegraph.kalma.score._inputs import SubjectMap, chunks, gold_references
from citegraph.kalma.score._resolve import Reference, resolve_in_kg
from citegraph.kg import KnowledgeGraph, Subgraph, with_short_ids


class OwnKG(BaseModel):
    """The KG answers are scored over, opened, with the inputs' references resolved in it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    kg: KnowledgeGraph
    identity: str
    entity_ids: dict[str, str]
    gold_subjects: SubjectMap
    retriever: Retriever


def check_questions(answers: JsonlIndex[AnswerRecord]) -> None:
    """Every answer over your own KG has its question (retrieval and scoring read it).

    Raises:
        DataError: an answer has no ``question`` (names the file, line and field).
    """
    for records in chunks(answers):
        for record in records:
            if not (record.question or "").strip():
                raise DataError(
                    "missing: answers scored over your own KG (--kg) need their question",
                    path=answers.path,
                    line=record.line,
                    field="question",
                )


async def prepare_own_kg(
    kg: KnowledgeGraph,
    identity: str,
    answers: JsonlIndex[AnswerRecord],
    gold: JsonlIndex[GoldRecord] | None,
    config: ScoreConfig,
) -> OwnKG:
    """Resolve the answers' ``entities`` and the gold subjects in ``kg``.

    Raises:
        DataError: a reference names no entity of the KG, or several (names file, line, field).
    """
    entity_ids = await resolve_in_kg(kg, _entity_references(answers))
    subjects: SubjectMap = {}
    if gold is not None:
        refs = list(_gold_references(gold))
        resolved = await resolve_in_kg(kg, (ref for _, ref in refs))
        for sid, ref in refs:
            if resolved[ref.text] != ref.text:
                subjects.setdefault(sid, {})[ref.text] = resolved[ref.text]
    return OwnKG(
        kg=kg,
        identity=identity,
        entity_ids=entity_ids,
        gold_subjects=subjects,
        retriever=Retriever(RetrievalConfig.for_mode(config.rules)),
    )


def _entity_references(answers: JsonlIndex[AnswerRecord]) -> Iterator[Reference]:
    for records in chunks(answers):
        for record in records:
            for text in record.entities or ():
                yield Reference(
                    text=text,
                    path=answers.path,
                    line=record.line,
                    field="entities",
                    what="entity",
                )


def _gold_references(gold: JsonlIndex[GoldRecord]) -> Iterator[tuple[str, Reference]]:
    position = 0
    for records in chunks(gold):
        for record in records:
            for ref in gold_references(gold, position, record):
                yield record.id, ref
            position += 1


async def graphs_of(
    record: AnswerRecord, own: OwnKG
) -> tuple[tuple[Subgraph, ...], dict[str, Any]]:
    """An answer's graphs (its ``entities``' or the retrieved ones) and what the record keeps
    of how they were found."""
    if record.entities:
        ids = list(dict.fromkeys(own.entity_ids[text] for text in record.entities))
        graphs = tuple([await own.kg.subgraph(i) for i in ids])
        return graphs, {"source": "entities", "entities": list(record.entities), "qids": ids}
    retrieval = await own.retriever(record.question or "", own.kg)
    return tuple(retrieval.graphs), {
        "source": "retrieval",
        "qids": retrieval.qids,
        "mentions": [m.text for m in retrieval.mentions],
        "unresolved": [
            {"mention": u.mention.text, "reason": u.reason} for u in retrieval.unresolved
        ],
    }


def graph_fields(graphs: Sequence[Subgraph], retrieval: dict[str, Any]) -> dict[str, Any]:
    """What an answer's record keeps of its graphs: how they were found (``retrieval``), their
    facts with their subject's name (``kg_triples``: the viewer's KG table) and, for IRI ids,
    the short id each centre is shown by (``short_ids``, as ``kalma run`` records it)."""
    facts = []
    for graph in graphs:
        for triple in graph.triples:
            label = triple.subject_label
            if label is None and triple.subject == graph.center.id:
                label = graph.center.name
            row = triple.model_dump(mode="json", exclude_none=True)
            facts.append(row | ({"subject_label": label} if label else {}))
    out = {"retrieval": retrieval, "kg_triples": facts}
    shown = {g.center.id: g.center.display_id for g in with_short_ids(graphs)}
    short_ids = {full: short for full, short in shown.items() if short != full}
    return out | ({"short_ids": short_ids} if short_ids else {})
