"""Logical queries sampled straight from a KG, for building CAQA samples without a KGQA set.

Three shapes (§4.1):

* ``single``: ``(e, r, ?a)``;
* ``path``: ``(e, r1, ?v1) ∧ (?v1, r2, ?a)``, a two-hop chain;
* ``tree``: ``(e1, r1, ?a) ∧ (e2, r2, ?a)`` with ``e1 != e2``.

Every sampled query has between 1 and ``max_answers`` answers, exactly the answers
:meth:`CaqaKG.ground` finds (the sampler reads the fact graph once into adjacency maps and
computes the same joins), and no answer that is also one of its subject entities (``spouse of
spouse`` gives back the subject: such queries are rejected). Queries are distinct.

Sampling is deterministic for a seed: candidate lists are sorted before drawing, and each shape
has its own generator (seeded with ``"<seed>:<shape>"``), so the first ``k`` queries of a shape
do not depend on ``n``. ``n`` is split evenly over the shapes (the first shapes get the
remainder); a shape that cannot produce its share within ``max_tries`` draws returns fewer.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from citegraph.caqa._types import QueryShape
from citegraph.caqa.queries._graph import CaqaKG
from citegraph.caqa.queries._kgqa import KGQASample
from citegraph.caqa.queries._query import LogicalQuery, path_query, single, tree_query
from citegraph.errors import ConfigError

SAMPLED_SHAPES: tuple[QueryShape, ...] = ("single", "path", "tree")

_Adjacency = dict[str, dict[str, frozenset[str]]]


class _Index:
    """The fact graph as sorted adjacency lists: ``out[e][r]`` objects, ``into[o]`` in-edges."""

    def __init__(self, kg: CaqaKG) -> None:
        out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        into: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for sid, rid, oid in kg.ids.all_edges():  # literals and blank nodes are not entities
            out[sid][rid].add(oid)
            into[oid].add((sid, rid))
        self.out: _Adjacency = {
            e: {r: frozenset(v) for r, v in rs.items()} for e, rs in out.items()
        }
        self.pairs: list[tuple[str, str]] = sorted((e, r) for e, rs in out.items() for r in rs)
        self.into: dict[str, list[tuple[str, str]]] = {o: sorted(v) for o, v in into.items()}
        self.targets: list[str] = sorted(o for o, v in into.items() if len({e for e, _ in v}) > 1)

    def objects(self, entity: str, relation: str) -> frozenset[str]:
        return self.out.get(entity, {}).get(relation, frozenset())


def _draw_single(index: _Index, rng: random.Random) -> tuple[LogicalQuery, frozenset[str]] | None:
    e, r = rng.choice(index.pairs)
    answers = index.objects(e, r)
    return None if e in answers else (single(e, r, "?a"), answers)


def _draw_path(index: _Index, rng: random.Random) -> tuple[LogicalQuery, frozenset[str]] | None:
    e, r1 = rng.choice(index.pairs)
    middles = sorted(index.objects(e, r1))
    second = sorted({r2 for v in middles for r2 in index.out.get(v, {})})
    if not second:
        return None
    r2 = rng.choice(second)
    answers = frozenset().union(*(index.objects(v, r2) for v in middles))
    if e in answers:
        return None
    return path_query(e, [r1, r2]), answers


def _draw_tree(index: _Index, rng: random.Random) -> tuple[LogicalQuery, frozenset[str]] | None:
    if not index.targets:
        return None
    incoming = index.into[rng.choice(index.targets)]
    e1, r1 = rng.choice(incoming)
    others = [(e, r) for e, r in incoming if e != e1]
    e2, r2 = rng.choice(others)
    answers = index.objects(e1, r1) & index.objects(e2, r2)
    if answers & {e1, e2}:
        return None
    branches = sorted([(e1, r1), (e2, r2)])
    return tree_query(branches), answers


_DRAW = {"single": _draw_single, "path": _draw_path, "tree": _draw_tree}


def sample_queries(
    kg: CaqaKG,
    n: int,
    *,
    shapes: Sequence[str] = SAMPLED_SHAPES,
    seed: int = 0,
    max_answers: int = 5,
    max_tries: int | None = None,
) -> list[KGQASample]:
    """Draw ``n`` distinct queries from ``kg``, balanced over ``shapes`` (see the module
    docstring).

    Args:
        kg: The KG.
        n: How many queries in all.
        shapes: Any of ``single``, ``path``, ``tree``.
        seed: Seed of the draws.
        max_answers: Keep queries with at most this many answers.
        max_tries: Draws per shape before giving up on its share (default ``200 * share +
            1000``).

    Returns:
        Samples with ``question=None``, ``source="sample"``, ``kg=kg.name``, ids
        ``sample:<kg>:<seed>:<shape>:<k>``, answers sorted; interleaved by shape (``single,
        path, tree, single, ...``). Fewer than ``n`` when a shape runs out.

    Raises:
        ConfigError: an unknown shape, ``n < 0`` or ``max_answers < 1``.
    """
    unknown = [s for s in shapes if s not in _DRAW]
    if unknown or n < 0 or max_answers < 1:
        raise ConfigError(
            f"sample_queries needs shapes among {list(_DRAW)} (got {list(shapes)}), n >= 0 and "
            f"max_answers >= 1"
        )
    shapes = list(dict.fromkeys(shapes))
    if n == 0 or not shapes:
        return []
    index = _Index(kg)
    if not index.pairs:
        return []
    per_shape: list[list[KGQASample]] = []
    for i, shape in enumerate(shapes):
        share = n // len(shapes) + (1 if i < n % len(shapes) else 0)
        rng = random.Random(f"{seed}:{shape}")
        tries = max_tries if max_tries is not None else 200 * share + 1000
        found: dict[LogicalQuery, tuple[str, ...]] = {}
        while len(found) < share and tries > 0:
            tries -= 1
            drawn = _DRAW[shape](index, rng)
            if drawn is None or not 1 <= len(drawn[1]) <= max_answers or drawn[0] in found:
                continue
            found[drawn[0]] = tuple(sorted(drawn[1]))
        per_shape.append(
            [
                KGQASample(
                    id=f"sample:{kg.name}:{seed}:{shape}:{k}",
                    question=None,
                    query=query,
                    answers=answers,
                    source="sample",
                    kg=kg.name,
                )
                for k, (query, answers) in enumerate(found.items())
            ]
        )
    longest = max(len(part) for part in per_shape)
    return [part[k] for k in range(longest) for part in per_shape if k < len(part)]
