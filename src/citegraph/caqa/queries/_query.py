"""Typed logical queries (§4.1, Table 3): single-triple, path-like, tree-like, union-tree.

A query is a set of triple patterns over entity ids, relation ids and variables (``?`` then
letters, digits and ``_``, not starting with ``__``: a term that starts with ``?`` and is not
such a name is refused, so no term can change the structure of
:meth:`LogicalQuery.to_sparql`), joined by ``and`` (a conjunctive query) or ``or`` (a union of
single-triple queries that share the answer variable). The answer variable is ``?a`` by default.
Patterns may point either way: SimpleQuestions' inverse relations give ``(?a, P1303, Q6607)``.

The **shape** is read off the structure (undirected, the patterns must form a tree):

* ``union``: operator ``or`` with two or more patterns;
* ``single``: one pattern;
* ``tree``: the answer meets two or more patterns, or some term meets three or more (branches that
  converge before the last hop);
* ``path``: anything else, a chain from a subject entity to the answer.

Extension by attaching a constant fact to a subject entity (Table 3, the first intersection way)
keeps paths paths and trees trees; adding a branch ``(e, r, ?a)`` makes a tree.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from citegraph.caqa._types import SHAPE_COMPLEXITY, Complexity, Fact, QueryShape
from citegraph.errors import DataError
from citegraph.kg import sparql_iri

#: A variable: ``?`` then a SPARQL-safe name (``?__type`` is ``to_sparql``'s own).
_VARIABLE = re.compile(r"\?(?!__)[A-Za-z0-9_]+")


def is_variable(term: str) -> bool:
    """Whether a query term is a variable (``?x``)."""
    return term.startswith("?")


def _variable_or_constant(term: str) -> str:
    """``term``, when it is a constant or a well-formed variable; else ValueError."""
    if is_variable(term) and not _VARIABLE.fullmatch(term):
        raise ValueError(
            f"{term!r} is not a query variable: '?' then letters, digits and '_' (not '__')"
        )
    return term


class QueryEdge(BaseModel):
    """One triple pattern: ``subject --relation--> object``; either end may be a variable."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: str
    relation: str
    object: str

    @field_validator("subject", "object")
    @classmethod
    def _term(cls, term: str) -> str:
        return _variable_or_constant(term)

    @field_validator("relation")
    @classmethod
    def _relation(cls, relation: str) -> str:
        if is_variable(relation):
            raise ValueError(f"a relation is an id, not a variable: {relation!r}")
        return relation

    def terms(self) -> tuple[str, str]:
        """``(subject, object)``."""
        return (self.subject, self.object)

    def bound_by(self, binding: Mapping[str, str]) -> bool:
        """Whether ``binding`` binds every variable of this pattern."""
        return all(t in binding or not is_variable(t) for t in self.terms())

    def bind(self, binding: dict[str, str]) -> Fact:
        """The fact this pattern becomes under ``binding`` (every variable must be bound)."""
        return Fact.of(
            binding.get(self.subject, self.subject) if is_variable(self.subject) else self.subject,
            self.relation,
            binding.get(self.object, self.object) if is_variable(self.object) else self.object,
        )


