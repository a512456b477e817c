"""Extension of KG queries (§4.2.1, Table 3): union over same-name subjects, and intersection.

==================  =====================================================  ==================
original shape      extensions drawn (equally likely)                      resulting shape
==================  =====================================================  ==================
single              union, intersection-attach, intersection-branch, none  union, path, tree,
                                                                           single
path (n >= 2)       intersection-attach, intersection-branch               path, tree
tree                intersection-attach, intersection-branch               tree, tree
union               not extended further                                   union
==================  =====================================================  ==================

* **union**: the other entities named like the subject ``e0`` that have the relation ``r0``
  give ``(e0, r0, ?a) ∨ (e1, r0, ?a) ∨ ... ∨ (em, r0, ?a)``.
* **intersection-attach** (first way): a KG fact linking a subject entity (the path's unique
  one, a random one of a tree) to a new entity by a relation the query does not use is added
  as a constant pattern; the shape is kept (a single becomes a two-hop path).
* **intersection-branch** (second way): a pattern ``(e, r, ?a)`` (or ``(?a, r, e)``) with a new
  relation whose answers meet the query's is added; the result is a tree.

The extended query is grounded again; it must have between 1 and ``max_answers`` answers. When
the drawn extension is impossible the others are tried in a seeded order, then ``none``, and the
note says why, so callers can count the fallbacks.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa._types import Extension, Fact
from citegraph.caqa.queries import CaqaKG, Grounding, LogicalQuery, QueryEdge, is_variable
from citegraph.errors import ConfigError

UnionPartners = Literal["same-name", "same-type"]

#: Answers probed (at most) when looking for a branch that meets the query's answers.
MAX_BRANCH_PROBES = 200
#: Facts read per probed answer and direction (hubs have thousands; a few hundred suffice).
MAX_FACTS_PER_PROBE = 300
#: Branch candidates grounded (at most) before the branch extension gives up.
MAX_BRANCH_TRIES = 5


class ExtendedQuery(BaseModel):
    """A KGQA query after extension, with the grounding of the extended query."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    original: LogicalQuery = Field(description="The KGQA dataset's query.")
    query: LogicalQuery = Field(description="The extended query (the original for 'none').")
    extension: Extension = Field(description="The extension applied.")
    drawn: Extension = Field(
        description="The extension drawn (or forced) before any fallback; differs from "
        "``extension`` when the drawn one was impossible."
    )
    grounding: Grounding = Field(description="The extended query grounded in the KG.")
    added: tuple[Fact, ...] = Field(
        default=(),
        description="Facts the extension introduced: the attached fact, or the new branches' "
        "facts for the answers.",
    )
    note: str = Field(default="", description="What was chosen, and why any fallback happened.")


def allowed_extensions(query: LogicalQuery) -> tuple[Extension, ...]:
    """The extensions Table 3 allows for the query's shape (union queries get none)."""
    if query.shape == "single":
        return ("union", "intersection-attach", "intersection-branch", "none")
    if query.shape in ("path", "tree"):
        return ("intersection-attach", "intersection-branch")
    return ()


