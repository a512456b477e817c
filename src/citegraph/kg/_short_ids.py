"""Short ids: how an entity id is shown to a model and a reader, and how it is read back.

Entity ids stay what they are everywhere citegraph stores or compares them: a Wikidata QID
(``Q206534``) or, for an entity of an RDF file, its full IRI (``http://example.org/kg/Curie``).
A *short id* is only a presentation layer, for prompts and pages:

1. a QID, a blank node (``_:b0``) or an id that is not an IRI (``e1``) is its own short id;
2. an IRI under a declared namespace is a CURIE, ``ex:Curie``: the longest namespace wins (on
   a tie, the alphabetically first prefix name); the empty prefix (``:``) is not used, and the
   local part must be a plain name (letters, digits, ``_``, ``-``, ``.``, not ending in ``.``);
3. else the IRI's *local name* (the text after its last ``#`` or ``/``), when it is a plain name,
   is not a QID, and no other IRI among the ids has the same local name;
4. else the full IRI.

The short id of an id depends only on the set of ids and the prefixes, so it is stable for a
given KG (the embedded store computes it over all the entities that have facts). Reading back
(:meth:`ShortIds.resolve`) accepts the full id, the short id, a CURIE of any declared prefix
and a unique local name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from citegraph.kg._rdf import is_qid
from citegraph.kg._types import Subgraph

#: Prefixes a SPARQL endpoint's ids are shortened with (``wd:`` items are already QIDs).
WELL_KNOWN_PREFIXES: Mapping[str, str] = {
    "wd": "http://www.wikidata.org/entity/",
    "dbr": "http://dbpedia.org/resource/",
    "schema": "http://schema.org/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "owl": "http://www.w3.org/2002/07/owl#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
}

_NAME = re.compile(r"[^\W][\w\-.]*(?<!\.)")
#: An IRI as an answer may write one: ``scheme://...``, ``urn:...``, or ``<...>``; no spaces.
_IRI = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]*:[^\s<>]+)>|([A-Za-z][A-Za-z0-9+.\-]*://\S+|urn:\S+)")


def is_iri(text: str) -> bool:
    """Whether ``text`` is an IRI written out in full (``http(s)://...``, ``urn:...``)."""
    return _IRI.fullmatch(text) is not None and not text.startswith("<")


def iri_text(text: str) -> str | None:
    """The IRI in ``text`` when all of it is one (``<...>`` angle brackets dropped), else None."""
    match = _IRI.fullmatch(text.strip())
    if match is None:
        return None
    return match.group(1) or match.group(2)


def local_name_of(entity_id: str) -> str | None:
    """The local name of an IRI id (text after the last ``#`` or ``/``) when it is a plain name."""
    if not is_iri(entity_id):
        return None
    cut = max(entity_id.rfind("#"), entity_id.rfind("/"))
    local = entity_id[cut + 1 :]
    if not _NAME.fullmatch(local) or is_qid(local.upper()):
        return None
    return local


def _curie(entity_id: str, namespaces: Sequence[tuple[str, str]]) -> str | None:
    for namespace, name in namespaces:
        if entity_id.startswith(namespace):
            local = entity_id[len(namespace) :]
            if _NAME.fullmatch(local):
                return f"{name}:{local}"
    return None


class ShortIds:
    """The short id of every id of a set, and the way back (see the module docstring).

    Args:
        ids: The entity ids (full ids: QIDs, IRIs, other strings).
        prefixes: Prefix name -> namespace IRI, e.g. ``{"ex": "http://example.org/kg/"}``.
    """

    def __init__(self, ids: Iterable[str], prefixes: Mapping[str, str] | None = None) -> None:
        self.prefixes: dict[str, str] = {
            name: ns for name, ns in sorted((prefixes or {}).items()) if name and ns
        }
        # Longest namespace first; on a tie the alphabetically first name (sorted above).
        self._namespaces = sorted(
            ((ns, name) for name, ns in self.prefixes.items()), key=lambda p: -len(p[0])
        )
        self.ids: list[str] = list(dict.fromkeys(ids))
        id_set = set(self.ids)
        locals_ = {i: local_name_of(i) for i in self.ids}
        counts = Counter(name for name in locals_.values() if name is not None)
        self._unique_local: dict[str, str] = {
            name: i for i, name in locals_.items() if name is not None and counts[name] == 1
        }
        self._short: dict[str, str] = {}
        for entity_id in self.ids:
            short = entity_id
            if is_iri(entity_id):
                curie = _curie(entity_id, self._namespaces)
                local = locals_[entity_id]
                if curie is not None:
                    short = curie
                elif local is not None and local in self._unique_local and local not in id_set:
                    short = local
            self._short[entity_id] = short
        self._by_short = {short: i for i, short in self._short.items()}

    def short(self, entity_id: str) -> str:
        """The short id of ``entity_id``; an id outside the set gets its CURIE or itself."""
        found = self._short.get(entity_id)
        if found is not None:
            return found
        return (_curie(entity_id, self._namespaces) if is_iri(entity_id) else None) or entity_id

    def mapping(self) -> dict[str, str]:
        """Full id -> short id, for every id of the set (QIDs map to themselves)."""
        return dict(self._short)

    def resolve(self, text: str) -> str | None:
        """The full id that ``text`` names: the id itself, its short id, a CURIE of a declared
        prefix, or a unique local name; ``None`` when it names no id of the set."""
        text = text.strip()
        if text in self._short:
            return text
        if text in self._by_short:
            return self._by_short[text]
        iri = iri_text(text)
        if iri is not None and iri in self._short:
            return iri
        name, colon, local = text.partition(":")
        if colon and name in self.prefixes and _NAME.fullmatch(local):
            expanded = self.prefixes[name] + local
            if expanded in self._short:
                return expanded
        return self._unique_local.get(text)


def compact_ids(ids: Iterable[str], prefixes: Mapping[str, str] | None = None) -> dict[str, str]:
    """Full id -> short id for ``ids`` (CURIE, unique local name or the id itself).

    Usable without a KG, e.g. for graphs read from a dataset file whose ``qid`` fields are IRIs.

    Example:
        >>> compact_ids(["http://example.org/kg/MarieCurie", "Q5"])
        {'http://example.org/kg/MarieCurie': 'MarieCurie', 'Q5': 'Q5'}
        >>> compact_ids(["http://example.org/kg/MarieCurie"], {"ex": "http://example.org/kg/"})
        {'http://example.org/kg/MarieCurie': 'ex:MarieCurie'}
    """
    return ShortIds(ids, prefixes).mapping()


def with_short_ids(
    graphs: Sequence[Subgraph], prefixes: Mapping[str, str] | None = None
) -> list[Subgraph]:
    """The graphs with ``center.short_id`` filled where it is missing and differs from the id.

    Short ids come from :func:`compact_ids` over the centres of ``graphs``; centres that already
    carry one keep it.
    """
    table = ShortIds([g.center.id for g in graphs], prefixes)
    out: list[Subgraph] = []
    for graph in graphs:
        short = table.short(graph.center.id)
        if graph.center.short_id is not None or short == graph.center.id:
            out.append(graph)
            continue
        center = graph.center.model_copy(update={"short_id": short})
        out.append(graph.model_copy(update={"center": center}))
    return out
