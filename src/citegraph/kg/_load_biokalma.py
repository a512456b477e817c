"""BioKaLMA's entity dicts as RDF quads.

Each file (``simple_question_graph.json``, ``complex_question_graph.json``) is a JSON list of
``[question, [entity, ...]]``; an entity is a dict of relation label -> value label plus ``qid``
and ``name``. The same person appears in many entries (and both files carry the same graphs), so
facts are deduplicated by ``(qid, relation, value)``. Empty values (``"date_of_death": ""`` for the
living) are not facts. ``name`` is kept as a fact as well as the label, because
:meth:`Subgraph.from_entity_dict` (and KaLMA's citations ``[Qxx, name: ...]``) treat it as one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from citegraph._json_file import load_json
from citegraph.errors import DataError
from citegraph.kg import _rdf as rdf

#: Bump when the quads this reader produces change.
BIOKALMA_LOADER_VERSION = 1


def read_biokalma(paths: Sequence[Path]) -> Iterator[Quad]:
    """Yield the quads of BioKaLMA question-graph files (deduplicated facts, labels, relations).

    Raises:
        DataError: a file is not a list of ``[question, [entity dict, ...]]``, an entity lacks a
            valid ``qid``, or a value is not a string; the message names the file and the JSON
            path of the offending item (``[12][1][0].qid``).
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
    if qid not in labelled and isinstance(name, str) and name:
        labelled.add(qid)
        yield from rdf.label_quads(node, name)
    for key, value in entity.items():
        if key == "qid" or value in ("", None):
            continue
        if not isinstance(value, str):
            raise DataError("a value must be a string", path=path, field=f"{where}.{key}")
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
