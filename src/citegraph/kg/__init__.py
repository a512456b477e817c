"""Knowledge-graph layer: typed records, the :class:`KnowledgeGraph` protocol and its backends.

Label level (KaLMA, CONNER): :class:`KnowledgeGraph` over the embedded :class:`OxigraphKG` or a
remote :class:`SparqlEndpointKG` (Wikidata-shaped endpoints) or :class:`SparqlRdfKG` (any RDF
graph behind an endpoint). Id level (CAQA): :class:`IdGraph` (``OxigraphKG.ids``), with
Wikidata's IRI namespaces (:data:`WIKIDATA_ENTITY`, :data:`WIKIDATA_DIRECT`) and :func:`is_qid`.
Short ids (``ex:MarieCurie`` for an IRI id, in prompts and pages): :func:`compact_ids`,
:class:`ShortIds`, :func:`with_short_ids`, ``Entity.display_id``, ``OxigraphKG.short_id_of``;
reading ids in text: :func:`is_iri`, :func:`iri_text`, :func:`local_name_of`. Opening a ``--kg``
spec: :func:`open_kg` with :class:`KGOptions` (label predicates, prefixes, the endpoint cache),
:func:`kg_cache_note`. Whoever opens a KG closes it (``KnowledgeGraph.aclose``): ``async with
open_kg(spec) as opened``, or a task's :func:`kg_with_identity` (a spec's KG closed when the
task ends, a given one left to its owner).
"""

from citegraph.kg._id_graph import IdGraph
from citegraph.kg._loaders import (
    load_biokalma_kg,
    load_codex_kg,
    load_grailqa_kg,
    load_pathquestion_kg,
    load_rdf_kg,
)
from citegraph.kg._ondisk import LoadOptions
from citegraph.kg._oxigraph import OxigraphKG
from citegraph.kg._protocol import KnowledgeGraph
from citegraph.kg._rdf import WD as WIKIDATA_ENTITY
from citegraph.kg._rdf import WDT as WIKIDATA_DIRECT
from citegraph.kg._rdf import is_qid
from citegraph.kg._short_ids import (
    WELL_KNOWN_PREFIXES,
    ShortIds,
    compact_ids,
    iri_text,
    is_iri,
    local_name_of,
    with_short_ids,
)
from citegraph.kg._sparql_client import SparqlClient
from citegraph.kg._sparql_config import (
    SparqlClientConfig,
    SparqlOptions,
    qlever_wikidata,
    user_agent_for,
    virtuoso,
    wikidata,
)
from citegraph.kg._sparql_kg import KALMA_RELATION_NAMES, SparqlEndpointKG
from citegraph.kg._sparql_literal import sparql_iri, sparql_string
from citegraph.kg._sparql_rdf import SparqlRdfKG
from citegraph.kg._spec import KGOptions, OpenedKG, kg_cache_note, kg_with_identity, open_kg
from citegraph.kg._types import Entity, Subgraph, Triple

__all__ = [
    "KALMA_RELATION_NAMES",
    "WELL_KNOWN_PREFIXES",
    "WIKIDATA_DIRECT",
    "WIKIDATA_ENTITY",
    "Entity",
    "IdGraph",
    "KGOptions",
    "KnowledgeGraph",
    "LoadOptions",
    "OpenedKG",
    "OxigraphKG",
    "ShortIds",
    "SparqlClient",
    "SparqlClientConfig",
    "SparqlEndpointKG",
    "SparqlOptions",
    "SparqlRdfKG",
    "Subgraph",
    "Triple",
    "compact_ids",
    "iri_text",
    "is_iri",
    "is_qid",
    "kg_cache_note",
    "kg_with_identity",
    "load_biokalma_kg",
    "load_codex_kg",
    "load_grailqa_kg",
    "load_pathquestion_kg",
    "load_rdf_kg",
    "local_name_of",
    "open_kg",
    "qlever_wikidata",
    "sparql_iri",
    "sparql_string",
    "user_agent_for",
    "virtuoso",
    "wikidata",
    "with_short_ids",
]
