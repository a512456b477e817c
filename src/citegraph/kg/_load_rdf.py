"""RDF files (N-Triples, Turtle, N-Quads, TriG, RDF/XML, JSON-LD) as citegraph quads.

The format comes from the file extension (:data:`RDF_FORMATS`: ``.nt``, ``.ttl``, ``.nq``,
``.trig``, ``.rdf`` / ``.xml`` / ``.owl`` for RDF/XML, ``.jsonld``).
Every triple is a fact except those that describe terms: the label predicates (``rdfs:label``,
``skos:prefLabel``, ``skos:altLabel``, ``schema:name``, ``foaf:name`` and those the caller gives,
:func:`citegraph.kg._rdf.label_predicates`), ``schema:description`` and ``?p rdf:type
rdf:Property`` (or an OWL / Wikibase property class), which go to the metadata graph with the
order of the label predicates. Named graphs in the input are merged. Each English or untagged
label of any label predicate also gets its folded form; each predicate used by a fact is marked
as a property and labelled, in this order of preference: its own labels (as an entity's), the
label of the Wikidata property entity (``wd:P19`` for ``wdt:P19``), the last segment of its IRI.
The prefixes each file declares (Turtle ``@prefix`` / ``PREFIX``, TriG, JSON-LD ``@context``
terms) are stored too (:func:`citegraph.kg._rdf.prefix_quads`); N-Triples and N-Quads declare
none, and pyoxigraph does not report RDF/XML's ``xmlns`` ones (give them with ``--prefix``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat, parse

from citegraph.errors import DataError
from citegraph.kg import _rdf as rdf

#: Bump when the quads this reader produces change (2: the files' prefixes are stored; 3: the
#: label predicates beyond ``rdfs:label``, and their order, are stored).
RDF_LOADER_VERSION = 3

#: The file extensions read, and their formats.
RDF_FORMATS: dict[str, RdfFormat] = {
    ".nt": RdfFormat.N_TRIPLES,
    ".ttl": RdfFormat.TURTLE,
    ".nq": RdfFormat.N_QUADS,
    ".trig": RdfFormat.TRIG,
    ".rdf": RdfFormat.RDF_XML,
    ".xml": RdfFormat.RDF_XML,
    ".owl": RdfFormat.RDF_XML,
    ".jsonld": RdfFormat.JSON_LD,
}
#: The extensions as an error message lists them.
RDF_EXTENSIONS_TEXT = ", ".join(RDF_FORMATS)

_BOM = b"\xef\xbb\xbf"
_NODES = (NamedNode, BlankNode)
_TERMS = (NamedNode, BlankNode, Literal)


def rdf_format(path: Path) -> RdfFormat:
    """The RDF format of a file from its extension (:data:`RDF_FORMATS`, any case).

    Raises:
        DataError: the extension is not one of them.
    """
    fmt = RDF_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(f"unknown RDF format (use {RDF_EXTENSIONS_TEXT})", path=path)
    return fmt


def read_rdf(paths: Sequence[Path], label_predicates: Sequence[str] = ()) -> Iterator[Quad]:
    """Yield citegraph quads for RDF files.

    Args:
        paths: The files.
        label_predicates: IRIs of more label predicates, preferred to the default ones for
            display names (:func:`citegraph.kg._rdf.label_predicates`).

    Raises:
        DataError: a file does not parse; the message names the file and line.
        ValueError: a label predicate is not an IRI.
    """
    labels = rdf.label_predicates(label_predicates)
    yield from rdf.label_predicate_quads(labels)
    reading = _Reading(frozenset(labels))
    for path in paths:
        fmt = rdf_format(path)
        with path.open("rb") as handle:
            if handle.read(len(_BOM)) != _BOM:  # editors may start a file with a UTF-8 BOM
                handle.seek(0)
            parser = parse(handle, format=fmt, rename_blank_nodes=False)
            yield from _citegraph_quads(parser, path, reading)
            yield from rdf.prefix_quads(dict(parser.prefixes))
    for pred in reading.predicates:
        quads = rdf.property_quads(pred, _property_label(pred, reading.wikidata_prop_labels))
        yield from quads[:1] if pred in reading.labelled else quads


@dataclass
class _Reading:
    """What :func:`read_rdf` notes across files: the label predicates, the predicates of
    facts, the terms with a label, and the labels of Wikidata property entities."""

    labels: frozenset[NamedNode]
    predicates: dict[NamedNode, None] = field(default_factory=dict)
    labelled: set[NamedNode] = field(default_factory=set)
    wikidata_prop_labels: dict[str, str] = field(default_factory=dict)


def _citegraph_quads(parser: Iterable[Quad], path: Path, reading: _Reading) -> Iterator[Quad]:
    """The quads of one file (see :func:`read_rdf`), noting predicates and labels seen."""
    try:
        for quad in parser:
            subject, pred, obj = quad.subject, quad.predicate, quad.object
            if not isinstance(subject, _NODES) or not isinstance(obj, _TERMS):
                continue  # RDF-star quoted triples are not facts citegraph can cite
            is_label = pred in reading.labels
            if (
                is_label
                or pred in rdf.META_PREDICATES
                or (pred == rdf.RDF_TYPE and obj in rdf.PROPERTY_CLASSES)
            ):
                yield Quad(subject, pred, obj, rdf.META_GRAPH)
                if is_label and isinstance(obj, Literal) and rdf.is_label_literal(obj):
                    yield from _folded(subject, obj)
                    if isinstance(subject, NamedNode):
                        reading.labelled.add(subject)
                        _remember_property_label(subject, obj, reading.wikidata_prop_labels)
                continue
            reading.predicates.setdefault(pred)
            yield Quad(subject, pred, obj, rdf.FACT_GRAPH)
    except SyntaxError as exc:
        raise DataError(f"RDF syntax error: {exc.msg}", path=path, line=exc.lineno) from exc


def _folded(subject: NamedNode | BlankNode, label: Literal) -> Iterator[Quad]:
    folded = rdf.text_literal(rdf.fold(label.value))
    if folded is not None:
        yield Quad(subject, rdf.FOLDED_LABEL, folded, rdf.META_GRAPH)


def _remember_property_label(subject: NamedNode, obj: Literal, out: dict[str, str]) -> None:
    iri = subject.value
    if iri.startswith(rdf.WD + "P") and (iri not in out or obj.language == "en"):
        out[iri] = obj.value


def _property_label(pred: NamedNode, wd_labels: dict[str, str]) -> str:
    if pred.value.startswith(rdf.WDT):
        entity_iri = rdf.WD + pred.value[len(rdf.WDT) :]
        if entity_iri in wd_labels:
            return wd_labels[entity_iri]
    return rdf.local_name(pred)
