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
  as an RDF file would be (:class:`~citegraph.kg._sparql_rdf.SparqlRdfKG`: ``rdfs:label`` names,
  predicates labelled by ``rdfs:label``, full-IRI ids).
- ``wikidata+sparql+<url>``: an endpoint holding a Wikidata dump (e.g. a Virtuoso), read the
  Wikidata way (``wd:Q…`` items, ``wdt:P…`` claims, ``@en`` labels) by
  :class:`~citegraph.kg.SparqlEndpointKG`.
- a path to RDF files (``.nt``, ``.ttl``, ``.nq``, ``.trig``, ``.rdf``), several joined by ``,``.

Remote endpoints get a SQLite response cache under the cache root (``$CITEGRAPH_CACHE``).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from citegraph.errors import ConfigError
from citegraph.io import cache_root, resolve_data_dir
from citegraph.kg._load_pathquestion import PATHQUESTION_KBS
from citegraph.kg._loaders import (
    load_biokalma_kg,
    load_codex_kg,
    load_grailqa_kg,
    load_pathquestion_kg,
    load_rdf_kg,
)
from citegraph.kg._protocol import KnowledgeGraph
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


class OpenedKG(BaseModel):
    """A KG opened from a spec, with what identifies its content for run records."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    spec: str
    kg: KnowledgeGraph
    identity: str
    """SHA-256 of the source files (embedded stores) or the endpoint URL (remote)."""


def open_kg(
    spec: str = "biokalma",
    *,
    data_dir: str | Path | None = None,
    contact: str | None = None,
    cache_dir: str | Path | None = None,
) -> OpenedKG:
    """Open the KG named by ``spec`` (see the module docstring).

    Raises:
        ConfigError: unknown spec, or Wikidata without a contact.
        DataNotFoundError: the dataset files are missing (the message says how to fetch them).
    """
    spec = spec.strip()
    if spec in ("biokalma", "codex-s"):
        root = resolve_data_dir(data_dir)
        loader = load_biokalma_kg if spec == "biokalma" else load_codex_kg
        store = loader(root, cache_dir=cache_dir)
        return OpenedKG(spec=spec, kg=store, identity=store.source_hash or spec)
    pq_kb = spec.removeprefix("pathquestion-") if spec.startswith("pathquestion-") else None
    if spec == "grailqa-mini" or pq_kb in PATHQUESTION_KBS:
        root = resolve_data_dir(data_dir)
        if pq_kb is None:
            store = load_grailqa_kg(root, cache_dir=cache_dir)
        else:
            store = load_pathquestion_kg(root, pq_kb, cache_dir=cache_dir)
        return OpenedKG(spec=spec, kg=store, identity=store.source_hash or spec)
    if spec in ("wikidata", "qlever") or spec.startswith(("sparql+", WIKIDATA_SHAPED)):
        return _open_sparql(spec, contact)
    paths = [Path(p) for p in spec.split(",") if p]
    if paths and all(p.suffix in {".nt", ".ttl", ".nq", ".trig", ".rdf", ".xml"} for p in paths):
        store = load_rdf_kg(paths, cache_dir=cache_dir)
        return OpenedKG(spec=spec, kg=store, identity=store.source_hash or spec)
    raise ConfigError(
        f"unknown KG {spec!r}: use 'biokalma', 'codex-s', 'pathquestion-2h|3h|pql2|pql3', "
        "'grailqa-mini', 'wikidata', 'qlever', "
        "'sparql+<url>', 'wikidata+sparql+<url>' or paths to RDF files "
        "(.nt, .ttl, .nq, .trig, .rdf)"
    )


def kg_with_identity(
    kg: str | KnowledgeGraph,
    *,
    data_dir: str | Path | None = None,
    contact: str | None = None,
) -> tuple[KnowledgeGraph, str]:
    """The KG a spec names (:func:`open_kg`), or a KG object as given, with what identifies it
    in a run's data hashes: the spec's identity, else the object's ``source_hash``, else its
    type (``"OxigraphKG given by caller"``).

    Raises:
        The errors of :func:`open_kg` for a spec.
    """
    if isinstance(kg, str):
        found = open_kg(kg, data_dir=data_dir, contact=contact)
        return found.kg, found.identity
    given = getattr(kg, "source_hash", None)
    return kg, given or f"{type(kg).__name__} given by caller"


def _open_sparql(spec: str, contact: str | None) -> OpenedKG:
    wikidata_shaped = spec.startswith(WIKIDATA_SHAPED)
    url = spec.removeprefix(WIKIDATA_SHAPED).removeprefix("sparql+")
    url = {"wikidata": WIKIDATA_URL, "qlever": QLEVER_WIKIDATA_URL}.get(url, url)
    contact = contact or os.environ.get(CONTACT_ENV) or None
    cache = str(cache_root() / "sparql.sqlite")
    config: SparqlClientConfig
    if url.rstrip("/") == WIKIDATA_URL:
        if contact is None:
            raise ConfigError(
                "Wikidata requires contact information in the User-Agent: pass --contact "
                f"you@example.org or set ${CONTACT_ENV}"
            )
        config = wikidata(contact=contact, cache_path=cache)
    elif url == QLEVER_WIKIDATA_URL:
        config = qlever_wikidata(contact=contact, cache_path=cache)
    else:
        config = virtuoso(url, contact=contact, cache_path=cache)
    is_wikidata = url in (WIKIDATA_URL, QLEVER_WIKIDATA_URL)
    if not (wikidata_shaped or url.rstrip("/") == WIKIDATA_URL or url == QLEVER_WIKIDATA_URL):
        return OpenedKG(spec=spec, kg=SparqlRdfKG(SparqlClient(config)), identity=url)
    kg = SparqlEndpointKG(
        SparqlClient(config), relation_names=KALMA_RELATION_NAMES if is_wikidata else None
    )
    return OpenedKG(spec=spec, kg=kg, identity=url)
