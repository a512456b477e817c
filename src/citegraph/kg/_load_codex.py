"""CoDEx-S (a Wikidata subset) as RDF quads.

Files are recognised by name:

* ``triples/<split>.txt``: ``head QID \\t relation PID \\t tail QID`` -> facts
  ``wd:head wdt:PID wd:tail`` (the default graph; splits are merged, duplicates collapse).
* ``entity2name.txt``: ``QID \\t name`` -> ``rdfs:label`` and the folded label.
* ``entity2des.txt``: ``QID \\t description`` -> ``schema:description`` (optional).
* ``relations_en.json``: ``{PID: {"label", "description"}}`` -> property labels.
* ``entity2types_all_codex.json`` (``{QID: [type QID, ...]}``, all of CoDEx) with
  ``types_en.json`` (``{type QID: {"label", ...}}``) -> ``wd:entity wdt:P31 wd:type`` in the
  metadata graph, for the entities of ``entity2name.txt`` only. CoDEx's splits contain no P31
  facts, so types describe entities without changing the fact count. Optional (both or none).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from citegraph.errors import DataError
from citegraph.io import load_json
from citegraph.kg import _rdf as rdf

#: Bump when the quads this reader produces change.
CODEX_LOADER_VERSION = 1

NAMES = "entity2name.txt"
DESCRIPTIONS = "entity2des.txt"
RELATIONS = "relations_en.json"
TYPE_LABELS = "types_en.json"
ENTITY_TYPES = "entity2types_all_codex.json"
METADATA_FILES = frozenset({NAMES, DESCRIPTIONS, RELATIONS, TYPE_LABELS, ENTITY_TYPES})


def _qid(text: str, path: Path, line: int | None, field: str) -> NamedNode:
    if not rdf.is_qid(text):
        raise DataError(f"expected a Wikidata QID, got {text!r}", path=path, line=line, field=field)
    return NamedNode(rdf.WD + text)


def _two_columns(path: Path) -> Iterator[tuple[int, str, str]]:
    with path.open(encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            if not line:
                continue
            key, sep, value = line.partition("\t")
            if not sep or not value:
                raise DataError("expected 'QID<TAB>text'", path=path, line=lineno)
            yield lineno, key, value


def _label_of(item: object, path: Path, key: str) -> str:
    if not isinstance(item, dict) or not isinstance(item.get("label"), str):
        raise DataError("expected an object with a string 'label'", path=path, field=key)
    return item["label"]


def read_codex(paths: Sequence[Path]) -> Iterator[Quad]:
    """Yield the quads of CoDEx-S files (see the module docstring for which file is which).

    Raises:
        DataError: a malformed line (the message names the file and line) or JSON item, or
            ``entity2name.txt`` / ``relations_en.json`` missing from ``paths``.
    """
    by_name = {p.name: p for p in paths if p.name in METADATA_FILES}
    for required in (NAMES, RELATIONS):
        if required not in by_name:
            raise DataError(f"CoDEx sources must include {required}")
    relations = load_json(by_name[RELATIONS])
    if not isinstance(relations, dict):
        raise DataError("expected an object PID -> {label, description}", path=by_name[RELATIONS])
    known_props: set[str] = set()
    for pid, item in relations.items():
        pred = rdf.relation_node(_label_of(item, by_name[RELATIONS], pid), pid)
        if pred is None:
            raise DataError(f"invalid property id {pid!r}", path=by_name[RELATIONS], field=pid)
        known_props.add(pid)
        yield from rdf.property_quads(pred, item["label"])
        if isinstance(item.get("description"), str) and (
            q := rdf.description_quad(pred, item["description"])
        ):
            yield q
    names: set[str] = set()
    for lineno, qid, name in _two_columns(by_name[NAMES]):
        names.add(qid)
        yield from rdf.label_quads(_qid(qid, by_name[NAMES], lineno, "QID"), name)
    if DESCRIPTIONS in by_name:
        for lineno, qid, text in _two_columns(by_name[DESCRIPTIONS]):
            quad = rdf.description_quad(_qid(qid, by_name[DESCRIPTIONS], lineno, "QID"), text)
            if quad is not None:
                yield quad
    yield from _type_quads(by_name, names, "P31" in known_props)
    for path in paths:
        if path.name not in METADATA_FILES:
            yield from _fact_quads(path, known_props)


def _type_quads(by_name: dict[str, Path], names: set[str], has_p31: bool) -> Iterator[Quad]:
    if (TYPE_LABELS in by_name) != (ENTITY_TYPES in by_name):
        raise DataError(f"CoDEx entity types need both {TYPE_LABELS} and {ENTITY_TYPES}")
    if ENTITY_TYPES not in by_name:
        return
    type_labels = load_json(by_name[TYPE_LABELS])
    entity_types = load_json(by_name[ENTITY_TYPES])
    if not isinstance(type_labels, dict) or not isinstance(entity_types, dict):
        raise DataError("expected a JSON object", path=by_name[ENTITY_TYPES])
    if not has_p31:
        yield from rdf.property_quads(rdf.INSTANCE_OF, rdf.INSTANCE_OF_LABEL)
    labelled: set[str] = set()
    for qid in sorted(names):
        types = entity_types.get(qid, [])
        if not isinstance(types, list):
            raise DataError("expected a list of type QIDs", path=by_name[ENTITY_TYPES], field=qid)
        node = _qid(qid, by_name[ENTITY_TYPES], None, qid)
        for type_qid in types:
            type_node = _qid(str(type_qid), by_name[ENTITY_TYPES], None, qid)
            yield Quad(node, rdf.INSTANCE_OF, type_node, rdf.META_GRAPH)
            if type_qid not in names and type_qid not in labelled and type_qid in type_labels:
                labelled.add(type_qid)
                label = _label_of(type_labels[type_qid], by_name[TYPE_LABELS], type_qid)
                yield from rdf.label_quads(type_node, label)


def _fact_quads(path: Path, known_props: set[str]) -> Iterator[Quad]:
    with path.open(encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                msg = f"expected 'head<TAB>relation<TAB>tail', got {len(parts)} columns"
                raise DataError(msg, path=path, line=lineno)
            head, pid, tail = parts
            pred = rdf.relation_node(pid, pid)
            if pred is None or not pid.startswith("P"):
                raise DataError(f"invalid property id {pid!r}", path=path, line=lineno)
            if pid not in known_props:  # a relation without a label: its id is its label
                known_props.add(pid)
                yield from rdf.property_quads(pred, pid)
            yield Quad(
                _qid(head, path, lineno, "head"), pred, _qid(tail, path, lineno, "tail"),
                rdf.FACT_GRAPH,
            )  # fmt: skip
