"""Open a knowledge graph from a short spec, as the CLI's ``--kg`` takes it.

Specs:

- ``biokalma`` (default): the embedded BioKaLMA biography KG, built from the dataset files.
- ``codex-s``: CoDEx-S (Wikidata subset) with names, descriptions and types.
- ``pathquestion-2h``, ``pathquestion-3h``, ``pathquestion-pql2``, ``pathquestion-pql3``: a
  PathQuestion KB (Freebase subsets; ids are the KB's names).
- ``grailqa-mini``: the Freebase facts of GrailQA's single-edge questions, with types.
- ``wikidata``, ``sparql+https://query.wikidata.org/sparql``: the Wikidata Query Service (one
  request at a time; a contact for the User-Agent is required: ``--contact`` or
  ``$CITEGRAPH_CONTACT``). Relation names follow BioKaLMA's (``date_of_birth``...).
- ``qlever``: QLever's Wikidata endpoint.
- ``sparql+<url>``: any other SPARQL 1.1 endpoint serving a plain RDF graph (your own KG), read
  as an RDF file would be (:class:`~citegraph.kg._sparql_rdf.SparqlRdfKG`: the same label
  predicates, full-IRI ids shown as CURIEs of the prefixes given).
- ``wikidata+sparql+<url>``: an endpoint holding a Wikidata dump (e.g. a Virtuoso), read the
  Wikidata way (``wd:Q…`` items, ``wdt:P…`` claims, ``@en`` labels) by
  :class:`~citegraph.kg.SparqlEndpointKG`.
- a path to RDF files (``.nt``, ``.ttl``, ``.nq``, ``.trig``, ``.rdf`` / ``.xml`` / ``.owl``,
  ``.jsonld``), several joined by ``,``.

How a spec is opened beyond the spec itself is :class:`KGOptions`: more label predicates and
prefixes (your own KG: RDF files and ``sparql+<url>``), and the cache of a remote endpoint's
answers. By default an endpoint's answers are cached for the run only (in memory: the KG object
of the run holds them, and they are gone when it is closed), so a KG changed behind its endpoint
is read as it is now by the next run. ``kg_cache="persist"`` keeps them in
``$CITEGRAPH_CACHE/sparql.sqlite`` for later runs, each for ``kg_cache_max_age`` seconds
(default one day); ``"off"`` (the CLI's ``--no-cache``) caches nothing. An embedded store's
on-disk copy is not such a cache: it is keyed by the SHA-256 of its files (and of the label
predicates), so a changed file is a new store.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pyoxigraph import NamedNode

from citegraph.errors import ConfigError
from citegraph.io import AsyncClosing, SQLiteCache, cache_root, resolve_data_dir
from citegraph.kg._load_pathquestion import PATHQUESTION_KBS
from citegraph.kg._load_rdf import RDF_EXTENSIONS_TEXT, RDF_FORMATS
from citegraph.kg._loaders import (
    load_biokalma_kg,
    load_codex_kg,
    load_grailqa_kg,
    load_pathquestion_kg,
    load_rdf_kg,
)
from citegraph.kg._protocol import KnowledgeGraph
from citegraph.kg._short_ids import is_iri
from citegraph.kg._sparql_client import SparqlClient
from citegraph.kg._sparql_config import (
    QLEVER_WIKIDATA_URL,
    WIKIDATA_URL,
    SparqlClientConfig,
    qlever_wikidata,
    virtuoso,
    wikidata,
)
from citegraph.kg._sparql_kg import KALMA_RELATION_NAMES, SparqlEndpointKG
from citegraph.kg._sparql_rdf import SparqlRdfKG

CONTACT_ENV = "CITEGRAPH_CONTACT"
#: Spec prefix of an endpoint read as Wikidata (``wikidata+sparql+<url>``).
WIKIDATA_SHAPED = "wikidata+sparql+"
#: Seconds a persisted SPARQL answer is used when ``kg_cache_max_age`` is not given (one day).
DEFAULT_KG_CACHE_MAX_AGE = 86400.0

KGCacheMode = Literal["run", "persist", "off"]
_PREFIX_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-.]*(?<!\.)")


class KGOptions(BaseModel):
    """How a KG spec is opened beyond the spec itself (the CLI's ``--label-predicate``,
    ``--prefix``, ``--kg-cache``, ``--kg-cache-max-age``; ``--no-cache`` is ``kg_cache="off"``).

    ``label_predicates`` and ``prefixes`` change what is read (part of a run's identity when
    given); the cache settings only how fresh the answers are (never part of it). The kalma
    configs carry these fields (they inherit this class) and hand them over with
    :meth:`kg_options`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    label_predicates: tuple[str, ...] = Field(
        default=(),
        description="IRI of another predicate whose literals name entities (repeatable; your "
        "own KG). Read before rdfs:label, skos:prefLabel, skos:altLabel, schema:name and "
        "foaf:name, which are always read: the first with an English or untagged label gives an "
        "entity's name, and every one is matched by label lookups. Its triples are names, not "
        "facts.",
        json_schema_extra={"flag": "--label-predicate", "metavar": "IRI"},
    )
    prefixes: dict[str, str] = Field(
        default_factory=dict,
        description="NAME=IRI (repeatable; your own KG): CURIEs of it (geo:Warsaw) in citations, "
        "gold and 'entities' are read as IRIs, and ids are shown with it, over sparql+<url> as "
        "over the file (whose own prefixes it adds to).",
        json_schema_extra={"flag": "--prefix", "metavar": "NAME=IRI"},
    )
    kg_cache: KGCacheMode = Field(
        default="run",
        description="A SPARQL KG's answers: cached for this run only ('run'), also kept on disk "
        "for later runs ('persist', for --kg-cache-max-age seconds), or not cached ('off', as "
        "with --no-cache). Not part of a run's identity.",
    )
    kg_cache_max_age: float | None = Field(
        default=None,
        gt=0,
        description="With --kg-cache persist: answers older than this many seconds are asked "
        "again (default 86400, one day).",
    )

    @model_validator(mode="after")
    def _check_kg_options(self) -> KGOptions:
        for iri in self.label_predicates:
            if not isinstance(iri, str) or not is_iri(iri) or _node_error(iri):
                raise ConfigError(
                    f"--label-predicate {iri!r} is not an IRI (write it in full, e.g. "
                    "http://www.w3.org/2004/02/skos/core#prefLabel)"
                )
        for name, namespace in self.prefixes.items():
            if not _PREFIX_NAME.fullmatch(name):
                raise ConfigError(
                    f"--prefix {name}={namespace}: {name!r} is not a prefix name (a letter, "
                    "then letters, digits, '_', '-' or '.', e.g. geo)"
                )
            if not is_iri(namespace) or _node_error(namespace):
                raise ConfigError(
                    f"--prefix {name}={namespace}: {namespace!r} is not an IRI (e.g. "
                    "https://data.example.net/geo#)"
                )
        if self.kg_cache_max_age is not None and self.kg_cache != "persist":
            raise ConfigError("--kg-cache-max-age needs --kg-cache persist")
        return self

    def kg_options(self, *, cache: bool = True) -> KGOptions:
        """These options alone (from a config that inherits them); ``cache=False`` (the
        runtime's ``--no-cache``) turns the KG's cache off."""
        fields = {name: getattr(self, name) for name in KGOptions.model_fields}
        if not cache:
            fields.update(kg_cache="off", kg_cache_max_age=None)
        return KGOptions(**fields)

    @property
    def reads_differently(self) -> bool:
        """Whether label predicates or prefixes are given (they change what a KG reads as)."""
        return bool(self.label_predicates or self.prefixes)

    def identity_dump(self, dumped: dict[str, Any]) -> dict[str, Any]:
        """``dumped`` (a config's dump) as a run's identity holds it: the cache settings never,
        the label predicates and prefixes only when given (so runs made before they existed
        keep their identity)."""
        out = {k: v for k, v in dumped.items() if k not in ("kg_cache", "kg_cache_max_age")}
        for name in ("label_predicates", "prefixes"):
            if not getattr(self, name):
                out.pop(name, None)
        return out


