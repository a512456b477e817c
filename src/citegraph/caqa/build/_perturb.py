"""Structured attributions (§4.2.2): the supportive subgraph and its three perturbations.

* **supportive**: the extended query grounded for its answers (``Grounding.facts_for``).
* **insufficient**: a path query loses one random triple among those whose deletion leaves some
  answer underivable (a triple in every derivation of an answer); a tree or union query loses one
  random subject-to-answer branch (the branch's own patterns, for every binding); single-triple
  queries are not made insufficient. The remaining facts are checked not to derive every answer
  (:func:`~citegraph.caqa.queries.supports`); when every deletion still does (redundant paths)
  the category is unavailable.
* **contradictory**: every answer entity is replaced everywhere in the subgraph, each by a
  different non-answer entity of the same type (preferring the candidates that share the most
  types; without types, an entity from the answer relation's range). The statement still asserts
  the original answers, and the evidence derives none of them (checked): each answer is
  contradicted. Replacing one answer of a multi-answer query (an intersection with two answers,
  say) left the others derived, so the evidence supported part of the statement. §4.2.2 says
  "the answer entity" for intersection queries and "one of the answer entities" for union ones;
  here union queries have every answer replaced too, so that no part of the statement is
  supported (as the contradictory citation [3] of Fig. 1 supports none of the answer). When an
  answer has no unused candidate the category is unavailable, with the reason.
* **irrelevant**: a subgraph of the same structure (same number of facts, same shape, one
  relation per query pattern) that keeps the subject entities (:func:`subject_entities`) and
  shares no other entity and no relation with the supportive one, found by a seeded backtracking
  walk from the subjects through the KG (:func:`same_structure_walk`). Tried in turn: patterns
  in their own direction; patterns allowed to point the other way (the undirected shape is kept;
  the note counts them); and, for a tree whose branches cannot converge on a common new entity,
  both again from the first subject only (the note says so).

Each category that cannot be built is listed in ``unavailable`` with the reason.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa._types import CATEGORIES, Category, Fact, StructuredAttribution
from citegraph.caqa.build._extend import ExtendedQuery
from citegraph.caqa.build._walk import Neighbourhoods, same_structure_walk
from citegraph.caqa.queries import (
    CaqaKG,
    Grounding,
    LogicalQuery,
    QueryEdge,
    answers_over,
    is_variable,
    supports,
)
from citegraph.errors import ConfigError


class AttributionSet(BaseModel):
    """The structured attributions of one extended query, and the categories that failed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: dict[Category, StructuredAttribution] = Field(
        default_factory=dict, description="One evidence subgraph per category that was built."
    )
    unavailable: dict[Category, str] = Field(
        default_factory=dict, description="Category -> why it could not be built."
    )


@dataclass(frozen=True)
class _Context:
    kg: CaqaKG
    query: LogicalQuery
    grounding: Grounding
    answers: tuple[str, ...]
    support: tuple[Fact, ...]
    subjects: tuple[str, ...]

    def attribution(
        self,
        category: Category,
        facts: tuple[Fact, ...],
        note: str,
        *,
        removed: tuple[Fact, ...] = (),
        replaced: dict[str, str] | None = None,
    ) -> StructuredAttribution:
        ids = [i for f in facts for i in f.as_tuple()] + list(self.answers)
        return StructuredAttribution(
            category=category,
            facts=facts,
            labels=self.kg.labels(ids),
            answers=self.answers,
            note=note,
            removed=removed,
            replaced=replaced or {},
        )


def structured_attributions(
    kg: CaqaKG,
    extended: ExtendedQuery,
    rng: random.Random,
    *,
    categories: tuple[Category, ...] = CATEGORIES,
) -> AttributionSet:
    """Build the four categories' evidence subgraphs for an extended query (§4.2.2).

    Args:
        kg: The KG the query was grounded in.
        extended: The extended query and its grounding; the answers are its grounding's.
        rng: The random source. Every call draws one seed per category (all four, whichever
            are asked for), so a category's result does not depend on the others asked.
        categories: The categories to build.

    Returns:
        The built attributions and, for the others, the reason.

    Raises:
        ConfigError: an unknown category.
    """
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise ConfigError(f"unknown categories {unknown}; expected some of {CATEGORIES}")
    seeds = {c: rng.random() for c in CATEGORIES}
    query, grounding = extended.query, extended.grounding
    answers = grounding.answers
    if not answers:
        return AttributionSet(
            unavailable={c: "the query has no answers in the KG" for c in categories}
        )
    support = grounding.facts_for(query, answers)
    if not supports(query, support, answers):
        reason = "the grounded subgraph does not derive the answers"
        return AttributionSet(unavailable={c: reason for c in categories})
    ctx = _Context(kg, query, grounding, answers, support, subject_entities(extended))
    items: dict[Category, StructuredAttribution] = {}
    unavailable: dict[Category, str] = {}
    for category in categories:
        outcome = _BUILDERS[category](ctx, random.Random(seeds[category]))
        if isinstance(outcome, str):
            unavailable[category] = outcome
        else:
            items[category] = outcome
    return AttributionSet(items=items, unavailable=unavailable)


