"""Sample single-triple, two-hop path and two-subject tree queries from a KG's own facts."""

from __future__ import annotations

from citegraph.caqa import CaqaKG, Fact, LogicalQuery
from citegraph.caqa.queries import path_query, single, tree_query


def _sorted(fs: list[Fact]) -> list[Fact]:
    return sorted(fs, key=Fact.as_tuple)


def _ok(kg: CaqaKG, q: LogicalQuery, max_answers: int) -> bool:
    g = kg.ground(q)
    return not g.truncated and 1 <= len(g.answers) <= max_answers


def sample_queries(
    kg: CaqaKG, *, per_shape: int, step: int = 7, max_answers: int = 10
) -> dict[str, list[LogicalQuery]]:
    """Up to ``per_shape`` queries of each shape, from every ``step``-th entity, each with 1 to
    ``max_answers`` answers (deterministic: sorted facts, first fitting choice)."""
    out: dict[str, list[LogicalQuery]] = {"single": [], "path": [], "tree": []}
    for entity in kg.entity_ids()[::step]:
        facts = _sorted(kg.out_facts(entity))
        if len(out["single"]) < per_shape:
            for f in facts:
                q = single(entity, f.relation, "?a")
                if _ok(kg, q, max_answers):
                    out["single"].append(q)
                    break
        if len(out["path"]) < per_shape:
            for f in facts[::3]:
                nxt = next(
                    (
                        g
                        for g in _sorted(kg.out_facts(f.object))
                        if g.relation != f.relation and g.object != entity
                    ),
                    None,
                )
                if nxt is None:
                    continue
                q = path_query(entity, [f.relation, nxt.relation])
                if _ok(kg, q, max_answers):
                    out["path"].append(q)
                    break
        if len(out["tree"]) < per_shape:
            for f in facts[::3]:
                other = next(
                    (
                        g
                        for g in _sorted(kg.in_facts(f.object))
                        if g.subject != entity and g.relation != f.relation
                    ),
                    None,
                )
                if other is None:
                    continue
                q = tree_query([(entity, f.relation), (other.subject, other.relation)])
                if _ok(kg, q, max_answers):
                    out["tree"].append(q)
                    break
        if all(len(v) >= per_shape for v in out.values()):
            break
    return out
