"""``kalma score --kg``: answers over your own KG, with your own ids.

Before scoring (when the run opens), the KG is opened and every reference in the inputs is
resolved against it once (:mod:`._resolve`): the answers' ``entities`` and ``retrieved`` and the
gold subjects (ids, IRIs, short ids or labels), so a bad reference stops the run before anything
is scored. Then per answer, two sets of graphs:

- **the retrieved set**, what the answer was made from: its ``retrieved`` facts and entities
  when it gives them (exactly those facts), else the one-hop graphs of its ``entities``, else
  what ``kalma run --retrieval ner`` retrieves for its question (the same :class:`Retriever`:
  NER -> label lookup -> re-ranking). NER runs only for answers that give neither.
- **the graphs scored against**: the retrieved set's centres' one-hop graphs plus those of the
  entities the answer's citations name (:func:`~citegraph.kalma.parse.subject_references`:
  ids, IRIs, CURIEs, short ids, local names and labels, looked up in the whole KG). So a
  citation is judged on the entity it names even when retrieval missed it (NER misses "The
  Thames"), and a wrong fact about a cited entity is judged wrong, never left out.

"Outside the retrieved graphs" (citation validity) is measured against the retrieved set; when
that set is NER's guess, the cited entities' graphs count as retrieved too (a guess that missed
an entity does not make its citations "outside"). When nothing is retrieved and nothing cited
names an entity, brackets whose subject the graphs would settle say "retrieval found no entity".
The record keeps where each graph came from (``retrieval``), the facts the graphs held
(``kg_triples``) and the centres' short ids (``short_ids``), so the viewer shows them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.datasets import AnswerRecord, GoldRecord
from citegraph.errors import DataError
from citegraph.io import JsonlIndex
from citegraph.kalma.parse import norm_ws, subject_references
from citegraph.kalma.retrieve import RetrievalConfig, Retriever
from citegraph.kalma.score._config import KalmaScoreConfig
from citegraph.kalma.score._inputs import SubjectMap, chunks, gold_references
from citegraph.kalma.score._resolve import Reference, entity_matches, resolve_in_kg_async
from citegraph.kalma.score._validity import NO_ENTITY
from citegraph.kg import KnowledgeGraph, Subgraph, Triple, with_short_ids


class OwnKG(BaseModel):
    """The KG answers are scored over, opened, with the inputs' references resolved in it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    kg: KnowledgeGraph
    identity: str
    entity_ids: dict[str, str]
    retrieved: dict[str, tuple[Subgraph, ...]] = Field(
        default_factory=dict,
        description="Answer id -> its 'retrieved' field as graphs (facts grouped by subject; an "
        "entity reference gives its whole one-hop graph).",
    )
    gold_subjects: SubjectMap
    retriever: Retriever
    lookups: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Subject texts met in citations -> their entity ids."
    )
    graph_cache: dict[str, Subgraph] = Field(
        default_factory=dict, description="One-hop graphs read so far, by centre id."
    )

    @property
    def prefixes(self) -> dict[str, str]:
        """The prefixes the KG declares (its files' and ``--prefix``), name -> namespace."""
        found = getattr(self.kg, "prefixes", None)
        found = found() if callable(found) else found
        return dict(found) if isinstance(found, dict) else {}

    async def graph(self, entity_id: str) -> Subgraph:
        """The one-hop graph of ``entity_id`` (read once per run)."""
        found = self.graph_cache.get(entity_id)
        if found is None:
            found = self.graph_cache[entity_id] = await self.kg.subgraph(entity_id)
        return found

    async def named(self, texts: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The entity ids each subject text names in the whole KG (looked up once per run)."""
        for text in texts:
            if text not in self.lookups:
                self.lookups[text] = await entity_matches(self.kg, text)
        return {text: self.lookups[text] for text in texts if self.lookups[text]}


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
    config: KalmaScoreConfig,
) -> OwnKG:
    """Resolve the answers' ``entities`` and the gold subjects in ``kg``.

    Raises:
        DataError: a reference names no entity of the KG, or several, or a ``retrieved`` fact
            is no fact of the KG (names file, line, field).
    """
    entity_ids = await resolve_in_kg_async(kg, _entity_references(answers))
    own_graphs: dict[str, Subgraph] = {}
    retrieved = await _resolve_retrieved(kg, answers, own_graphs)
    subjects: SubjectMap = {}
    if gold is not None:
        refs = list(_gold_references(gold))
        resolved = await resolve_in_kg_async(kg, (ref for _, ref in refs))
        for sid, ref in refs:
            if resolved[ref.text] != ref.text:
                subjects.setdefault(sid, {})[ref.text] = resolved[ref.text]
    return OwnKG(
        kg=kg,
        identity=identity,
        entity_ids=entity_ids,
        retrieved=retrieved,
        gold_subjects=subjects,
        retriever=Retriever(RetrievalConfig.for_mode(config.rules)),
        graph_cache=own_graphs,
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


async def _resolve_retrieved(
    kg: KnowledgeGraph, answers: JsonlIndex[AnswerRecord], graphs: dict[str, Subgraph]
) -> dict[str, tuple[Subgraph, ...]]:
    """Each answer's ``retrieved`` field as graphs of the KG (``graphs`` caches what is read).

    Raises:
        DataError: an entity reference names no entity or several, or a fact is no fact of its
            subject in the KG (names the file, line, field and item).
    """
    refs: list[tuple[AnswerRecord, int, Reference]] = []
    for records in chunks(answers):
        for record in records:
            for k, item in enumerate(record.retrieved or ()):
                text = item if isinstance(item, str) else item[0]
                what = f"retrieved item {k} " + ("entity" if isinstance(item, str) else "subject")
                ref = Reference(
                    text=text, path=answers.path, line=record.line, field="retrieved", what=what
                )
                refs.append((record, k, ref))
    ids = await resolve_in_kg_async(kg, (ref for _, _, ref in refs))
    facts: dict[str, dict[str, dict[Triple, None]]] = {}
    for record, k, ref in refs:
        centre = ids[ref.text]
        if centre not in graphs:
            graphs[centre] = await kg.subgraph(centre)
        held = facts.setdefault(record.id, {}).setdefault(centre, {})
        item = (record.retrieved or ())[k]
        if isinstance(item, str):
            held.update(dict.fromkeys(graphs[centre].triples))
        else:
            held[_fact_of(graphs[centre], item, ref, k)] = None
    return {
        sid: tuple(
            Subgraph(center=graphs[centre].center, triples=tuple(triples))
            for centre, triples in by_centre.items()
        )
        for sid, by_centre in facts.items()
    }


def _fact_of(graph: Subgraph, item: tuple[str, str, str], ref: Reference, k: int) -> Triple:
    """The triple of ``graph`` a retrieved ``[subject, relation, value]`` is (relation by label
    or IRI, value by label or id, up to whitespace)."""
    _, relation, value = (norm_ws(x) for x in item)
    for triple in graph.triples:
        if relation in (norm_ws(triple.relation), triple.relation_id) and value in (
            norm_ws(triple.value),
            triple.value_id,
        ):
            return triple
    raise DataError(
        f"retrieved item {k} {list(item)!r} is no fact of the KG: {graph.center.id} has no "
        f"{relation!r} with value {value!r}",
        path=ref.path,
        line=ref.line,
        field="retrieved",
    )


def _gold_references(gold: JsonlIndex[GoldRecord]) -> Iterator[tuple[str, Reference]]:
    position = 0
    for records in chunks(gold):
        for record in records:
            for ref in gold_references(gold, position, record):
                yield record.id, ref
            position += 1


class FoundGraphs(BaseModel):
    """An answer's graphs over your own KG (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    graphs: tuple[Subgraph, ...] = Field(description="The graphs its citations are judged on.")
    retrieved: tuple[Subgraph, ...] = Field(description="What 'outside retrieved' is against.")
    names: dict[str, tuple[str, ...]] = Field(description="Written subjects -> KG entity ids.")
    retrieval: dict[str, Any] = Field(description="The record's 'retrieval': how each was found.")

    @classmethod
    def given(cls, graphs: Sequence[Subgraph]) -> FoundGraphs:
        """A dataset entry's own graphs: retrieved and scored against alike."""
        return cls(graphs=tuple(graphs), retrieved=tuple(graphs), names={}, retrieval={})

    @property
    def no_graphs(self) -> str | None:
        """Why there is no graph, when there is none."""
        return None if self.graphs else NO_ENTITY


async def graphs_of(record: AnswerRecord, own: OwnKG) -> FoundGraphs:
    """An answer's graphs: the retrieved set (its ``retrieved``, its ``entities``' graphs, or
    NER's) and the graphs of the entities its citations name, with where each came from."""
    sources: dict[str, list[str]] = {}
    info: dict[str, Any]
    if record.retrieved is not None:
        retrieved = own.retrieved[record.id]
        info = {"source": "retrieved", "facts": sum(len(g) for g in retrieved)}
        ids = [g.center.id for g in retrieved]
        found = [await own.graph(i) for i in dict.fromkeys(ids)]
    elif record.entities:
        ids = list(dict.fromkeys(own.entity_ids[text] for text in record.entities))
        found = [await own.graph(i) for i in ids]
        retrieved = tuple(found)
        info = {"source": "entities", "entities": list(record.entities)}
    else:
        result = await own.retriever(record.question or "", own.kg)
        found = list(result.graphs)
        retrieved = tuple(found)
        ids = list(result.qids)
        info = {"source": "ner", **result.ner_fields()}
    for centre in ids:
        sources.setdefault(centre, []).append(info["source"])
    names = await own.named(subject_references(record.answer or ""))
    cited = list(dict.fromkeys(i for ids_ in names.values() for i in ids_))
    have = {g.center.id for g in found}
    for centre in cited:
        sources.setdefault(centre, []).append("cited")
        if centre not in have:
            have.add(centre)
            found.append(await own.graph(centre))
    if info["source"] == "ner":
        retrieved = tuple(found)  # NER is a guess: cited entities count as retrieved too
    info |= {"qids": ids, "cited": cited, "graphs": sources}
    if not found:
        info["found_none"] = NO_ENTITY
    return FoundGraphs(graphs=tuple(found), retrieved=retrieved, names=names, retrieval=info)


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
