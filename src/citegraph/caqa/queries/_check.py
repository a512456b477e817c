"""A tiny query evaluator over a set of facts, to prove the attribution categories by construction.

:func:`answers_over` evaluates a :class:`~citegraph.caqa.LogicalQuery` over a handful of facts
(a subgraph, not the KG) with a backtracking join; :func:`supports` says whether those facts
alone derive every given answer. The perturbations of §4.2.2 use it: a supportive subgraph must
support the answers, an insufficient one must not.

The answer-type constraint (:attr:`LogicalQuery.answer_types`) is ignored: a subgraph carries
no types, and the categories are about the facts a citation states.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from citegraph.caqa._types import Fact
from citegraph.caqa.queries._query import LogicalQuery, QueryEdge, is_variable


def answers_over(query: LogicalQuery, facts: Iterable[Fact]) -> set[str]:
    """The answers ``query`` has when only ``facts`` are known.

    An ``and`` query is a conjunction (every pattern must match under one binding); an ``or``
    query is the union of its patterns' answers.

    Args:
        query: The logical query.
        facts: The known facts.

    Returns:
        The answer variable's bindings.
    """
    by_relation: dict[str, list[Fact]] = defaultdict(list)
    for fact in dict.fromkeys(facts):
        by_relation[fact.relation].append(fact)
    if query.operator == "or":
        found: set[str] = set()
        for edge in query.edges:
            for binding in _solve((edge,), by_relation, {}):
                found.add(binding[query.answer])
        return found
    ordered = _join_order(query.edges)
    return {b[query.answer] for b in _solve(ordered, by_relation, {})}


def supports(query: LogicalQuery, facts: Iterable[Fact], answers: Iterable[str]) -> bool:
    """Whether ``facts`` alone derive every answer in ``answers`` (true for no answers).

    Args:
        query: The logical query.
        facts: The citation's facts.
        answers: The answers the statement asserts.
    """
    return set(answers) <= answers_over(query, facts)


def _join_order(edges: tuple[QueryEdge, ...]) -> tuple[QueryEdge, ...]:
    """Patterns ordered so that each one (after the first) shares a term with an earlier one,
    starting from a pattern with a constant: the join then always extends bound terms."""
    remaining = list(edges)
    start = next((e for e in remaining if not all(is_variable(t) for t in e.terms())), remaining[0])
    ordered = [start]
    remaining.remove(start)
    bound = {t for t in start.terms()}
    while remaining:
        nxt = next((e for e in remaining if bound & set(e.terms())), remaining[0])
        ordered.append(nxt)
        remaining.remove(nxt)
        bound.update(nxt.terms())
    return tuple(ordered)


def _solve(
    edges: tuple[QueryEdge, ...],
    by_relation: dict[str, list[Fact]],
    binding: dict[str, str],
) -> Iterable[dict[str, str]]:
    """Depth-first: every extension of ``binding`` that satisfies ``edges``."""
    if not edges:
        yield binding
        return
    edge, rest = edges[0], edges[1:]
    for fact in by_relation.get(edge.relation, ()):
        extended = _match(edge, fact, binding)
        if extended is not None:
            yield from _solve(rest, by_relation, extended)


def _match(edge: QueryEdge, fact: Fact, binding: dict[str, str]) -> dict[str, str] | None:
    out = dict(binding)
    for term, value in ((edge.subject, fact.subject), (edge.object, fact.object)):
        if is_variable(term):
            if out.setdefault(term, value) != value:
                return None
        elif term != value:
            return None
    return out
