"""Deterministic English templates for CAQA text (§4.2.3 without an LLM).

The paper writes citations, extended questions and answer statements with GPT-3.5-turbo
(Appendix A, Tables 8-10; :mod:`citegraph.caqa.build._textualisers`). These templates do the
same jobs with no model, so a benchmark can be built offline and reproducibly
(``caqa-template-v1``).

A relation label is phrased by its form:

=====================  ==========================  ===================================
label form             fact sentence               question about the object / subject
=====================  ==========================  ===================================
noun (``continent``)   The continent of S is O.    What is the continent of S? /
                                                   What has O as its continent?
ends in a preposition  S is part of O.             What is the entity that S is part
(``part of``)                                      of? / What is part of O?
starts with a verb     S shares border with O.     What is the entity that S shares
(``shares border``)                                border with? / What shares border
                                                   with O?
=====================  ==========================  ===================================

Relation labels are used as given, with underscores read as spaces and title-case words
lower-cased (GrailQA ``Productions`` -> ``productions``; ``TV`` stays). A label ``inverse of
r`` swaps subject and object. Ids without a label fall back to the id (a dotted Freebase
relation id to its last segment).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from citegraph.caqa._types import Extension, Fact
from citegraph.caqa.queries import LogicalQuery, QueryEdge, is_variable
from citegraph.errors import DataError

TEMPLATE_VERSION = "caqa-template-v1"

Form = Literal["noun", "prep", "verb"]
_PREPOSITIONS = frozenset(
    [
        "of",
        "in",
        "at",
        "by",
        "to",
        "for",
        "from",
        "with",
        "on",
        "after",
        "into",
        "as",
        "about",
        "under",
        "over",
    ]
)
_VERB_STARTS = frozenset(["has", "have", "is", "was", "are", "were", "shares", "contains"])


# ---------------------------------------------------------------------------- names
def entity_name(entity: str, labels: Mapping[str, str]) -> str:
    """The label of ``entity``, or the id itself."""
    return labels.get(entity) or entity


def relation_text(relation: str, labels: Mapping[str, str]) -> str:
    """The relation's label as it reads inside a sentence (see the module docstring)."""
    label = labels.get(relation)
    if not label:
        label = relation.rsplit(".", 1)[-1] if "." in relation and " " not in relation else relation
    words = label.replace("_", " ").split()
    return " ".join(
        w.lower() if len(w) > 1 and w[0].isupper() and w[1:].islower() else w for w in words
    )


def join_names(names: Sequence[str], conjunction: str = "and") -> str:
    """``A``, ``A and B``, ``A, B and C`` (duplicates dropped, order kept)."""
    items = list(dict.fromkeys(names))
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def _form(rel: str) -> Form:
    words = rel.split()
    if words and words[0] in _VERB_STARTS:
        return "verb"
    if words and words[-1] in _PREPOSITIONS:
        return "prep"
    return "noun"


def _orient(s: str, relation: str, o: str, labels: Mapping[str, str]) -> tuple[str, str, str]:
    """``(subject, relation text, object)``, swapped when the label reads ``inverse of r``."""
    rel = relation_text(relation, labels)
    if rel.startswith("inverse of ") and len(rel) > len("inverse of "):
        return o, rel[len("inverse of ") :], s
    return s, rel, o


def _clause(subject: str, rel: str, objects: str) -> str:
    """A fact as a clause: ``the continent of Mexico is North America``."""
    form = _form(rel)
    if form == "verb":
        return f"{subject} {rel} {objects}"
    if form == "prep":
        return f"{subject} is {rel} {objects}"
    return f"the {rel} of {subject} is {objects}"


def _sentence(clause: str) -> str:
    text = clause[0].upper() + clause[1:] if clause.startswith("the ") else clause
    return text + "."


