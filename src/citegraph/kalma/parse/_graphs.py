"""Lookups over the retrieved subgraphs that the paper parser uses to resolve ambiguous brackets.

A bracket's subject may be written as a centre's full id (``Q206534``, an IRI), its short id
(``Entity.short_id``, else the one :func:`citegraph.kg.compact_ids` gives over the centres, e.g.
``ex:MarieCurie`` or ``MarieCurie``) or its local name when no other centre shares it, optionally
led by ``qid:``, ``id:`` or ``QID=``: :meth:`GraphIndex.subject_of` maps each to the full id.
A CURIE of a prefix the centres' short ids use (``ex:Warsaw`` when a centre is shown as
``ex:MarieCurie``) names the entity it expands to even when no graph is centred on it, as an IRI
written in full does: ``[ex:Berlin, located on river: Vistula]`` cites Berlin, never the centre
whose graph holds the fact.

Every comparison is made on whitespace-normalised text (runs of whitespace collapsed, ends
stripped), case kept. A fact that matches a graph fact up to whitespace is returned with the
graph's exact spelling, so the BioKaLMA value ``"Cao  Shishu"`` (two spaces) still matches.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

from citegraph.kg import ShortIds, Subgraph, Triple, iri_text, local_name_of

#: ``qid:``, ``id:`` or ``QID=`` before a subject id.
_ID_LEAD = re.compile(r"\s*(?:qid|id)\s*[:=]\s*", re.IGNORECASE)
_SUBJECT_COLON = re.compile(r"\s*:\s*")
#: The local part of a CURIE: a plain name (as :mod:`citegraph.kg`'s short ids write it).
_CURIE_LOCAL = re.compile(r"[^\W][\w\-.]*(?<!\.)")


#: Why a bracket's subject was not settled when no graph was given at all.
NO_GRAPHS = "no graphs were given"


@functools.lru_cache(maxsize=1 << 16)
def norm_ws(text: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends (remembered: a run
    normalises the same relation names and values for every answer)."""
    return " ".join(text.split())


