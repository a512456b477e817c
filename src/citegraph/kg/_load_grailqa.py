"""A mini Freebase KB for GrailQA's single-edge questions, as RDF quads.

Sources, recognised by extension:

* ``grailqa_tog_single_edge_triples.jsonl`` (required; one JSON object per line): ``qid``,
  ``question``, ``s_expression``, ``answer_class`` (type ids such as ``theater.play``) and
  ``triples`` (``subject_id``, ``subject``, ``relation``, ``relation_label``, ``object_id``,
  ``object``). Each triple becomes a fact; entity ids are Freebase mids (``m.0yrltsn``), relation
  ids the dotted Freebase names, with the file's labels. An object id such as
  ``120.0^^http://www.w3.org/2001/XMLSchema#float`` becomes a typed literal.
* ``grailqa.json`` (optional; GrailQA questions with ``graph_query``): the class of every entity
  node of a graph query types that entity, the class nodes' ``friendly_name`` labels the types,
  and ``topic_entity`` names label the topic entities.

Types are written as "instance of" (``wdt:P31``) in the metadata graph: each answer of a row
gets the row's ``answer_class``. The answer is the triple's subject, or its object when the
s-expression joins the reversed relation, ``(JOIN (R relation) topic)``.

Labels: a topic entity's ``topic_entity`` name, else the label the entity has as an answer
(Freebase's name), else its label as the topic (the question's mention, e.g. ``ps 3``); the
first one seen wins within a rank. Types without a friendly name are labelled from their id
(``theater.theater_production`` -> ``theater production``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from citegraph.errors import DataError
from citegraph.io import iter_jsonl, load_json
from citegraph.kg import _rdf as rdf
from citegraph.kg._load_pathquestion import entity_term, readable, relation_iri_node

#: Bump when the quads this reader produces change.
GRAILQA_LOADER_VERSION = 1

TRIPLES_FILE = "grailqa_tog_single_edge_triples.jsonl"
QUESTIONS_FILE = "grailqa.json"

_TOPIC, _ANSWER, _MENTION = 0, 1, 2  # label ranks, best first


class _Collected:
    """What the reader gathers besides the facts: labels and types."""

    def __init__(self) -> None:
        self.entities: dict[str, NamedNode] = {}
        self.labels: dict[str, tuple[int, str]] = {}
        self.relations: dict[str, tuple[NamedNode, str]] = {}
        self.types: dict[str, dict[str, None]] = {}
        self.type_labels: dict[str, str] = {}

    def label(self, entity: str, label: object, rank: int) -> None:
        if isinstance(label, str) and label.strip():
            old = self.labels.get(entity)
            if old is None or rank < old[0]:
                self.labels[entity] = (rank, label.strip())

    def add_type(self, entity: str, type_id: str) -> None:
        self.types.setdefault(entity, {})[type_id] = None


def type_label(type_id: str) -> str:
    """A readable label for a Freebase type id without a friendly name: its last segment."""
    return readable(type_id.rsplit(".", 1)[-1])


def _string(item: dict[str, Any], key: str, path: Path, line: int) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise DataError("expected a non-empty string", path=path, line=line, field=key)
    return value


def _value_term(text: str, path: Path, line: int, got: _Collected) -> NamedNode | Literal:
    if "^^" in text:  # a Freebase literal, e.g. 120.0^^http://www.w3.org/2001/XMLSchema#float
        value, _, datatype = text.partition("^^")
        try:
            return Literal(value, datatype=NamedNode(datatype))
        except (ValueError, TypeError) as exc:
            raise DataError(f"bad literal {text!r}", path=path, line=line) from exc
    if text not in got.entities:
        got.entities[text] = entity_term(text, path, line, "object_id")
    return got.entities[text]


def _triple_quads(path: Path, got: _Collected) -> Iterator[Quad]:
    for lineno, row in iter_jsonl(path):
        triples, classes = row.get("triples"), row.get("answer_class", [])
        if not isinstance(triples, list) or not all(isinstance(t, dict) for t in triples):
            raise DataError("expected a list of objects", path=path, line=lineno, field="triples")
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise DataError(
                "expected a list of type ids", path=path, line=lineno, field="answer_class"
            )
        s_expression = row.get("s_expression") or ""
        for triple in triples:
            subject = _string(triple, "subject_id", path, lineno)
            relation = _string(triple, "relation", path, lineno)
            obj = _string(triple, "object_id", path, lineno)
            if subject not in got.entities:
                got.entities[subject] = entity_term(subject, path, lineno, "subject_id")
            value = _value_term(obj, path, lineno, got)
            if relation not in got.relations:
                label = triple.get("relation_label")
                label = label if isinstance(label, str) and label else readable(relation)
                got.relations[relation] = (relation_iri_node(relation), label)
            yield Quad(got.entities[subject], got.relations[relation][0], value, rdf.FACT_GRAPH)
            reverse = f"(R {relation})" in str(s_expression)
            answer, topic = (obj, subject) if reverse else (subject, obj)
            answer_key, topic_key = ("object", "subject") if reverse else ("subject", "object")
            if answer in got.entities:  # not a literal
                got.label(answer, triple.get(answer_key), _ANSWER)
                for type_id in classes:
                    got.add_type(answer, type_id)
            if topic in got.entities:
                got.label(topic, triple.get(topic_key), _MENTION)


def _question_types(path: Path, got: _Collected) -> None:
    questions = load_json(path)
    if not isinstance(questions, list):
        raise DataError("expected a JSON list of GrailQA questions", path=path)
    for index, question in enumerate(questions):
        graph = question.get("graph_query") if isinstance(question, dict) else None
        nodes = graph.get("nodes") if isinstance(graph, dict) else None
        if not isinstance(nodes, list):
            raise DataError("expected graph_query.nodes", path=path, field=f"[{index}]")
        for node in nodes:
            if not isinstance(node, dict):
                continue
            kind, node_id, cls = node.get("node_type"), node.get("id"), node.get("class")
            name = node.get("friendly_name")
            if kind == "class" and isinstance(node_id, str) and isinstance(name, str) and name:
                got.type_labels.setdefault(node_id, name)
            if kind == "entity" and node_id in got.entities and isinstance(cls, str) and cls:
                got.add_type(node_id, cls)
        topics = question.get("topic_entity")
        for entity, name in topics.items() if isinstance(topics, dict) else ():
            if entity in got.entities:
                got.label(entity, name, _TOPIC)


def read_grailqa_kb(paths: Sequence[Path]) -> Iterator[Quad]:
    """Yield the quads of the GrailQA mini KB (see the module docstring).

    Raises:
        DataError: no ``.jsonl`` triples file among ``paths``, or a malformed line or item (the
            message names the file and line).
    """
    triple_files = [p for p in paths if p.suffix == ".jsonl"]
    if not triple_files:
        raise DataError(f"the GrailQA mini KB needs the triples file {TRIPLES_FILE}")
    got = _Collected()
    for path in triple_files:
        yield from _triple_quads(path, got)
    for path in paths:
        if path.suffix == ".json":
            _question_types(path, got)
    for relation in sorted(got.relations):
        node, label = got.relations[relation]
        yield from rdf.property_quads(node, label)
    if got.types:
        yield from rdf.property_quads(rdf.INSTANCE_OF, rdf.INSTANCE_OF_LABEL)
    type_nodes: dict[str, NamedNode] = {}
    for entity in sorted(got.types):
        for type_id in got.types[entity]:
            if type_id not in type_nodes:
                type_nodes[type_id] = entity_term(type_id, paths[0], None, "answer_class")
            yield Quad(got.entities[entity], rdf.INSTANCE_OF, type_nodes[type_id], rdf.META_GRAPH)
    for entity in sorted(got.entities):
        rank_label = got.labels.get(entity)
        yield from rdf.label_quads(got.entities[entity], rank_label[1] if rank_label else entity)
    for type_id in sorted(type_nodes):
        if type_id not in got.entities:
            label = got.type_labels.get(type_id) or type_label(type_id)
            yield from rdf.label_quads(type_nodes[type_id], label)