# ---------------------------------------------------------------------------- citations
def verbalise_facts(facts: Sequence[Fact], labels: Mapping[str, str]) -> str:
    """One sentence per (subject, relation) group, objects joined ``A, B and C``.

    Example: ``The continent of Mexico is North America. The official language of Canada is
    English and French.`` Groups appear in the order of their first fact; ``""`` for no facts.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for fact in facts:
        s, rel, o = _orient(fact.subject, fact.relation, fact.object, labels)
        groups.setdefault((s, rel), []).append(entity_name(o, labels))
    return " ".join(
        _sentence(_clause(entity_name(s, labels), rel, join_names(objects)))
        for (s, rel), objects in groups.items()
    )


# ---------------------------------------------------------------------------- questions
_Clause = tuple[str, str]  # (verb, complement): ("is", "the continent of Mexico")


def _link(rel: str, other: str, into_var: bool) -> tuple[_Clause, str]:
    """How a variable relates to ``other`` (a name or a noun phrase) through one pattern.

    Returns the predicate clause (for the question) and the noun phrase (for an intermediate).
    ``into_var``: the pattern is ``(other, rel, var)``; else ``(var, rel, other)``.
    """
    form = _form(rel)
    if into_var:
        if form == "noun":
            np = f"the {rel} of {other}"
        else:
            np = (
                f"the entity that {other} is {rel}"
                if form == "prep"
                else (f"the entity that {other} {rel}")
            )
        return ("is", np), np
    if form == "noun":
        return ("has", f"{other} as its {rel}"), f"the entity whose {rel} is {other}"
    clause = ("is", f"{rel} {other}") if form == "prep" else ("", f"{rel} {other}")
    return clause, f"the entity that {_predicate([clause])}"


def _predicate(clauses: Sequence[_Clause], conjunction: str = "and") -> str:
    """Clauses sharing a verb share it: ``is the r1 of A and the r2 of B and has C as its r3``."""
    groups: dict[str, list[str]] = {}
    for verb, complement in clauses:
        groups.setdefault(verb, []).append(complement)
    parts = [f"{verb} {join_names(comps, conjunction)}".strip() for verb, comps in groups.items()]
    return f" {conjunction} ".join(parts)


def _links(
    query: LogicalQuery, var: str, parent: QueryEdge | None, labels: Mapping[str, str]
) -> list[tuple[_Clause, str]]:
    """Clause and noun phrase of every pattern at ``var`` except ``parent`` (the way to the
    answer), recursing into the variables on the other side."""
    out: list[tuple[_Clause, str]] = []
    for edge in query.edges:
        if edge == parent or var not in edge.terms():
            continue
        s, rel, o = _orient(edge.subject, edge.relation, edge.object, labels)
        into_var = o == var
        other = s if into_var else o
        out.append(_link(rel, _noun_phrase(query, other, edge, labels), into_var))
    return out


def _noun_phrase(
    query: LogicalQuery, term: str, parent: QueryEdge, labels: Mapping[str, str]
) -> str:
    if not is_variable(term):
        return entity_name(term, labels)
    links = _links(query, term, parent, labels)
    if len(links) == 1:
        return links[0][1]
    return f"the entity that {_predicate([c for c, _ in links])}" if links else "something"


def _wh(query: LogicalQuery, labels: Mapping[str, str]) -> str:
    if query.answer_types and labels.get(query.answer_types[0]):
        return f"Which {relation_text(query.answer_types[0], labels)}"
    return "What"


def question_from_query(query: LogicalQuery, labels: Mapping[str, str]) -> str:
    """A question for a query that has none (sampled queries).

    ``(e, r, ?a)`` -> "What is the r of e?"; ``(?a, r, e)`` -> "What has e as its r?"; a path
    nests ("What is the r2 of the r1 of e?"); a tree conjoins ("What is the r1 of e1 and the r2
    of e2?"); a union disjoins its subjects, so same-name subjects read as one.
    """
    if query.operator == "or":
        merged: dict[tuple[str, bool], list[str]] = {}
        for edge in query.edges:
            s, rel, o = _orient(edge.subject, edge.relation, edge.object, labels)
            into_var = o == query.answer
            merged.setdefault((rel, into_var), []).append(entity_name(s if into_var else o, labels))
        parts = [
            _link(rel, join_names(names, "or"), into)[0] for (rel, into), names in merged.items()
        ]
        return f"{_wh(query, labels)} {_predicate(parts, 'or')}?"
    clauses = [c for c, _ in _links(query, query.answer, None, labels)]
    return f"{_wh(query, labels)} {_predicate(clauses)}?"


# ---------------------------------------------------------------------------- extension
def _new_edges(
    original: LogicalQuery, extended: LogicalQuery, added: Sequence[Fact]
) -> list[QueryEdge]:
    old = set(original.edges)
    new = [e for e in extended.edges if e not in old]
    if new:
        return new
    return [QueryEdge(subject=f.subject, relation=f.relation, object=f.object) for f in added]


def _branch_clause(edge: QueryEdge, labels: Mapping[str, str]) -> str:
    s, rel, o = _orient(edge.subject, edge.relation, edge.object, labels)
    into_var = is_variable(o)
    name = entity_name(s if into_var else o, labels)
    form = _form(rel)
    if into_var:  # (e, r, ?a): the answer is the r of e
        if form == "noun":
            return f"which is the {rel} of {name}"
        return f"which {name} is {rel}" if form == "prep" else f"which {name} {rel}"
    if form == "noun":  # (?a, r, e)
        return f"whose {rel} is {name}"
    return f"which is {rel} {name}" if form == "prep" else f"which {rel} {name}"


def _appositive(rel: str, other: str, entity_is_subject: bool) -> str:
    form = _form(rel)
    if entity_is_subject:  # (e, r, other)
        if form == "noun":
            return f"whose {rel} is {other}"
        return f"which is {rel} {other}" if form == "prep" else f"which {rel} {other}"
    if form == "noun":  # (other, r, e)
        return f"the {rel} of {other}"
    return f"which {other} is {rel}" if form == "prep" else f"which {other} {rel}"


def _attach(
    question: str, edge: QueryEdge, original: LogicalQuery, labels: Mapping[str, str]
) -> str:
    s, rel, o = _orient(edge.subject, edge.relation, edge.object, labels)
    entity_is_subject = s in original.entities or o not in original.entities
    entity, other = (s, o) if entity_is_subject else (o, s)
    name = entity_name(entity, labels)
    match = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.IGNORECASE) if name else None
    if match is None:
        clause = _clause(entity_name(s, labels), rel, entity_name(o, labels))
        return f"{_stem(question)} (given that {clause})?"
    insert = ", " + _appositive(rel, entity_name(other, labels), entity_is_subject)
    rest = question[match.end() :]
    if rest.strip() and not re.match(r"\s*[?.!,;:]", rest):
        insert += ","
    return question[: match.end()] + insert + rest


def union_names_differ(query: LogicalQuery, labels: Mapping[str, str]) -> bool:
    """Whether a union query's subjects have different names (so the question must name them)."""
    return query.operator == "or" and len({entity_name(e, labels) for e in query.entities}) > 1


def keeps_question(extension: Extension, extended: LogicalQuery, labels: Mapping[str, str]) -> bool:
    """Whether the original question also asks the extended query: no extension, or a union of
    same-name subjects (named alike, so the question reads the same)."""
    return extension == "none" or (
        extension == "union" and not union_names_differ(extended, labels)
    )


def _union_question(question: str, query: LogicalQuery, labels: Mapping[str, str]) -> str:
    names = [entity_name(e, labels) for e in query.entities]
    first = names[0]
    either = join_names(names, conjunction="or")
    match = re.search(rf"(?<!\w){re.escape(first)}(?!\w)", question, re.IGNORECASE)
    if match is None:
        return f"{_stem(question)} (for {either})?"
    return question[: match.start()] + either + question[match.end() :]


def _stem(question: str) -> str:
    return question.rstrip().rstrip("?.!").rstrip()


def extend_question(
    original_question: str,
    original: LogicalQuery,
    extended: LogicalQuery,
    extension: Extension,
    added: Sequence[Fact],
    labels: Mapping[str, str],
) -> str:
    """The original question rewritten for the extended query (template form of Table 9).

    * ``none``, and ``union`` over same-name subjects: unchanged (they are named alike).
    * ``union`` over differently named subjects (the same-type option): the first subject's
      mention becomes "e0 or e1", "What is the occupation of Tex Ritter or Bing Crosby?"; when
      the question does not name it, "... (for e0 or e1)?".
    * a new branch ``(e, r, ?a)`` / ``(?a, r, e)``: a clause is conjoined,
      "..., and which is the r of e?" / "..., and whose r is e?".
    * an attached fact on a subject entity: the entity's mention (found case-insensitively) is
      followed by a description, "... Mexico, whose continent is North America?"; when the
      question does not name it, "... (given that the continent of Mexico is North America)?".

    The new patterns are the extended query's patterns not in the original (else ``added``);
    each is phrased by its own kind, whatever ``extension`` says.
    """
    if keeps_question(extension, extended, labels):
        return original_question
    if extension == "union":
        return _union_question(original_question, extended, labels)
    question = original_question
    branches: list[str] = []
    for edge in _new_edges(original, extended, added):
        if any(is_variable(t) for t in edge.terms()):
            branches.append(_branch_clause(edge, labels))
        else:
            question = _attach(question, edge, original, labels)
    if branches:
        question = f"{_stem(question)}, and {' and '.join(branches)}?"
    return question


# ---------------------------------------------------------------------------- answers
_WHAT = r"(?:what|which(?: [\w'-]+)+?)"
_IS_THE = re.compile(rf"^\s*{_WHAT} is the (?P<x>.+?) of (?P<y>.+?)\s*\??\s*$", re.IGNORECASE)
_HAS = re.compile(rf"^\s*{_WHAT} has (?P<y>.+?) as its (?P<x>.+?)\s*\??\s*$", re.IGNORECASE)
#: A subject phrase with these is a compound or a clause: such questions get the generic form.
_COMPOUND = re.compile(r",| and | or | has | is | whose | which | that | where | who ", re.I)


def answer_statement(question: str, answer_names: Sequence[str]) -> str:
    """A sentence stating the answers.

    "What is the continent of Mexico?" + [North America] -> "The continent of Mexico is North
    America."; "What has Mexico as its country?" -> "Frida Kahlo has Mexico as its country."
    (several answers: "A and B have Mexico as their country.");
    anything else -> "The answer to 'question' is A, B and C."

    Raises:
        DataError: no answer names.
    """
    if not answer_names:
        raise DataError("an answer statement needs at least one answer name", field="answers")
    answers = join_names(answer_names)
    for pattern in (_IS_THE, _HAS):
        m = pattern.match(question)
        if m and not _COMPOUND.search(m["y"]) and not _COMPOUND.search(m["x"]):
            if pattern is _IS_THE:
                return f"The {m['x']} of {m['y']} is {answers}."
            if len(set(answer_names)) > 1:
                return f"{answers} have {m['y']} as their {m['x']}."
            return f"{answers} has {m['y']} as its {m['x']}."
    return f"The answer to '{question.strip()}' is {answers}."