def _node_error(iri: str) -> bool:
    try:
        NamedNode(iri)
    except (ValueError, TypeError):
        return True
    return False


class OpenedKG(AsyncClosing, BaseModel):
    """A KG opened from a spec, with what identifies its content for run records.

    Its opener closes it: ``async with open_kg(spec) as opened:`` closes :attr:`kg` on exit
    (a remote endpoint's HTTP connections and answer cache), as :meth:`aclose` does.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    spec: str
    kg: KnowledgeGraph
    identity: str
    """SHA-256 of the source files (embedded stores) or the endpoint URL (remote)."""

    async def aclose(self) -> None:
        """Close :attr:`kg` (:meth:`KnowledgeGraph.aclose`)."""
        await self.kg.aclose()


def open_kg(
    spec: str = "biokalma",
    *,
    data_dir: str | Path | None = None,
    contact: str | None = None,
    cache_dir: str | Path | None = None,
    options: KGOptions | None = None,
) -> OpenedKG:
    """Open the KG named by ``spec`` (see the module docstring).

    Args:
        spec: The spec.
        data_dir: Where the datasets are (dataset KGs).
        contact: Contact for Wikidata's User-Agent policy.
        cache_dir: Where embedded stores are cached on disk.
        options: Label predicates, prefixes and the endpoint cache (:class:`KGOptions`).

    Raises:
        ConfigError: unknown spec, Wikidata without a contact, label predicates or prefixes
            for a KG that is not your own (RDF files, ``sparql+<url>``), or a prefix the files
            declare for another namespace.
        DataNotFoundError: the dataset files, or the RDF files given, are missing (the message
            names the file).
    """
    spec = spec.strip()
    options = options or KGOptions()
    if spec in ("biokalma", "codex-s"):
        _no_reading_options(spec, options)
        root = resolve_data_dir(data_dir)
        loader = load_biokalma_kg if spec == "biokalma" else load_codex_kg
        store = loader(root, cache_dir=cache_dir)
        return OpenedKG(spec=spec, kg=store, identity=store.source_hash or spec)
    pq_kb = spec.removeprefix("pathquestion-") if spec.startswith("pathquestion-") else None
    if spec == "grailqa-mini" or pq_kb in PATHQUESTION_KBS:
        _no_reading_options(spec, options)
        root = resolve_data_dir(data_dir)
        if pq_kb is None:
            store = load_grailqa_kg(root, cache_dir=cache_dir)
        else:
            store = load_pathquestion_kg(root, pq_kb, cache_dir=cache_dir)
        return OpenedKG(spec=spec, kg=store, identity=store.source_hash or spec)
    if spec in ("wikidata", "qlever") or spec.startswith(("sparql+", WIKIDATA_SHAPED)):
        return _open_sparql(spec, contact, options)
    paths = [Path(p) for p in spec.split(",") if p]
    if paths and all(p.suffix.lower() in RDF_FORMATS for p in paths):
        store = load_rdf_kg(paths, label_predicates=options.label_predicates, cache_dir=cache_dir)
        store.add_prefixes(options.prefixes)
        return OpenedKG(spec=spec, kg=store, identity=store.source_hash or spec)
    raise ConfigError(
        f"unknown KG {spec!r}: use 'biokalma', 'codex-s', 'pathquestion-2h|3h|pql2|pql3', "
        "'grailqa-mini', 'wikidata', 'qlever', "
        "'sparql+<url>', 'wikidata+sparql+<url>' or paths to RDF files "
        f"({RDF_EXTENSIONS_TEXT})"
    )


@asynccontextmanager
async def kg_with_identity(
    kg: str | KnowledgeGraph,
    *,
    data_dir: str | Path | None = None,
    contact: str | None = None,
    options: KGOptions | None = None,
) -> AsyncIterator[tuple[KnowledgeGraph, str]]:
    """The KG a task works over, for as long as the task runs: the KG a spec names
    (:func:`open_kg`, with ``options``), closed on exit (an error included), or a KG object as
    given, left open (its owner closes it). With it, what identifies it in a run's data hashes:
    the spec's identity, else the object's ``source_hash``, else its type (``"OxigraphKG given
    by caller"``).

    Example:
        >>> async with kg_with_identity("sparql+http://localhost:7878/query") as (kg, identity):
        ...     entities = await kg.find_entities("Marie Curie")  # doctest: +SKIP

    Raises:
        The errors of :func:`open_kg` for a spec.
    """
    if not isinstance(kg, str):
        given = getattr(kg, "source_hash", None)
        yield kg, given or f"{type(kg).__name__} given by caller"
        return
    async with open_kg(kg, data_dir=data_dir, contact=contact, options=options) as found:
        yield found.kg, found.identity


def kg_cache_note(kg: object) -> dict[str, Any] | None:
    """How a KG's remote answers are cached, for ``run.json`` (``notes.kg_cache``, when the
    run starts) and ``metrics.json`` (when it ends): ``mode`` (``run``: answers of this run
    only, kept in memory; ``persist``: also answers of earlier runs, up to ``max_age_s`` old,
    from ``path``; ``off``), ``answers_from_earlier_runs`` (whether any may be used: only with
    ``persist``), ``hits`` (queries answered from the cache so far, by this KG object) and
    ``requests`` (HTTP requests sent so far, retries included). ``None`` for a KG that asks no
    endpoint (an embedded store: its on-disk copy is keyed by its files' content).
    """
    client = getattr(kg, "client", None)
    if not isinstance(client, SparqlClient):
        return None
    cache = client.cache
    persist = cache.enabled and cache.path != ":memory:"
    note: dict[str, Any] = {
        "mode": "persist" if persist else "run" if cache.enabled else "off",
        "answers_from_earlier_runs": persist,
    }
    if persist:
        note.update(max_age_s=cache.max_age, path=cache.path)
    note.update(hits=client.cache_hits, requests=client.requests_sent)
    note["how"] = (
        "hits: SPARQL queries of this run answered from the cache; requests: HTTP requests "
        "sent (retries included)"
    )
    return note


def _no_reading_options(spec: str, options: KGOptions) -> None:
    if options.reads_differently:
        raise ConfigError(
            f"--label-predicate and --prefix read your own KG (RDF files, sparql+<url>); "
            f"the {spec} KG has its own names and ids"
        )


def _sparql_cache(options: KGOptions) -> SQLiteCache:
    """The response cache :class:`KGOptions` asks for (see the module docstring)."""
    if options.kg_cache == "off":
        return SQLiteCache(None, namespace="sparql")
    if options.kg_cache == "run":
        return SQLiteCache(":memory:", namespace="sparql")
    max_age = options.kg_cache_max_age or DEFAULT_KG_CACHE_MAX_AGE
    return SQLiteCache(cache_root() / "sparql.sqlite", namespace="sparql", max_age=max_age)


def _open_sparql(spec: str, contact: str | None, options: KGOptions) -> OpenedKG:
    wikidata_shaped = spec.startswith(WIKIDATA_SHAPED)
    url = spec.removeprefix(WIKIDATA_SHAPED).removeprefix("sparql+")
    url = {"wikidata": WIKIDATA_URL, "qlever": QLEVER_WIKIDATA_URL}.get(url, url)
    contact = contact or os.environ.get(CONTACT_ENV) or None
    config: SparqlClientConfig
    if url.rstrip("/") == WIKIDATA_URL:
        if contact is None:
            raise ConfigError(
                "Wikidata requires contact information in the User-Agent: pass --contact "
                f"you@example.org or set ${CONTACT_ENV}"
            )
        config = wikidata(contact=contact)
    elif url == QLEVER_WIKIDATA_URL:
        config = qlever_wikidata(contact=contact)
    else:
        config = virtuoso(url, contact=contact)
    is_wikidata = url in (WIKIDATA_URL, QLEVER_WIKIDATA_URL)
    own = not (wikidata_shaped or url.rstrip("/") == WIKIDATA_URL or url == QLEVER_WIKIDATA_URL)
    if not own:
        _no_reading_options(spec, options)
    client = SparqlClient(config, cache=_sparql_cache(options))
    if own:
        kg = SparqlRdfKG(
            client, prefixes=options.prefixes, label_predicates=options.label_predicates
        )
        return OpenedKG(spec=spec, kg=kg, identity=url)
    endpoint_kg = SparqlEndpointKG(
        client, relation_names=KALMA_RELATION_NAMES if is_wikidata else None
    )
    return OpenedKG(spec=spec, kg=endpoint_kg, identity=url)