class LogicalQuery(BaseModel):
    """A logical query whose answers are the bindings of :attr:`answer`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    edges: tuple[QueryEdge, ...] = Field(min_length=1)
    operator: Literal["and", "or"] = "and"
    answer: str = "?a"
    answer_types: tuple[str, ...] = Field(
        default=(),
        description="The answer must be an instance of one of these types (GrailQA class node).",
    )

    @model_validator(mode="after")
    def _check(self) -> LogicalQuery:
        _variable_or_constant(self.answer)
        if not is_variable(self.answer):
            raise ValueError(f"the answer {self.answer!r} must be a variable ('?a')")
        if not any(self.answer in e.terms() for e in self.edges):
            raise ValueError(f"no pattern mentions the answer variable {self.answer}")
        if self.operator == "or":
            for e in self.edges:
                if self.answer not in e.terms() or all(is_variable(t) for t in e.terms()):
                    raise ValueError("a union query joins patterns (entity, relation, ?a)")
        else:
            _check_tree(self.edges)
        return self

    # ------------------------------------------------------------------ structure
    @property
    def shape(self) -> QueryShape:
        """``single``, ``path``, ``tree`` or ``union`` (see the module docstring)."""
        if len(self.edges) == 1:
            return "single"
        if self.operator == "or":
            return "union"
        degree = _degrees(self.edges)
        if degree[self.answer] >= 2 or max(degree.values()) >= 3:
            return "tree"
        return "path"

    @property
    def complexity(self) -> Complexity:
        """The attribution complexity a sample of this query has."""
        return SHAPE_COMPLEXITY[self.shape]

    @property
    def variables(self) -> tuple[str, ...]:
        """Variables in order of first appearance (the answer first)."""
        seen = [self.answer]
        for e in self.edges:
            for t in e.terms():
                if is_variable(t) and t not in seen:
                    seen.append(t)
        return tuple(seen)

    @property
    def entities(self) -> tuple[str, ...]:
        """Constant entity ids, in order of first appearance."""
        seen: list[str] = []
        for e in self.edges:
            for t in e.terms():
                if not is_variable(t) and t not in seen:
                    seen.append(t)
        return tuple(seen)

    @property
    def relations(self) -> tuple[str, ...]:
        """Relation ids, in order of first appearance."""
        return tuple(dict.fromkeys(e.relation for e in self.edges))

    def branches(self) -> list[tuple[QueryEdge, ...]]:
        """The subject-to-answer paths: for each constant entity of degree one (a leaf), the
        patterns on the way from it to the answer. A union query has one branch per pattern."""
        if self.operator == "or":
            return [(e,) for e in self.edges]
        degree = _degrees(self.edges)
        leaves = [t for t in self.entities if degree[t] == 1]
        return [_path_between(self.edges, leaf, self.answer) for leaf in leaves]

    # ------------------------------------------------------------------ SPARQL
    def to_sparql(
        self,
        entity_iri: Callable[[str], str],
        relation_iri: Callable[[str], str],
        *,
        type_iri: str | None = None,
        limit: int | None = None,
    ) -> str:
        """SPARQL 1.1 text selecting every variable (``SELECT DISTINCT``).

        Every IRI goes through :func:`~citegraph.kg.sparql_iri` and every variable was checked
        when the query was made, so no term can change the query's structure.

        Args:
            entity_iri: Maps an entity id to its full IRI (without angle brackets).
            relation_iri: Maps a relation id to its full IRI.
            type_iri: The "instance of" predicate used for :attr:`answer_types`.
            limit: A ``LIMIT`` on the solutions.

        Raises:
            KGQueryError: an id maps to text that cannot be an IRI (a space, ``>``, ``{``...).
        """

        def term(t: str, iri: Callable[[str], str]) -> str:
            return t if is_variable(t) else sparql_iri(iri(t))

        patterns = [
            " ".join(
                (
                    term(e.subject, entity_iri),
                    sparql_iri(relation_iri(e.relation)),
                    term(e.object, entity_iri),
                    ".",
                )
            )
            for e in self.edges
        ]
        body = (
            " UNION ".join("{ " + p + " }" for p in patterns)
            if self.operator == "or"
            else " ".join(patterns)
        )
        if self.answer_types and type_iri:
            values = " ".join(sparql_iri(entity_iri(t)) for t in self.answer_types)
            body += f" {self.answer} {sparql_iri(type_iri)} ?__type . VALUES ?__type {{ {values} }}"
        select = " ".join(self.variables)
        text = f"SELECT DISTINCT {select} WHERE {{ {body} }}"
        return text + (f" LIMIT {int(limit)}" if limit else "")

    def facts(self, binding: dict[str, str]) -> list[Fact]:
        """The facts of this query under one solution (union: only the patterns it satisfies
        are meaningful; the caller filters them against the KG)."""
        return [e.bind(binding) for e in self.edges if e.bound_by(binding)]

    def to_json(self) -> dict:
        """The JSON form stored in samples (``LogicalQuery.model_validate`` reads it back)."""
        return self.model_dump(mode="json")

    def describe(self, label: Callable[[str], str] = str) -> str:
        """A readable one-line form: ``[(Mexico, continent, ?a)]`` joined by ``∧`` or ``∨``."""
        sep = " ∨ " if self.operator == "or" else " ∧ "
        return sep.join(
            f"({label(e.subject) if not is_variable(e.subject) else e.subject}, "
            f"{label(e.relation)}, "
            f"{label(e.object) if not is_variable(e.object) else e.object})"
            for e in self.edges
        )


def _degrees(edges: tuple[QueryEdge, ...]) -> dict[str, int]:
    degree: dict[str, int] = defaultdict(int)
    for e in edges:
        degree[e.subject] += 1
        degree[e.object] += 1
    return degree


def _check_tree(edges: tuple[QueryEdge, ...]) -> None:
    """Patterns of a conjunctive query must form one undirected tree (connected, no cycle)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for e in edges:
        if e.subject == e.object:
            raise ValueError(f"pattern {e.subject} {e.relation} {e.object} is a self-loop")
        a, b = find(e.subject), find(e.object)
        if a == b:
            raise ValueError("the patterns form a cycle; only tree-shaped queries are supported")
        parent[a] = b
    roots = {find(t) for e in edges for t in e.terms()}
    if len(roots) != 1:
        raise ValueError("the patterns are not connected")


def _path_between(edges: tuple[QueryEdge, ...], start: str, end: str) -> tuple[QueryEdge, ...]:
    adjacent: dict[str, list[QueryEdge]] = defaultdict(list)
    for e in edges:
        adjacent[e.subject].append(e)
        adjacent[e.object].append(e)
    stack: list[tuple[str, tuple[QueryEdge, ...]]] = [(start, ())]
    seen = {start}
    while stack:
        node, path = stack.pop()
        if node == end:
            return path
        for e in adjacent[node]:
            other = e.object if e.subject == node else e.subject
            if other not in seen:
                seen.add(other)
                stack.append((other, (*path, e)))
    raise DataError(f"no path from {start} to {end}")  # unreachable for validated queries


def single(subject: str, relation: str, obj: str) -> LogicalQuery:
    """A single-triple query; one of ``subject`` / ``obj`` is the answer ``?a``."""
    return LogicalQuery(edges=(QueryEdge(subject=subject, relation=relation, object=obj),))


def path_query(
    subject: str, relations: list[str], *, inverse: list[bool] | None = None
) -> LogicalQuery:
    """``[subject, r0, ?v1, ..., r_{n-1}, ?a]``: a chain of relations from ``subject``.

    ``inverse[i]`` walks relation ``i`` backwards (``(?next, r_i, ?prev)``).
    """
    inverse = inverse or [False] * len(relations)
    terms = [subject] + [f"?v{i}" for i in range(1, len(relations))] + ["?a"]
    edges = []
    for i, rel in enumerate(relations):
        s, o = terms[i], terms[i + 1]
        edges.append(
            QueryEdge(subject=o, relation=rel, object=s)
            if inverse[i]
            else QueryEdge(subject=s, relation=rel, object=o)
        )
    return LogicalQuery(edges=tuple(edges))


def tree_query(branches: list[tuple[str, str]]) -> LogicalQuery:
    """``∧_i (e_i, r_i, ?a)``: several subject entities converging on the answer."""
    return LogicalQuery(
        edges=tuple(QueryEdge(subject=e, relation=r, object="?a") for e, r in branches)
    )


def union_query(subjects: list[str], relation: str) -> LogicalQuery:
    """``∨_i (e_i, r, ?a)``: the union-tree query of §4.2.1."""
    return LogicalQuery(
        edges=tuple(QueryEdge(subject=e, relation=relation, object="?a") for e in subjects),
        operator="or",
    )