class GraphIndex:
    """The facts, relation labels and centre names of a set of subgraphs."""

    def __init__(
        self,
        graphs: Sequence[Subgraph] = (),
        names: Mapping[str, Sequence[str]] | None = None,
        *,
        prefixes: Mapping[str, str] | None = None,
        no_graphs: str | None = None,
    ) -> None:
        self.no_graphs = no_graphs or NO_GRAPHS
        """Why no graph was given, for the issue of a bracket the graphs would have settled."""
        self._kg_names = {norm_ws(text): tuple(ids) for text, ids in (names or {}).items()}
        self._facts: dict[tuple[str, str, str], Triple] = {}
        self._rel_values: dict[tuple[str, str], set[str]] = {}
        self._relations: set[str] = set()
        self._names: dict[str, str] = {}
        self._aliases = _aliases(graphs)
        self._by_length = sorted(self._aliases, key=len, reverse=True)
        self._namespaces = {_namespace(g.center.id) for g in graphs if iri_text(g.center.id)}
        self._prefixes = {**(prefixes or {}), **_prefixes(graphs)}
        for graph in graphs:
            self._names.setdefault(graph.center.id, graph.center.name)
            for t in graph.triples:
                rel, value = norm_ws(t.relation), norm_ws(t.value)
                self._facts.setdefault((t.subject, rel, value), t)
                self._rel_values.setdefault((rel, value), set()).add(t.subject)
                self._relations.add(rel)

    @property
    def empty(self) -> bool:
        """Whether no graph was given."""
        return not self._names

    def subjects(self) -> list[str]:
        """The centre ids, in the order the graphs were given."""
        return list(self._names)

    def subject_of(self, text: str, *, any_iri: bool = True) -> str | None:
        """The full id a bracket piece names as its subject, or ``None``.

        ``text`` (optionally led by ``qid:``, ``id:`` or ``QID=``) must be, whole, a centre's
        full id, short id or unique local name, or an IRI written in full (``http(s)://...``,
        ``urn:...``, ``<...>``), which names itself: with ``any_iri`` any IRI, else only one in
        the namespace of a centre (the IRI up to its last ``/`` or ``#``), so a web address in a
        value is not taken for an entity. QIDs of the graphs are found too, but the parsers read
        QIDs with their own rules first.
        """
        bare = text.strip()
        lead = _ID_LEAD.match(bare)
        if lead is not None:
            bare = bare[lead.end() :].strip()
        if not bare:
            return None
        known = self._aliases.get(bare)
        if known is not None:
            return known
        iri = iri_text(bare) or self.expand_curie(bare)
        if iri is None:
            return None
        known = self._aliases.get(iri)
        if known is not None:
            return known
        return iri if any_iri or _namespace(iri) in self._namespaces else None

    def expand_curie(self, text: str) -> str | None:
        """The IRI a CURIE (``ex:Berlin``) of a prefix the centres' short ids use stands for."""
        name, colon, local = text.partition(":")
        namespace = self._prefixes.get(name) if colon else None
        if namespace is None or not _CURIE_LOCAL.fullmatch(local):
            return None
        return namespace + local

    def written_subject(self, text: str) -> str | None:
        """The subject a bracket's first piece writes as a CURIE the graphs cannot expand, or
        ``None``: ``ex: Marie Curie`` (a prefix the centres use, then a name: the centre of
        that name, else the text as written) or ``foaf:Person`` (another prefix: the CURIE as
        written, an entity outside the graphs). A piece whose part before the colon is a
        relation of the graphs is a fact, never a subject."""
        bare = text.strip()
        name, _, rest = bare.partition(":")
        name, rest = name.strip(), rest.strip()
        if not rest or ":" in rest or not _CURIE_LOCAL.fullmatch(name):
            return None
        if self.known_relation(name):
            return None
        if name in self._prefixes:
            named = self.subjects_called(rest)
            return named[0] if len(named) == 1 else f"{name}:{rest}"
        return bare if bare == f"{name}:{rest}" and _CURIE_LOCAL.fullmatch(rest) else None

    def subject_prefix(self, text: str) -> tuple[str, int] | None:
        """A centre named (as :meth:`subject_of` reads it, IRIs of no centre aside) at the start
        of ``text`` and followed by a colon and more text, as in ``MarieCurie: spouse: Pierre``:
        its full id and the offset where the rest starts; ``None`` otherwise."""
        lead = _ID_LEAD.match(text)
        start = lead.end() if lead is not None else len(text) - len(text.lstrip())
        for alias in self._by_length:
            if text.startswith(alias, start):
                sep = _SUBJECT_COLON.match(text, start + len(alias))
                if sep is not None and text[sep.end() :].strip():
                    return self._aliases[alias], sep.end()
        return None

    def name(self, subject: str) -> str | None:
        """The centre name of ``subject``, if one of the graphs is centred on it."""
        return self._names.get(subject) or None

    def fact(self, subject: str, relation: str, value: str) -> Triple | None:
        """The graph triple equal to ``(subject, relation, value)`` up to whitespace."""
        return self._facts.get((subject, norm_ws(relation), norm_ws(value)))

    def has(self, subject: str | None, relation: str, value: str) -> bool:
        """Whether the fact is in the graphs; with no subject, whether any subject has it."""
        if subject is None:
            return self.has_rel_value(relation, value)
        return (subject, norm_ws(relation), norm_ws(value)) in self._facts

    def has_rel_value(self, relation: str, value: str) -> bool:
        """Whether some subject has ``relation: value``."""
        return (norm_ws(relation), norm_ws(value)) in self._rel_values

    def holders(self, relation: str, value: str) -> set[str]:
        """The subjects that have ``relation: value``."""
        return self._rel_values.get((norm_ws(relation), norm_ws(value)), set())

    def known_relation(self, relation: str) -> bool:
        """Whether ``relation`` is a relation label of some graph."""
        return norm_ws(relation) in self._relations

    def subjects_called(self, label: str) -> list[str]:
        """The centre ids ``label`` may name: by their name, or by a local name or short id
        that several centres share (one that names a single centre is read by
        :meth:`subject_of`); else the centres a lookup of the label in the whole KG found
        (``names``: any label predicate, any case); else the centres whose name matches it
        case-insensitively."""
        wanted = norm_ws(label)
        exact = [
            qid
            for qid in self._names
            if norm_ws(self._names[qid]) == wanted or local_name_of(qid) == wanted
        ]
        if exact:
            return exact
        named = [qid for qid in self._kg_names.get(wanted, ()) if qid in self._names]
        if named:
            return named
        folded = wanted.casefold()
        return [qid for qid in self._names if norm_ws(self._names[qid]).casefold() == folded]


def _aliases(graphs: Sequence[Subgraph]) -> dict[str, str]:
    """Each way a centre may be named -> its full id; a name two centres share is left out."""
    centres = list(dict.fromkeys(g.center.id for g in graphs))
    table = ShortIds(centres)
    short = {g.center.id: g.center.short_id for g in graphs if g.center.short_id}
    found: dict[str, set[str]] = {}
    for centre in centres:
        names = {centre, short.get(centre) or table.short(centre)}
        local = local_name_of(centre)
        if local is not None and table.resolve(local) == centre:
            names.add(local)
        for name in names:
            found.setdefault(name, set()).add(centre)
    return {name: next(iter(ids)) for name, ids in found.items() if len(ids) == 1}


def _prefixes(graphs: Sequence[Subgraph]) -> dict[str, str]:
    """Prefix name -> namespace, read off the centres shown as CURIEs (``ex:MarieCurie`` for
    ``http://example.org/kg/MarieCurie`` declares ``ex``); a name used for two namespaces is
    left out."""
    found: dict[str, set[str]] = {}
    for graph in graphs:
        centre, short = graph.center.id, graph.center.short_id
        if not short or not iri_text(centre) or iri_text(short):
            continue
        name, colon, local = short.partition(":")
        if colon and name and local and centre.endswith(local):
            found.setdefault(name, set()).add(centre[: -len(local)])
    return {name: next(iter(spaces)) for name, spaces in found.items() if len(spaces) == 1}


def _namespace(iri: str) -> str:
    """The IRI up to and including its last ``/`` or ``#``."""
    return iri[: max(iri.rfind("/"), iri.rfind("#")) + 1]
