"""``LogicalQuery.to_sparql`` pastes no hostile term into the query (issue 27, item 12): a term
that starts with ``?`` must be a plain variable name, a relation is never a variable, and every
IRI goes through ``sparql_iri``, so no term can change the query's structure."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from citegraph.caqa.queries import LogicalQuery, QueryEdge
from citegraph.errors import KGQueryError

ENTITY = "http://www.wikidata.org/entity/{}".format
PROP = "http://www.wikidata.org/prop/direct/{}".format

HOSTILE_VARIABLES = [
    "?a } . ?s ?p ?o . FILTER(true) #",
    "?a>",
    "?a\n",
    "?",
    "?__type",
    "?a} UNION {?x ?y ?z",
    "?a#",
]


def _query(subject: str, obj: str = "?a", relation: str = "P19") -> LogicalQuery:
    return LogicalQuery(edges=(QueryEdge(subject=subject, relation=relation, object=obj),))


def test_a_plain_query_is_unchanged() -> None:
    query = LogicalQuery(
        edges=(
            QueryEdge(subject="Q206534", relation="P19", object="?x_1"),
            QueryEdge(subject="?x_1", relation="P17", object="?a"),
        )
    )
    assert query.to_sparql(ENTITY, PROP, limit=5) == (
        "SELECT DISTINCT ?a ?x_1 WHERE { <http://www.wikidata.org/entity/Q206534> "
        "<http://www.wikidata.org/prop/direct/P19> ?x_1 . ?x_1 "
        "<http://www.wikidata.org/prop/direct/P17> ?a . } LIMIT 5"
    )


@pytest.mark.parametrize("term", HOSTILE_VARIABLES)
def test_a_hostile_variable_is_refused_where_the_query_is_made(term: str) -> None:
    with pytest.raises(ValidationError, match="not a query variable"):
        _query("Q1", obj=term)
    with pytest.raises(ValidationError, match="not a query variable"):
        LogicalQuery.model_validate(
            {"edges": [{"subject": term, "relation": "P1", "object": "?a"}]}
        )
    with pytest.raises(ValidationError):
        LogicalQuery(edges=(QueryEdge(subject="Q1", relation="P1", object="?a"),), answer=term)


def test_a_relation_cannot_be_a_variable() -> None:
    with pytest.raises(ValidationError, match="not a variable"):
        _query("Q1", relation="?p")


@pytest.mark.parametrize(
    "entity", ["Q1> . ?s ?p ?o . <http://x", "Q1 } UNION { ?s ?p ?o", 'Q1"', "Q1\\u003e"]
)
def test_an_id_that_is_no_iri_is_refused_by_to_sparql(entity: str) -> None:
    with pytest.raises(KGQueryError, match="not an IRI"):
        _query(entity).to_sparql(ENTITY, PROP)
    with pytest.raises(KGQueryError, match="not an IRI"):
        _query("Q1", relation=entity).to_sparql(ENTITY, PROP)
    typed = LogicalQuery(
        edges=(QueryEdge(subject="Q1", relation="P1", object="?a"),), answer_types=(entity,)
    )
    with pytest.raises(KGQueryError, match="not an IRI"):
        typed.to_sparql(ENTITY, PROP, type_iri=PROP("P31"))
