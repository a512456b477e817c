"""RDF files (N-Triples, Turtle, N-Quads, TriG, RDF/XML) as citegraph quads.

The format comes from the file extension (``.nt``, ``.ttl``, ``.nq``, ``.trig``, ``.rdf``).
Every triple is a fact except those that describe terms: ``rdfs:label``, ``schema:description``
and ``?p rdf:type rdf:Property`` (or an OWL / Wikibase property class), which go to the metadata
graph. Named graphs in the input are merged. Each English or untagged label also gets its folded
form; each predicate used by a fact is marked as a property and labelled, in this order of
preference: its own ``rdfs:label``, the label of the Wikidata property entity (``wd:P19`` for
``wdt:P19``), the last segment of its IRI. The prefixes each file declares (Turtle ``@prefix`` /
``PREFIX``, TriG, RDF/XML ``xmlns``) are stored too (:func:`citegraph.kg._rdf.prefix_quads`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat, parse

from citegraph.errors import DataError
from citegraph.kg import _rdf as rdf

#: Bump when the quads this reader produces change (2: the files' prefixes are stored).
RDF_LOADER_VERSION = 2

_BOM = b"\xef\xbb\xbf"
_NODES = (NamedNode, BlankNode)
_TERMS = (NamedNode, BlankNode, Literal)


def rdf_format(path: Path) -> RdfFormat:
    """The RDF format of a file from its extension.

    Raises:
        DataError: the extension is not an RDF format pyoxigraph reads.
    """
    fmt = RdfFormat.from_extension(path.suffix.lstrip(".").lower()) if path.suffix else None
    if fmt is None:
        raise DataError("unknown RDF format (use .nt, .ttl, .nq, .trig or .rdf)", path=path)
    return fmt


def read_rdf(paths: Sequence[Path]) -> Iterator[Quad]:
    """Yield citegraph quads for RDF files.

    Raises:
        DataError: a file does not parse; the message names the file and line.
    """
    predicates: dict[NamedNode, None] = {}
    labelled: set[NamedNode] = set()
    wikidata_prop_labels: dict[str, str] = {}
    for path in paths:
        fmt = rdf_format(path)
        with path.open("rb") as handle:
            if handle.read(len(_BOM)) != _BOM:  # editors may start a file with a UTF-8 BOM
                handle.seek(0)
            parser = parse(handle, format=fmt, rename_blank_nodes=False)
            yield from _citegraph_quads(parser, path, predicates, labelled, wikidata_prop_labels)
            yield from rdf.prefix_quads(dict(parser.prefixes))
    for pred in predicates:
        quads = rdf.property_quads(pred, _property_label(pred, wikidata_prop_labels))
        yield from quads[:1] if pred in labelled else quads


def _citegraph_quads(
    parser: Iterable[Quad],
    path: Path,
    predicates: dict[NamedNode, None],
    labelled: set[NamedNode],
    wikidata_prop_labels: dict[str, str],
) -> Iterator[Quad]:
    """The quads of one file (see :func:`read_rdf`), noting predicates and labels seen."""
    try:
        for quad in parser:
            subject, pred, obj = quad.subject, quad.predicate, quad.object
            if not isinstance(subject, _NODES) or not isinstance(obj, _TERMS):
                continue  # RDF-star quoted triples are not facts citegraph can cite
            if pred in rdf.META_PREDICATES or (
                pred == rdf.RDF_TYPE and obj in rdf.PROPERTY_CLASSES
            ):
                yield Quad(subject, pred, obj, rdf.META_GRAPH)
                if (
                    pred == rdf.RDFS_LABEL
                    and isinstance(obj, Literal)
                    and rdf.is_label_literal(obj)
                ):
                    yield from _folded(subject, obj)
                    if isinstance(subject, NamedNode):
                        labelled.add(subject)
                        _remember_property_label(subject, obj, wikidata_prop_labels)
                continue
            predicates.setdefault(pred)
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
