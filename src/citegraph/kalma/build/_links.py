"""Whether the KG connects two people by a relation (KaLMA paper, Appendix A.2).

Shared by name disambiguation (:mod:`._disambiguate`) and pair sampling (:mod:`._pairs`): a
relation connects ``a`` and ``b`` when ``a --relation--> b`` or ``b --relation--> a`` is in their
one-hop subgraphs, relation labels compared case- and space-folded; a label value connects when
it equals the other person's name, an entity value when its id is the other person's id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from citegraph.kg import Entity, Subgraph, Triple


class Connection(BaseModel):
    """A candidate pair the KG connects by the pair's relation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: str = Field(description="Id of the candidate for name_a.")
    b: str = Field(description="Id of the candidate for name_b.")
    facts: tuple[Triple, ...] = Field(description="The connecting facts, a->b first, then b->a.")


def fold_relation(label: str) -> str:
    """A relation label for comparison: case-folded, ``_`` as a space, runs of spaces as one."""
    return " ".join(label.replace("_", " ").split()).casefold()


def fold_name(name: str) -> str:
    """A name for comparison: case-folded, runs of spaces as one."""
    return " ".join(name.split()).casefold()


def _points_to(triple: Triple, target: Entity) -> bool:
    if triple.value_id:  # an entity value (CoDEx, RDF, Wikidata): compare ids
        return triple.value_id == target.id
    return fold_name(triple.value) == fold_name(target.name)  # a label (BioKaLMA)


def connecting_facts(relation: str, a: Subgraph, b: Subgraph) -> list[Triple]:
    """The facts ``a --relation--> b`` then ``b --relation--> a`` in two one-hop subgraphs.

    Relations are compared after :func:`fold_relation`. An entity value connects when its id is
    the other centre's id; a label value (BioKaLMA's literals) when it equals the other centre's
    name after :func:`fold_name`. A centre is never connected to itself.
    """
    if a.center.id == b.center.id:
        return []
    wanted = fold_relation(relation)
    return [
        t
        for graph, other in ((a, b.center), (b, a.center))
        for t in graph.triples
        if fold_relation(t.relation) == wanted and _points_to(t, other)
    ]


def connected_pairs(
    relation: str,
    found_a: Sequence[Entity],
    found_b: Sequence[Entity],
    graphs: Mapping[str, Subgraph],
) -> list[Connection]:
    """The candidate pairs ``(a, b)`` that ``relation`` connects, in candidate order.

    Args:
        relation: The pair's relation label.
        found_a, found_b: The candidates for each name.
        graphs: The one-hop subgraph of every candidate, by id.
    """
    return [
        Connection(a=a.id, b=b.id, facts=tuple(facts))
        for a in found_a
        for b in found_b
        if (facts := connecting_facts(relation, graphs[a.id], graphs[b.id]))
    ]
