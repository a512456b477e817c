"""Logical queries: shape rules, branches, SPARQL grounding on a hand-made graph."""

from __future__ import annotations

import pytest
from _caqa_graphs import facts, tiny_kg
from pydantic import ValidationError

from citegraph.caqa import LogicalQuery
from citegraph.caqa.queries import QueryEdge, path_query, single, tree_query, union_query

KG_FACTS = [
    ("najib", "position", "president"),
    ("najib", "country", "afg"),
    ("afg", "language", "pashto"),
    ("afg", "language", "dari"),
    ("pak", "language", "pashto"),
    ("pak", "language", "urdu"),
    ("richard1", "occupation", "artist"),
    ("richard2", "occupation", "doctor"),
]
LABELS = {"richard1": "Richard Scott", "richard2": "Richard Scott", "afg": "Afghanistan"}


def test_shapes_follow_the_structure() -> None:
    assert single("najib", "country", "?a").shape == "single"
    assert path_query("najib", ["country", "language"]).shape == "path"
    assert tree_query([("afg", "language"), ("pak", "language")]).shape == "tree"
    assert union_query(["richard1", "richard2"], "occupation").shape == "union"
    # first intersection way on a path: a constant fact attached to the subject keeps a path
    attached = LogicalQuery(
        edges=(
            QueryEdge(subject="president", relation="holder", object="najib"),
            *path_query("najib", ["country", "language"]).edges,
        )
    )
    assert attached.shape == "path" and attached.complexity == "concatenation"
    # a branch meeting the middle of a path makes a tree
    mid = LogicalQuery(
        edges=(
            QueryEdge(subject="najib", relation="country", object="?v1"),
            QueryEdge(subject="?v1", relation="language", object="?a"),
            QueryEdge(subject="?v1", relation="member", object="un"),
        )
    )
    assert mid.shape == "tree"


def test_invalid_queries_are_refused() -> None:
    with pytest.raises(ValidationError, match="cycle"):
        LogicalQuery(
            edges=(
                QueryEdge(subject="x", relation="r", object="?a"),
                QueryEdge(subject="?a", relation="s", object="x"),
            )
        )
    with pytest.raises(ValidationError, match="answer"):
        LogicalQuery(edges=(QueryEdge(subject="x", relation="r", object="?b"),))


def test_branches_are_subject_to_answer_paths() -> None:
    q = tree_query([("afg", "language"), ("pak", "language")])
    assert [len(b) for b in q.branches()] == [1, 1]
    p = path_query("najib", ["country", "language"])
    assert p.branches() == [p.edges]


def test_grounding_returns_answers_and_supporting_facts() -> None:
    kg = tiny_kg(KG_FACTS, labels=LABELS)
    g = kg.ground(path_query("najib", ["country", "language"]))
    assert sorted(g.answers) == ["dari", "pashto"]
    assert set(g.facts) == set(
        facts(
            ("najib", "country", "afg"), ("afg", "language", "pashto"), ("afg", "language", "dari")
        )
    )
    t = kg.ground(tree_query([("afg", "language"), ("pak", "language")]))
    assert t.answers == ("pashto",)
    u = kg.ground(union_query(["richard1", "richard2"], "occupation"))
    assert sorted(u.answers) == ["artist", "doctor"]
    assert set(u.facts) == set(
        facts(("richard1", "occupation", "artist"), ("richard2", "occupation", "doctor"))
    )
    assert kg.same_name("richard1") == ["richard2"]
    assert kg.label("afg") == "Afghanistan"


def test_codex_grounding(data_dir) -> None:
    from citegraph.caqa import CaqaKG
    from citegraph.kg import load_codex_kg

    kg = CaqaKG(load_codex_kg(data_dir), name="codex-s")
    g = kg.ground(single("Q96", "P30", "?a"))  # Mexico, continent
    assert g.answers == ("Q49",) and kg.label("Q49") == "North America"


def test_has_relation_looks_one_way() -> None:
    kg = tiny_kg(KG_FACTS, labels=LABELS)
    assert kg.has_relation("najib", "country")
    assert not kg.has_relation("afg", "country")
    assert kg.has_relation("afg", "country", outgoing=False)
    assert not kg.has_relation("nobody", "country")


def test_facts_for_keeps_answers_and_patterns() -> None:
    kg = tiny_kg(KG_FACTS, labels=LABELS)
    query = path_query("najib", ["country", "language"])
    g = kg.ground(query)
    assert g.facts_for(query) == g.facts_for(query, g.answers)
    assert set(g.facts_for(query, ["dari"])) == set(
        facts(("najib", "country", "afg"), ("afg", "language", "dari"))
    )
    second = (query.edges[1],)
    assert set(g.facts_for(query, edges=second)) == set(
        facts(("afg", "language", "pashto"), ("afg", "language", "dari"))
    )
    assert g.facts_for(query, ["dari"], second) == facts(("afg", "language", "dari"))
    assert second[0].bound_by({"?v1": "afg", "?a": "dari"})
    assert not second[0].bound_by({"?a": "dari"})