def extend_query(
    kg: CaqaKG,
    query: LogicalQuery,
    rng: random.Random,
    *,
    max_answers: int = 10,
    choice: Extension | None = None,
    union_partners: UnionPartners = "same-name",
) -> ExtendedQuery:
    """Extend ``query`` by one of Table 3's rules, drawn with ``rng`` (see the module docstring).

    Args:
        kg: The KG the query is grounded in.
        query: The original query.
        rng: The random source; the result is deterministic for its seed.
        max_answers: The extended query must have 1 to this many answers.
        choice: Force one extension (no fallback to the others; ``none`` when impossible).
        union_partners: ``same-name`` (the paper: entities named like the subject) or
            ``same-type`` (citegraph's option for KGs without namesakes, such as CoDEx-S: one
            other entity sharing a type with the subject and having the relation; the
            question then names both).

    Returns:
        The extended query; ``extension == "none"`` with a note when nothing applied.

    Raises:
        ConfigError: ``max_answers < 1``, or ``choice`` is not allowed for the query's shape.
    """
    if max_answers < 1:
        raise ConfigError(f"max_answers must be at least 1, got {max_answers}")
    base = kg.ground(query)
    allowed = allowed_extensions(query)
    if choice is not None and choice != "none" and choice not in allowed:
        raise ConfigError(f"extension {choice!r} does not apply to a {query.shape} query")

    def unchanged(drawn: Extension, note: str) -> ExtendedQuery:
        if not base.answers:
            note += "; the query has no answers in the KG"
        elif base.truncated or len(base.answers) > max_answers:
            note += f"; the query has more than {max_answers} answers"
        return ExtendedQuery(
            original=query, query=query, extension="none", drawn=drawn, grounding=base, note=note
        )

    if not allowed:
        return unchanged("none", "union queries are not extended further (§4.2.1)")
    if choice is not None:
        drawn: Extension = choice
        order = [choice]
    else:
        drawn = rng.choice(allowed)
        rest = [e for e in allowed if e not in (drawn, "none")]
        rng.shuffle(rest)
        order = [drawn, *rest]
    reasons: list[str] = []
    for ext in order:
        if ext == "none":
            return unchanged(drawn, "drawn: none")
        if ext == "union":
            outcome = _try_union(kg, query, base, rng, max_answers, partners=union_partners)
        else:
            outcome = _TRIES[ext](kg, query, base, rng, max_answers)
        if isinstance(outcome, str):
            reasons.append(f"{ext}: {outcome}")
            continue
        extended, grounding, added, how = outcome
        note = how if ext == drawn else f"{how} (fallback; {'; '.join(reasons)})"
        return ExtendedQuery(
            original=query,
            query=extended,
            extension=ext,
            drawn=drawn,
            grounding=grounding,
            added=added,
            note=note,
        )
    return unchanged(drawn, "no extension possible: " + "; ".join(reasons))


_Outcome = tuple[LogicalQuery, Grounding, tuple[Fact, ...], str] | str


def _count_problem(grounding: Grounding, max_answers: int) -> str | None:
    if not grounding.answers:
        return "the extended query has no answers"
    if grounding.truncated or len(grounding.answers) > max_answers:
        return f"the extended query has more than {max_answers} answers"
    return None


def _with_edges(query: LogicalQuery, edges: tuple[QueryEdge, ...], operator: str) -> LogicalQuery:
    return LogicalQuery(
        edges=edges,
        operator=operator,  # type: ignore[arg-type]
        answer=query.answer,
        answer_types=query.answer_types,
    )


def _leaf_subjects(query: LogicalQuery) -> list[str]:
    """Constant entities that end a branch (the subject entities), sorted."""
    degree: dict[str, int] = {}
    for e in query.edges:
        for t in e.terms():
            degree[t] = degree.get(t, 0) + 1
    return sorted(t for t in query.entities if degree[t] == 1)


def _same_type_partners(kg: CaqaKG, e0: str) -> list[str]:
    """Entities sharing a type with ``e0`` (sorted, ``e0`` excluded)."""
    return sorted({m for t in kg.types(e0) for m in kg.members(t)} - {e0})


def _try_union(
    kg: CaqaKG,
    query: LogicalQuery,
    base: Grounding,
    rng: random.Random,
    max_answers: int,
    *,
    partners: UnionPartners = "same-name",
) -> _Outcome:
    edge = query.edges[0]
    forward = edge.object == query.answer
    e0 = edge.subject if forward else edge.object
    if is_variable(e0):
        return "the pattern has no subject entity"
    same_name = partners == "same-name"
    candidates = kg.same_name(e0) if same_name else _same_type_partners(kg, e0)
    kind = "named like" if same_name else "sharing a type with"
    if not candidates:
        return f"no other entity is {kind} {e0}"
    if same_name:
        others = [e for e in candidates if kg.has_relation(e, edge.relation, outgoing=forward)]
    else:  # one partner: the first in a seeded order that has the relation
        shuffled = list(candidates)
        rng.shuffle(shuffled)
        partner = next(
            (e for e in shuffled if kg.has_relation(e, edge.relation, outgoing=forward)), None
        )
        others = [] if partner is None else [partner]
    if not others:
        return f"no entity {kind} {e0} has relation {edge.relation}"
    new = tuple(
        QueryEdge(subject=e, relation=edge.relation, object=query.answer)
        if forward
        else QueryEdge(subject=query.answer, relation=edge.relation, object=e)
        for e in others
    )
    extended = _with_edges(query, (edge, *new), "or")
    grounding = kg.ground(extended)
    problem = _count_problem(grounding, max_answers)
    if problem:
        return problem
    how = f"union over {len(others)} {partners} entit{'y' if len(others) == 1 else 'ies'}"
    return extended, grounding, grounding.facts_for(extended, edges=new), how


