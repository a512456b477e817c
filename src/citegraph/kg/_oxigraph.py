"""The embedded knowledge graph: :class:`OxigraphKG`, a pyoxigraph store behind the KG protocol.

The RDF layout (facts in the default graph, labels and types in a metadata graph, Wikidata IRIs
when ids are known) is described in :mod:`citegraph.kg._rdf`. Lookups use pyoxigraph's indexed
``quads_for_pattern`` with terms built through the pyoxigraph API: no user string is ever put
into query text, so names such as ``x" } DROP ALL #`` are just labels that match nothing.

The async protocol methods delegate to synchronous twins (``find_entities_sync`` ...), which hot
paths and benchmarks may call directly: the store answers in microseconds and never blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, Store

from citegraph.errors import ConfigError, KGError, KGQueryError
from citegraph.kg import _rdf as rdf
from citegraph.kg._id_graph import IdGraph
from citegraph.kg._ondisk import (
    STORE_DIR,
    ProgressCallback,
    build_entry,
    count_facts,
    default_cache_dir,
    hash_sources,
    read_marker,
)
from citegraph.kg._oxigraph_view import StoreView
from citegraph.kg._rdf import FACT_GRAPH, META_GRAPH, Node
from citegraph.kg._short_ids import ShortIds, is_iri
from citegraph.kg._sources import source_loader
from citegraph.kg._types import Entity, Subgraph, Triple
from citegraph.kg._writer import triples_to_quads


class OxigraphKG(StoreView):
    """A knowledge graph in an embedded pyoxigraph store (in memory or a read-only disk cache).

    Build one with :meth:`in_memory`, :meth:`from_source` (cached on disk by content hash) or the
    loaders ``load_biokalma_kg`` / ``load_codex_kg`` / ``load_rdf_kg``.
    """

    def __init__(
        self,
        store: Store,
        *,
        source_hash: str | None = None,
        read_only: bool = False,
        imported: bool = True,
        path: Path | None = None,
        n_facts: int | None = None,
    ) -> None:
        super().__init__(store)
        self._source_hash = source_hash
        self.read_only = read_only
        #: ``False`` when the store was opened from a complete on-disk cache entry.
        self.imported = imported
        #: The cache entry directory, for stores opened from disk.
        self.path = path
        self._n_facts = n_facts
        self._ids: IdGraph | None = None
        self._prefixes: dict[str, str] | None = None
        self._given_prefixes: dict[str, str] = {}
        self._short_ids: ShortIds | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def in_memory(cls, quads: Iterable[Quad] = (), *, source_hash: str | None = None) -> OxigraphKG:
        """An in-memory store, bulk-loaded with ``quads`` (already in citegraph's RDF layout)."""
        store = Store()
        store.bulk_extend(quads)
        return cls(store, source_hash=source_hash)

    @classmethod
    def open(cls, entry: str | Path) -> OxigraphKG:
        """Open a complete on-disk cache entry (``<cache_dir>/<hash>/``) read-only."""
        entry = Path(entry)
        marker = read_marker(entry)
        if marker is None:
            raise KGError(f"{entry} is not a complete citegraph KG cache entry")
        store = Store.read_only(str(entry / STORE_DIR))
        return cls(
            store,
            source_hash=marker.get("source_hash"),
            read_only=True,
            imported=False,
            path=entry,
            n_facts=marker.get("n_facts"),
        )

    @classmethod
    def from_source(
        cls,
        kind: str,
        paths: Iterable[str | Path],
        *,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        progress: ProgressCallback | None = None,
        read_options: Mapping[str, Any] | None = None,
    ) -> OxigraphKG:
        """Load source files with a registered loader, through the on-disk cache.

        Args:
            kind: The loader: ``"biokalma"``, ``"codex"``, ``"pathquestion"``, ``"grailqa"`` or
                ``"rdf"`` (N-Triples, Turtle, ...); see :mod:`citegraph.kg._sources`.
            paths: The source files (see the loader for what each expects).
            cache_dir: Where cache entries live; default ``$CITEGRAPH_CACHE/kg`` or
                ``~/.cache/citegraph/kg``.
            use_cache: ``False`` loads into memory and writes nothing to disk.
            progress: Receives a message per stage.
            read_options: Keyword options of the loader's reader (``label_predicates`` for
                ``"rdf"``); part of the cache key when given.

        Returns:
            The store; ``imported`` says whether this call imported or reused a cache entry.

        Raises:
            ConfigError: an unknown ``kind``, or no files.
            DataError: a source file is malformed (the message names the file and line).
            DataNotFoundError: a source file is missing.
        """
        loader = source_loader(kind)
        files = [Path(p) for p in paths]
        if not files:
            raise ConfigError(f"no source files given for the {kind} loader")
        options = dict(read_options or {})
        source_hash = hash_sources(loader.name, loader.version, files, options)
        if not use_cache:
            if progress:
                progress(f"loading {kind} into memory ({len(files)} files)")
            return cls.in_memory(loader.read(files, **options), source_hash=source_hash)
        root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        entry = root / source_hash
        imported = False
        if read_marker(entry) is None:
            if progress:
                progress(f"importing {kind} ({len(files)} files) into {entry}")
            meta = {
                "loader": loader.name,
                "loader_version": loader.version,
                "files": [p.name for p in files],
            }
            if options:
                meta["options"] = options
            build_entry(root, source_hash, loader.read(files, **options), meta, progress)
            imported = True
        elif progress:
            progress(f"opening cached {kind} store {entry}")
        kg = cls.open(entry)
        kg.imported = imported
        return kg

    def to_memory(self) -> OxigraphKG:
        """A writable in-memory copy (use it to add or remove facts from a cached store)."""
        copy = OxigraphKG.in_memory(iter(self._store), source_hash=self._source_hash)
        copy._n_facts = self._n_facts
        copy._given_prefixes = dict(self._given_prefixes)
        return copy

    # ------------------------------------------------------------------ provenance and size
    @property
    def source_hash(self) -> str | None:
        """SHA-256 of the loaded sources (files, loader and schema versions), for run provenance.

        ``None`` for a store that was built by hand or changed by :meth:`add_triples`.
        """
        return self._source_hash

    @property
    def store(self) -> Store:
        """The underlying pyoxigraph store (for SPARQL with ``substitutions``)."""
        return self._store

    @property
    def ids(self) -> IdGraph:
        """Id-level reads: entities and relations by id, facts as id triples (CAQA's view)."""
        if self._ids is None:
            self._ids = IdGraph(self._store)
        return self._ids

    # ------------------------------------------------------------------ short ids
    @property
    def prefixes(self) -> dict[str, str]:
        """The prefixes the loaded RDF files declared, and those given with
        :meth:`add_prefixes`: name -> namespace IRI, sorted by name.

        A name the files declare for two different namespaces (in two files) is left out unless
        given. The files' prefixes are stored in the metadata graph, so a store opened from the
        on-disk cache has them too.
        """
        merged = {**self._declared_prefixes(), **self._given_prefixes}
        return dict(sorted(merged.items()))

    def _declared_prefixes(self) -> dict[str, str]:
        if self._prefixes is None:
            seen: dict[str, set[str]] = {}
            for quad in self._store.quads_for_pattern(None, rdf.PREFIX, None, META_GRAPH):
                if isinstance(quad.subject, NamedNode) and isinstance(quad.object, Literal):
                    seen.setdefault(quad.object.value, set()).add(quad.subject.value)
            self._prefixes = {
                name: next(iter(ns)) for name, ns in sorted(seen.items()) if len(ns) == 1
            }
        return self._prefixes

    def add_prefixes(self, prefixes: Mapping[str, str]) -> None:
        """Add prefixes (name -> namespace IRI) to those the files declare (``--prefix``):
        CURIEs of them are read back (:meth:`resolve_id`) and short ids use them. Not stored.

        Raises:
            ConfigError: a name the files declare for another namespace.
        """
        declared = self._declared_prefixes()
        for name, namespace in sorted(prefixes.items()):
            if declared.get(name, namespace) != namespace:
                raise ConfigError(
                    f"--prefix {name}={namespace}: the KG's files declare {name}: as "
                    f"<{declared[name]}>; give another name"
                )
        self._given_prefixes.update(prefixes)
        self._short_ids = None

    def _short_table(self) -> ShortIds:
        if self._short_ids is None:
            iris = [i for i in self.entity_ids_sync() if is_iri(i)]
            self._short_ids = ShortIds(iris, self.prefixes)
        return self._short_ids

    def short_id_of(self, entity_id: str) -> str:
        """How prompts and pages show ``entity_id``: a CURIE from the files' prefixes
        (``ex:MarieCurie``), else the local name when no other entity with facts shares it,
        else the id itself (QIDs and other non-IRI ids are always shown as they are).

        The same entity always gets the same short id in a given KG (see
        :mod:`citegraph.kg._short_ids`).
        """
        if not is_iri(entity_id):
            return entity_id
        return self._short_table().short(entity_id)

    def _short_id(self, entity_id: str) -> str | None:
        short = self.short_id_of(entity_id)
        return None if short == entity_id else short

    def resolve_id(self, text: str) -> str | None:
        """The id of the entity that ``text`` names: its id (QID, IRI, ``<IRI>``), its short
        id, a CURIE of a declared prefix, or its local name when unique. ``None`` when no entity
        with facts matches (labels are not looked at: use :meth:`find_entities`)."""
        text = text.strip()
        node = rdf.entity_node(text)
        if node is not None and not is_iri(text) and self._has_facts(node):
            return rdf.entity_id(node)
        return self._short_table().resolve(text)

    def _has_facts(self, node: Node) -> bool:
        pattern = self._store.quads_for_pattern(node, None, None, FACT_GRAPH)
        return next(iter(pattern), None) is not None

    def __len__(self) -> int:
        """Number of facts (default-graph triples)."""
        if self._n_facts is None:
            self._n_facts = count_facts(self._store)
        return self._n_facts

    def __contains__(self, triple: object) -> bool:
        return isinstance(triple, Triple) and self.has_fact_sync(triple)

    def __repr__(self) -> str:
        where = f"path={str(self.path)!r}" if self.path else "in memory"
        return f"OxigraphKG({len(self)} facts, {where})"

    # ------------------------------------------------------------------ synchronous queries
    def find_entities_sync(
        self, name: str, *, type: str | None = None, case_sensitive: bool = True, limit: int = 50
    ) -> list[Entity]:
        """Synchronous :meth:`find_entities`."""
        if limit <= 0:
            return []
        if case_sensitive:
            patterns = [
                (pred, lit)
                for pred in self._label_preds
                for lit in (rdf.text_literal(name, "en"), rdf.text_literal(name))
            ]
        else:
            folded = rdf.fold(name) if isinstance(name, str) else None
            patterns = [(rdf.FOLDED_LABEL, rdf.text_literal(folded) if folded else None)]
        found: dict[str, Node] = {}
        for pred, lit in patterns:
            if lit is None:
                continue
            for quad in self._store.quads_for_pattern(None, pred, lit, None):
                node = quad.subject
                if isinstance(node, NamedNode) and node in self._rel_label:
                    continue  # a property, not an entity
                found.setdefault(rdf.entity_id(node), node)  # type: ignore[arg-type]
        entities: list[Entity] = []
        for ent_id in sorted(found, key=_id_sort_key):
            types = self._types(found[ent_id])
            if type is not None and not _type_matches(types, type, case_sensitive):
                continue
            entities.append(self._entity(found[ent_id], types))
            if len(entities) >= limit:
                break
        return entities

    def entity_ids_sync(self) -> list[str]:
        """Ids of the entities that have at least one fact (the fact graph's subjects).

        Ordered as :meth:`find_entities` orders its results: QIDs by number, then other ids as
        strings. Entities that only appear as values, and properties, are not listed. The query
        text is constant.
        """
        solutions = self._store.query("SELECT DISTINCT ?s WHERE { ?s ?p ?o }")
        ids = {
            rdf.entity_id(solution["s"])
            for solution in solutions  # type: ignore[union-attr]
            if isinstance(solution["s"], NamedNode | BlankNode)
        }
        return sorted(ids, key=_id_sort_key)

    def entity_sync(self, entity_id: str) -> Entity | None:
        """The entity with this id, or ``None`` when the KG does not know it."""
        node = rdf.entity_node(entity_id)
        if node is None or not self._is_known(node):
            return None
        return self._entity(node)

    def subgraph_sync(self, entity_id: str) -> Subgraph:
        """Synchronous :meth:`subgraph`."""
        node = rdf.entity_node(entity_id)
        if node is None or not self._is_known(node):
            raise KGQueryError(f"unknown entity {entity_id!r}")
        return Subgraph(center=self._entity(node), triples=tuple(self._triples(node)))

    def facts_sync(self, entity_id: str, relation: str | None = None) -> list[Triple]:
        """Synchronous :meth:`facts`; an unknown entity has no facts."""
        node = rdf.entity_node(entity_id)
        return [] if node is None else self._triples(node, relation)

    def has_fact_sync(self, triple: Triple) -> bool:
        """Synchronous :meth:`has_fact`."""
        node = rdf.entity_node(triple.subject)
        if node is None:
            return False
        for quad in self._fact_quads(node, triple.relation):
            if self._value_text(quad.object) == triple.value:
                return True
        return False

    # ------------------------------------------------------------------ the async protocol
    async def find_entities(
        self, name: str, *, type: str | None = None, case_sensitive: bool = True, limit: int = 50
    ) -> list[Entity]:
        """Entities with an English or untagged label ``name``, of any label predicate (see
        :class:`citegraph.kg.KnowledgeGraph` and :mod:`citegraph.kg._rdf`).

        ``type`` is a type label (``"human"``) or id (``"Q5"``); with ``case_sensitive=False``
        the type label is also compared case-insensitively. Results are ordered by id (QIDs
        numerically), so the oldest Wikidata item comes first.
        """
        return self.find_entities_sync(name, type=type, case_sensitive=case_sensitive, limit=limit)

    async def subgraph(self, entity_id: str) -> Subgraph:
        """One-hop subgraph, triples sorted by (relation, value); raises KGQueryError if unknown."""
        return self.subgraph_sync(entity_id)

    async def has_fact(self, triple: Triple) -> bool:
        """Whether the KG holds ``triple`` (subject id, relation label, value label)."""
        return self.has_fact_sync(triple)

    async def facts(self, entity_id: str, relation: str | None = None) -> list[Triple]:
        """Facts of ``entity_id``, optionally only those of one relation label."""
        return self.facts_sync(entity_id, relation)

    async def aclose(self) -> None:
        """Nothing to close (an embedded store holds no connection); the store stays usable."""

    # ------------------------------------------------------------------ writing
    def add_triples(self, triples: Iterable[Triple]) -> int:
        """Add facts (with their labels and relation) and return how many were new.

        The subject's ``subject_label``, the relation label and the value label of an entity
        value (``value_id``) become ``rdfs:label`` when the term has none yet. Values without
        ``value_id`` are string literals. The store no longer matches its sources afterwards,
        so :attr:`source_hash` becomes ``None``.

        Raises:
            KGError: the store is a read-only cache (use :meth:`to_memory`), or an id cannot be
                an IRI.
        """
        if self.read_only:
            raise KGError("this KG is a read-only on-disk cache; call to_memory() to change it")
        quads, relations = triples_to_quads(self, triples)
        new_facts = sum(1 for q in quads if q.graph_name == FACT_GRAPH and q not in self._store)
        self._store.extend(quads)
        for node, label in relations:
            self._register(node, label)
        if self._n_facts is not None:
            self._n_facts += new_facts
        self._short_ids = None
        if new_facts:
            self._source_hash = None
        return new_facts


def _id_sort_key(entity_id: str) -> tuple[int, int, str]:
    if rdf.is_qid(entity_id):
        return (0, int(entity_id[1:]), "")
    return (1, 0, entity_id)


def _type_matches(types: list[tuple[str, str | None]], wanted: str, case_sensitive: bool) -> bool:
    if case_sensitive:
        return any(wanted in (label, type_id) for label, type_id in types)
    folded = rdf.fold(wanted)
    return any(wanted == type_id or rdf.fold(label) == folded for label, type_id in types)
