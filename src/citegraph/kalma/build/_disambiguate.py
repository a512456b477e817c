"""Name disambiguation for ``kalma build`` (KaLMA paper, Appendix A.2).

A pair names two people and a relation, ``<William Shakespeare, spouse, Anne Hathaway>``; names
are not unique (Anne Hathaway the actress, Anne Hathaway the wife of Shakespeare). The rule, as
in the paper: look up every entity labelled ``name_a`` and every entity labelled ``name_b``
(case-insensitively; humans only when an entity's types are known), and keep the pairs
``(a, b)`` that the KG connects by the stated relation, in either direction
(:func:`connecting_facts`: ``a --relation--> b`` or ``b --relation--> a``, relation labels
compared case- and space-folded; a label value connects when it equals the other person's name,
an entity value when its id is the other person's id).

- exactly one connected pair: **resolved**; its two one-hop subgraphs are the knowledge pool;
- several: **ambiguous**; the connected pairs are reported and none is chosen (picking one, e.g.
  the lowest QID, would silently build questions about the wrong person half of the time);
- none: **unresolved**; the reason says whether a name had no (human) entity at all or whether
  no candidate pair was connected.

The known ids of KG-sampled pairs are not used: ``sample_pairs`` only returns pairs this rule
resolves to those ids (it applies :func:`connected_pairs` itself).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import KGQueryError
from citegraph.kalma.build._links import Connection, connected_pairs
from citegraph.kalma.build._pairs import CANDIDATE_LIMIT, PERSON_TYPE, PersonPair
from citegraph.kalma.retrieve import RetrievalConfig, find_candidates_async
from citegraph.kg import Entity, KnowledgeGraph, Subgraph, Triple
from citegraph.runs import Progress, blocking, run_bounded_async

Status = Literal["resolved", "ambiguous", "unresolved"]
STATUSES: tuple[Status, ...] = ("resolved", "ambiguous", "unresolved")


class Resolution(BaseModel):
    """What disambiguation decided for one pair."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pair: PersonPair
    status: Status = Field(description="'resolved', 'ambiguous' or 'unresolved'.")
    entity_a: Entity | None = Field(default=None, description="Chosen entity for name_a.")
    entity_b: Entity | None = Field(default=None, description="Chosen entity for name_b.")
    facts: tuple[Triple, ...] = Field(
        default=(), description="Facts connecting the chosen entities (a->b first, then b->a)."
    )
    pool: tuple[Subgraph, ...] = Field(
        default=(), description="Knowledge pool: the one-hop subgraphs of a and b (resolved)."
    )
    candidates_a: tuple[str, ...] = Field(default=(), description="Candidate ids for name_a.")
    candidates_b: tuple[str, ...] = Field(default=(), description="Candidate ids for name_b.")
    connections: tuple[Connection, ...] = Field(
        default=(), description="Every connected candidate pair (several when ambiguous)."
    )
    reason: str = Field(description="Why this status, in words.")


async def _candidates(
    kg: KnowledgeGraph, name: str, person_type: str | None, limit: int
) -> tuple[list[Entity], int]:
    config = RetrievalConfig(candidates_limit=limit, case_sensitive=False)
    return await find_candidates_async(kg, name, person_type, config)


async def _graph(kg: KnowledgeGraph, entity: Entity) -> Subgraph:
    try:
        return await kg.subgraph(entity.id)
    except KGQueryError:  # listed by name but without facts: it cannot be connected
        return Subgraph(center=entity)


def _missing(name: str, n_filtered: int, person_type: str | None) -> str:
    if n_filtered:
        noun = "entity" if n_filtered == 1 else "entities"
        return f"{n_filtered} {noun} named {name!r}, none of type {person_type!r}"
    return f"no entity named {name!r}"


async def disambiguate_async(
    pair: PersonPair,
    kg: KnowledgeGraph,
    *,
    person_type: str | None = PERSON_TYPE,
    limit: int = CANDIDATE_LIMIT,
) -> Resolution:
    """Map the two names of ``pair`` to the unique connected entities of ``kg`` (A.2).

    Args:
        pair: The two names and their relation.
        kg: Any knowledge graph (embedded store or SPARQL endpoint).
        person_type: Candidates must have this type when their types are known (lenient, as
            retrieval); ``None`` for no filter.
        limit: At most this many candidates per name.

    Returns:
        The status with the candidates, the connected pairs and a reason; when resolved, the two
        entities, the connecting facts and the knowledge pool.

    Raises:
        EndpointError: a remote KG failed (after its client's retries).
    """
    (found_a, out_a), (found_b, out_b) = await asyncio.gather(
        _candidates(kg, pair.name_a, person_type, limit),
        _candidates(kg, pair.name_b, person_type, limit),
    )
    ids_a, ids_b = tuple(e.id for e in found_a), tuple(e.id for e in found_b)

    def result(status: Status, reason: str, **chosen: Any) -> Resolution:
        return Resolution(
            pair=pair, status=status, candidates_a=ids_a, candidates_b=ids_b, reason=reason,
            **chosen,
        )  # fmt: skip

    if not found_a or not found_b:
        missing = [
            _missing(name, n_out, person_type)
            for name, found, n_out in ((pair.name_a, found_a, out_a), (pair.name_b, found_b, out_b))
            if not found
        ]
        return result("unresolved", "; ".join(missing))
    unique = {e.id: e for e in [*found_a, *found_b]}
    fetched = await asyncio.gather(*(_graph(kg, e) for e in unique.values()))
    graphs = dict(zip(unique, fetched, strict=True))
    connections = connected_pairs(pair.relation, found_a, found_b, graphs)
    if not connections:
        reason = (
            f"no pair of the {len(found_a)} x {len(found_b)} candidates is connected by "
            f"{pair.relation!r}"
        )
        return result("unresolved", reason)
    if len(connections) > 1:
        listed = ", ".join(f"({c.a}, {c.b})" for c in connections)
        reason = (
            f"{len(connections)} candidate pairs are connected by {pair.relation!r}: {listed}; "
            "none chosen"
        )
        return result("ambiguous", reason, connections=tuple(connections))
    [link] = connections
    graph_a, graph_b = graphs[link.a], graphs[link.b]
    return result(
        "resolved",
        f"one connected pair: {link.a} and {link.b}",
        entity_a=graph_a.center,
        entity_b=graph_b.center,
        facts=link.facts,
        pool=(graph_a, graph_b),
        connections=(link,),
    )


disambiguate = blocking(disambiguate_async)


async def disambiguate_many_async(
    pairs: Sequence[PersonPair],
    kg: KnowledgeGraph,
    concurrency: int = 8,
    *,
    person_type: str | None = PERSON_TYPE,
    limit: int = CANDIDATE_LIMIT,
    progress: Progress | None = None,
) -> list[Resolution]:
    """:func:`disambiguate` over many pairs, in order, at most ``concurrency`` at a time.

    ``progress(done, total)`` is called as pairs finish.

    Raises:
        ConfigError: ``concurrency`` is below 1.
    """

    async def one(pair: PersonPair) -> Resolution:
        return await disambiguate_async(pair, kg, person_type=person_type, limit=limit)

    return await run_bounded_async(pairs, one, concurrency=concurrency, progress=progress)


disambiguate_many = blocking(disambiguate_many_async)


def resolution_counts(resolutions: Sequence[Resolution]) -> dict[str, int]:
    """How many resolutions have each status (every status present, zero when none)."""
    counts = Counter(r.status for r in resolutions)
    return {status: counts.get(status, 0) for status in STATUSES}