def _try_attach(
    kg: CaqaKG, query: LogicalQuery, base: Grounding, rng: random.Random, max_answers: int
) -> _Outcome:
    problem = _count_problem(base, max_answers)
    if problem:
        return problem.replace("extended query", "query") + " (attaching keeps them)"
    subjects = _leaf_subjects(query)
    rng.shuffle(subjects)
    answers = set(base.answers)
    for subject in subjects:
        candidates = sorted(
            {
                f
                for f in kg.facts_of(subject)
                if f.relation not in query.relations
                and (other := f.object if f.subject == subject else f.subject) != subject
                and other not in query.entities
                and other not in answers
            },
            key=Fact.as_tuple,
        )
        if not candidates:
            continue
        fact = rng.choice(candidates)
        edge = QueryEdge(subject=fact.subject, relation=fact.relation, object=fact.object)
        extended = _with_edges(query, (*query.edges, edge), "and")
        grounding = kg.ground(extended)
        problem = _count_problem(grounding, max_answers)
        if problem:
            return problem
        return extended, grounding, (fact,), f"attached {fact.as_tuple()} to subject {subject}"
    return "no fact links a subject entity to a new entity by a relation not in the query"


def _try_branch(
    kg: CaqaKG, query: LogicalQuery, base: Grounding, rng: random.Random, max_answers: int
) -> _Outcome:
    if not base.answers:
        return "the query has no answers to intersect with"
    answers = sorted(base.answers)
    if len(answers) > MAX_BRANCH_PROBES:
        answers = sorted(rng.sample(answers, MAX_BRANCH_PROBES))
    all_answers = set(base.answers)
    meets: dict[tuple[bool, str, str], set[str]] = {}
    for a in answers:
        for pattern in _patterns_at(kg, a, MAX_FACTS_PER_PROBE):
            meets.setdefault(pattern, set()).add(a)
    valid = sorted(
        key
        for key, met in meets.items()
        if key[1] not in query.relations
        and key[2] not in query.entities
        and key[2] not in all_answers
        and len(met) <= max_answers
    )
    if not valid:
        return f"no new relation meets the answers with at most {max_answers} answers"
    rng.shuffle(valid)
    problem = "no branch candidate grounded"
    for into_answer, relation, entity in valid[:MAX_BRANCH_TRIES]:
        edge = (
            QueryEdge(subject=entity, relation=relation, object=query.answer)
            if into_answer
            else QueryEdge(subject=query.answer, relation=relation, object=entity)
        )
        extended = _with_edges(query, (*query.edges, edge), "and")
        grounding = kg.ground(extended)
        found = _count_problem(grounding, max_answers)
        if found:
            problem = found
            continue
        how = f"added branch ({edge.subject}, {relation}, {edge.object})"
        return extended, grounding, grounding.facts_for(extended, edges=(edge,)), how
    return problem


def _patterns_at(kg: CaqaKG, answer: str, limit: int) -> Iterator[tuple[bool, str, str]]:
    """``(into_answer, relation, entity)`` for up to ``limit`` facts each way: ``(e, r, ?a)``
    when ``into_answer``, else ``(?a, r, e)``, among the first ``limit`` facts read each way."""
    for outgoing in (True, False):
        for s, r, o in kg.ids.edges(answer, outgoing=outgoing, scan=limit):
            yield (not outgoing, r, o if outgoing else s)


_TRIES = {
    "union": _try_union,
    "intersection-attach": _try_attach,
    "intersection-branch": _try_branch,
}
