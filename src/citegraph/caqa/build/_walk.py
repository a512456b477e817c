"""The irrelevant attribution's search (§4.2.2): a seeded backtracking walk from the subject
entities that rebuilds the supportive subgraph's structure with new entities and relations."""

from __future__ import annotations

import random
from collections import defaultdict

from citegraph.caqa._types import Fact
from citegraph.caqa.queries import CaqaKG

#: Candidate entities the irrelevant walk may try before it gives up.
WALK_BUDGET = 5_000


#: Neighbourhoods read by the walk: (entity, outgoing) -> {other entity: relations}.
Neighbourhoods = dict[tuple[str, bool], dict[str, list[str]]]


def _neighbours(kg: CaqaKG, entity: str, outgoing: bool) -> dict[str, list[str]]:
    """``{other entity: relations}`` over the entity's edges one way (the walk asks for many
    neighbourhoods and needs no :class:`Fact` objects)."""
    out: dict[str, list[str]] = defaultdict(list)
    for s, r, o in kg.ids.edges(entity, outgoing=outgoing):
        out[o if outgoing else s].append(r)
    return out


class _OutOfBudget(Exception):
    pass


def same_structure_walk(
    kg: CaqaKG,
    facts: tuple[Fact, ...],
    edge_of: dict[Fact, int],
    fixed: list[str],
    rng: random.Random,
    *,
    reversible: bool = False,
    budget: int = WALK_BUDGET,
    cache: Neighbourhoods | None = None,
) -> tuple[tuple[Fact, ...], int] | None:
    """A KG subgraph isomorphic to ``facts`` that shares with it only the ``fixed`` entities.

    Every other entity of ``facts`` maps to a distinct new entity (not in ``facts``); every
    query pattern (``edge_of``) maps to one relation not used in ``facts`` and keeps its
    direction, unless ``reversible`` lets a pattern's facts all point the other way (the
    undirected shape is kept). The walk starts at the fixed entities and assigns the others
    breadth-first, each from the KG neighbours of an already assigned one, backtracking in a
    seeded random order (same-direction choices first).

    Args:
        kg: The KG to walk.
        facts: The subgraph to imitate.
        edge_of: The query pattern each fact instantiates (facts of one pattern share a relation).
        fixed: Entities kept as they are (the subject entities).
        rng: The random source.
        reversible: Allow a pattern to map onto facts of the opposite direction.
        budget: Candidate entities tried at most.
        cache: Neighbourhoods already read (share it between walks over one KG).

    Returns:
        The new facts in the order of ``facts`` and how many patterns were reversed; None when
        no such subgraph was found.
    """
    nodes = {i for f in facts for i in (f.subject, f.object)}
    if not fixed or not set(fixed) <= nodes:
        return None
    forbidden = {f.relation for f in facts}
    key = {f: edge_of.get(f, -1 - i) for i, f in enumerate(facts)}
    incident: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        incident[f.subject].append(f)
        incident[f.object].append(f)
    order: list[str] = []
    rank = {n: -1 for n in fixed}
    queue = list(fixed)
    while queue:
        node = queue.pop(0)
        for f in incident[node]:
            other = f.object if f.subject == node else f.subject
            if other not in rank:
                rank[other] = len(order)
                order.append(other)
                queue.append(other)
    if len(rank) != len(nodes):
        return None
    due: dict[int, list[Fact]] = defaultdict(list)  # checked once both ends are assigned
    for f in facts:
        due[max(rank[f.subject], rank[f.object])].append(f)
    anchors = [
        next(f for f in incident[n] if rank[f.subject] < k or rank[f.object] < k)
        for k, n in enumerate(order)
    ]
    fan_out: dict[tuple[str, int, bool], int] = defaultdict(int)
    for f in facts:
        fan_out[(f.subject, key[f], True)] += 1
        fan_out[(f.object, key[f], False)] += 1
    flips = (False, True) if reversible else (False,)

    mu = {n: n for n in fixed}
    rho: dict[int, tuple[str, bool]] = {}  # pattern -> (relation, reversed)
    used = set(fixed)
    left = [budget]
    seen: Neighbourhoods = {} if cache is None else cache

    def neighbours(entity: str, outgoing: bool) -> dict[str, list[str]]:
        if (entity, outgoing) not in seen:
            seen[(entity, outgoing)] = _neighbours(kg, entity, outgoing)
        return seen[(entity, outgoing)]

    def close(pending: list[Fact], i: int, then: int) -> bool:
        """Check (choosing relations where needed) the facts ``pending[i:]``, then go on."""
        if i == len(pending):
            return assign(then)
        f = pending[i]
        s, o, j = mu[f.subject], mu[f.object], key[f]
        options = [
            (r, flip)
            for flip in flips
            for r in (kg.ids.relations_between(o, s) if flip else kg.ids.relations_between(s, o))
            if r not in forbidden
        ]
        if j in rho:
            return rho[j] in options and close(pending, i + 1, then)
        for option in sorted(set(options)):
            rho[j] = option
            if close(pending, i + 1, then):
                return True
            del rho[j]
        return False

    def assign(k: int) -> bool:
        if k == len(order):
            return True
        node, anchor = order[k], anchors[k]
        j, node_is_object = key[anchor], anchor.object == node
        parent = anchor.subject if node_is_object else anchor.object
        fresh = j not in rho
        need = fan_out[(parent, j, node_is_object)] if fresh else 1
        pending = [f for f in due[k] if f is not anchor]
        for flip in flips if fresh else (rho[j][1],):
            outgoing = node_is_object != flip
            by_rel: dict[str, set[str]] = defaultdict(set)
            for ent, rels in neighbours(mu[parent], outgoing).items():
                if ent in nodes or ent in used:
                    continue
                for r in rels:
                    if r not in forbidden and (fresh or r == rho[j][0]):
                        by_rel[r].add(ent)
            relations = sorted(r for r, ents in by_rel.items() if len(ents) >= need)
            rng.shuffle(relations)
            for r in relations:
                rho[j] = (r, flip)
                entities = sorted(by_rel[r])
                rng.shuffle(entities)
                for ent in entities:
                    left[0] -= 1
                    if left[0] < 0:
                        raise _OutOfBudget
                    mu[node] = ent
                    used.add(ent)
                    if close(pending, 0, k + 1):
                        return True
                    used.discard(ent)
                    del mu[node]
                if fresh:
                    del rho[j]
        return False

    try:
        found = close(due[-1], 0, 0)
    except _OutOfBudget:
        return None
    if not found:
        return None
    image = []
    for f in facts:
        r, flip = rho[key[f]]
        s, o = mu[f.subject], mu[f.object]
        image.append(Fact.of(o, r, s) if flip else Fact.of(s, r, o))
    if len(set(image)) != len(image):
        return None
    return tuple(image), sum(flip for _, flip in rho.values())