_Outcome = StructuredAttribution | str


def _supportive(ctx: _Context, rng: random.Random) -> _Outcome:
    note = f"grounded subgraph of the {ctx.query.shape} query for {len(ctx.answers)} answer(s)"
    return ctx.attribution("supportive", ctx.support, note)


def _branch_facts(ctx: _Context, branch: tuple[QueryEdge, ...]) -> tuple[Fact, ...]:
    """The facts of a branch's own patterns (those no other branch shares), for every binding."""
    others = {e for b in ctx.query.branches() if b != branch for e in b}
    own = [e for e in branch if e not in others] or list(branch)
    return ctx.grounding.facts_for(ctx.query, ctx.answers, own)


def _insufficient(ctx: _Context, rng: random.Random) -> _Outcome:
    shape = ctx.query.shape
    if shape == "single":
        return "single-triple queries are not made insufficient (§4.2.2)"
    options: list[tuple[Fact, ...]]
    if shape == "path":
        critical = _critical_facts(ctx)
        unit, options = "triple", [(f,) for f in ctx.support if critical is None or f in critical]
    else:
        unit, options = "branch", [_branch_facts(ctx, b) for b in ctx.query.branches()]
    order = list(range(len(options)))
    rng.shuffle(order)
    for i in order:
        removed = set(options[i])
        rest = tuple(f for f in ctx.support if f not in removed)
        if not removed or not rest:
            continue
        if not supports(ctx.query, rest, ctx.answers):
            note = f"deleted {unit} {i + 1} of {len(options)} from the {shape} subgraph"
            return ctx.attribution("insufficient", rest, note, removed=options[i])
    return f"no single {unit} deletion leaves the answers unsupported (redundant paths)"


def _critical_facts(ctx: _Context) -> set[Fact] | None:
    """Facts in every derivation of some answer (only their deletion can leave it unsupported);
    None when the grounding was cut and the derivations are not all known."""
    if ctx.grounding.truncated:
        return None
    known = set(ctx.support)
    common: dict[str, set[Fact]] = {}
    for binding in ctx.grounding.bindings:
        answer = binding.get(ctx.query.answer)
        if answer in ctx.answers:
            used = {f for f in ctx.query.facts(binding) if f in known}
            common[answer] = common[answer] & used if answer in common else used
    return set().union(*common.values())


def _all_answers(ctx: _Context) -> set[str]:
    """Every answer of the query in the KG (grounded again when the grounding was cut)."""
    if not ctx.grounding.truncated:
        return set(ctx.grounding.answers)
    return set(ctx.kg.ground(ctx.query, max_solutions=1_000_000).answers)


def _answer_range(kg: CaqaKG, query: LogicalQuery) -> set[str]:
    """Entities in the answer position of the relations that touch the answer, intersected."""
    found: set[str] | None = None
    for edge in query.edges:
        if query.answer not in edge.terms():
            continue
        here = kg.ids.relation_ends(edge.relation, objects=edge.object == query.answer)
        found = here if found is None else found & here
    return found or set()


def _replacement(
    ctx: _Context, old: str, exclude: set[str], rng: random.Random
) -> tuple[str, str] | str:
    """A non-answer entity to put in the place of answer ``old`` and how it was chosen, or why
    there is none. ``exclude``: the answers, the subgraph's entities, replacements taken."""
    kg = ctx.kg
    exclude = exclude | set(kg.same_name(old))  # a namesake would not read as a contradiction
    types = kg.types(old)
    if types:
        shared: dict[str, int] = defaultdict(int)
        for t in types:
            for member in kg.members(t):
                if member not in exclude:
                    shared[member] += 1
        if not shared:
            return f"no non-answer entity shares a type with answer {old}"
        best = max(shared.values())
        candidates = sorted(m for m, n in shared.items() if n == best)
        how = f"same type ({best} of {len(types)} types shared)"
    else:
        candidates = sorted(_answer_range(kg, ctx.query) - exclude)
        if not candidates:
            return f"answer {old} has no type and the relation range has no other entity"
        how = "type from relation range (the answer has no type)"
    return rng.choice(candidates), how


