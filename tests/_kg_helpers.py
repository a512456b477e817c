"""Test helpers for knowledge-graph objects."""

from __future__ import annotations

from citegraph.kg import Entity, Subgraph, Triple


def subgraph(qid: str, name: str, *facts: tuple[str, str]) -> Subgraph:
    """A subgraph centred on ``qid`` (named ``name``) holding ``(relation, value)`` facts."""
    triples = tuple(Triple(subject=qid, relation=r, value=v) for r, v in facts)
    return Subgraph(center=Entity(id=qid, name=name), triples=triples)
