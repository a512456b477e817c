"""BioKaLMA's entity dicts as RDF quads.

Each file (``simple_question_graph.json``, ``complex_question_graph.json``) is a JSON list of
``[question, [entity, ...]]``; an entity is a dict of relation label -> value label plus ``qid``
and ``name``. A value may also be a JSON list of value labels (``kalma build`` writes one for a
relation with several values): each element is one fact. The same person appears in many entries
(and both files carry the same graphs), so facts are deduplicated by ``(qid, relation, value)``.
Empty values (``"date_of_death": ""`` for the living, and empty list elements) are not facts.
``name`` is kept as a fact as well as the label, because :meth:`Subgraph.from_entity_dict` (and
KaLMA's citations ``[Qxx, name: ...]``) treat it as one.

Files without list values load to exactly the quads of loader version 1, so the version (part of
the cache key) is unchanged: such files could not be loaded before, so no cache entry holds them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from citegraph.errors import DataError
from citegraph.io import load_json
from citegraph.kg import _rdf as rdf

#: Bump when the quads this reader produces change.
BIOKALMA_LOADER_VERSION = 1


def read_biokalma(paths: Sequence[Path]) -> Iterator[Quad]:
    """Yield the quads of BioKaLMA question-graph files (deduplicated facts, labels, relations).

    Raises:
        DataError: a file is not a list of ``[question, [entity dict, ...]]``, an entity lacks a
            valid ``qid``, or a value is neither a string nor a list of strings; the message names
            the file and the JSON path of the offending item (``[12][1][0].qid``).
    """
    seen: set[tuple[str, str, str]] = set()
    labelled: set[str] = set()
    relations: dict[str, NamedNode] = {}
    for path in paths:
        data = load_json(path)
        if not isinstance(data, list):
            raise DataError("expected a JSON list of [question, [entity, ...]] entries", path=path)
        for i, entry in enumerate(data):
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list)):
                raise DataError("expected [question, [entity, ...]]", path=path, field=f"[{i}]")
            for j, entity in enumerate(entry[1]):
                yield from _entity_quads(entity, path, f"[{i}][1][{j}]", seen, labelled, relations)


def _entity_quads(
    entity: object,
    path: Path,
    where: str,
    seen: set[tuple[str, str, str]],
    labelled: set[str],
    relations: dict[str, NamedNode],
) -> Iterator[Quad]:
    if not isinstance(entity, dict):
        raise DataError("an entity must be a JSON object", path=path, field=where)
    qid = entity.get("qid")
    if not isinstance(qid, str) or not rdf.is_qid(qid):
        raise DataError(f"missing or invalid qid {qid!r}", path=path, field=f"{where}.qid")
    node = NamedNode(rdf.WD + qid)
    name = entity.get("name")
    if isinstance(name, list):  # a list-valued name: the first non-empty element is the label
        name = next((n for n in name if isinstance(n, str) and n), None)
    if qid not in labelled and isinstance(name, str) and name:
        labelled.add(qid)
        yield from rdf.label_quads(node, name)
    for key, raw in entity.items():
        if key == "qid":
            continue
        for value in _values(raw, path, f"{where}.{key}"):
            if (qid, key, value) in seen:
                continue
            seen.add((qid, key, value))
            pred = relations.get(key)
            if pred is None:
                pred = rdf.relation_node(key)
                if pred is None:
                    raise DataError(f"unusable relation label {key!r}", path=path, field=where)
                relations[key] = pred
                yield from rdf.property_quads(pred, key)
            lit = rdf.text_literal(value)
            if lit is None:
                raise DataError("value is not valid text", path=path, field=f"{where}.{key}")
            yield Quad(node, pred, lit, rdf.FACT_GRAPH)


def _values(raw: object, path: Path, where: str) -> list[str]:
    """The value labels of one entity-dict value: a string, or a list of strings (empty skipped)."""
    if raw in ("", None):
        return []
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list):
        raise DataError("a value must be a string or a list of strings", path=path, field=where)
    out = []
    for k, item in enumerate(raw):
        if item in ("", None):
            continue
        if not isinstance(item, str):
            raise DataError("a list value must hold strings", path=path, field=f"{where}[{k}]")
        out.append(item)
    return out