def _contradictory(ctx: _Context, rng: random.Random) -> _Outcome:
    first = rng.choice(sorted(ctx.answers))
    order = [first, *sorted(a for a in ctx.answers if a != first)]
    all_answers = _all_answers(ctx)
    exclude = all_answers | {i for f in ctx.support for i in (f.subject, f.object)}
    replaced: dict[str, str] = {}
    hows: list[str] = []
    for old in order:
        found = _replacement(ctx, old, exclude | set(replaced.values()), rng)
        if isinstance(found, str):
            if replaced:
                found += " once the other answers took their replacements"
            return found
        new, how = found
        if new == old or new in all_answers:  # guarded by ``exclude``; kept as a proof
            return f"replacement {new} is an answer"
        replaced[old] = new
        hows.append(f"{old} by {new}: {how}")

    def swap(entity: str) -> str:
        return replaced.get(entity, entity)

    facts = tuple(
        dict.fromkeys(Fact.of(swap(f.subject), f.relation, swap(f.object)) for f in ctx.support)
    )
    if answers_over(ctx.query, facts) & set(ctx.answers):  # every answer was replaced: a proof
        return "an original answer is still derived after the replacement"
    if len(replaced) == 1:
        note = f"replaced answer {hows[0]}"
    else:
        note = f"replaced all {len(replaced)} answers: " + "; ".join(hows)
    return ctx.attribution("contradictory", facts, note, replaced=replaced)


def subject_entities(extended: ExtendedQuery) -> tuple[str, ...]:
    """The subject entities an irrelevant subgraph keeps, in order of first appearance.

    They are the leaf constant entities of the extended query, except that an entity attached
    by the first intersection way is not a subject: the subject it was attached to is (the
    question is still about that entity; the attached one is a constraint on it).
    """
    query = extended.query
    degree: dict[str, int] = defaultdict(int)
    for e in query.edges:
        degree[e.subject] += 1
        degree[e.object] += 1
    leaves = [t for t in query.entities if degree[t] == 1]
    if extended.extension == "intersection-attach" and extended.added:
        fact = extended.added[0]
        new, old = (
            (fact.object, fact.subject)
            if fact.object not in extended.original.entities
            else (fact.subject, fact.object)
        )
        leaves = [old if t == new else t for t in leaves]
    return tuple(dict.fromkeys(leaves))


def _irrelevant(ctx: _Context, rng: random.Random) -> _Outcome:
    subjects = list(ctx.subjects)
    edge_of = _edge_index(ctx)
    attempts = [(subjects, False), (subjects, True)]
    if ctx.query.shape == "tree" and len(subjects) > 1:
        attempts += [(subjects[:1], False), (subjects[:1], True)]
    cache: Neighbourhoods = {}
    for kept, reversible in attempts:
        found = same_structure_walk(
            ctx.kg, ctx.support, edge_of, kept, rng, reversible=reversible, cache=cache
        )
        if found is not None:
            break
    else:
        return "no subgraph of the same structure avoids the supportive entities and relations"
    facts, reversed_patterns = found
    if len(kept) == len(subjects):
        note = f"same-structure walk from {len(kept)} subject(s)"
    else:
        note = (
            "no branches from every subject converge on a common new entity; "
            f"same-structure walk from the first subject {kept[0]} only"
        )
    if reversed_patterns:
        note += f"; {reversed_patterns} pattern(s) point the other way"
    old_entities = {i for f in ctx.support for i in (f.subject, f.object)}
    new_entities = {i for f in facts for i in (f.subject, f.object)}
    if old_entities & new_entities != set(kept) or {f.relation for f in facts} & {
        f.relation for f in ctx.support
    }:
        return "the walk overlapped the supportive subgraph"  # a bug guard, never expected
    return ctx.attribution("irrelevant", facts, note)


def _edge_index(ctx: _Context) -> dict[Fact, int]:
    """Which query pattern each supportive fact instantiates."""
    known = set(ctx.support)
    out: dict[Fact, int] = {}
    for binding in ctx.grounding.bindings:
        for j, edge in enumerate(ctx.query.edges):
            if all(t in binding or not is_variable(t) for t in edge.terms()):
                fact = edge.bind(binding)
                if fact in known:
                    out.setdefault(fact, j)
    return out


_BUILDERS = {
    "supportive": _supportive,
    "insufficient": _insufficient,
    "contradictory": _contradictory,
    "irrelevant": _irrelevant,
}
