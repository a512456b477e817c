"""Structured attributions (§4.2.2): each category's construction and failure reasons on
hand-made graphs, and the categories' defining properties on CoDEx-S."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from _caqa_graphs import facts, tiny_kg
from _worlds import PEOPLE, PEOPLE_LABELS, WORLD, WORLD_LABELS

from citegraph.caqa import Fact, LogicalQuery
from citegraph.caqa.build import (
    ExtendedQuery,
    extend_query,
    structured_attributions,
    subject_entities,
)
from citegraph.caqa.queries import (
    QueryEdge,
    answers_over,
    path_query,
    single,
    supports,
    tree_query,
    union_query,
)
from citegraph.errors import ConfigError

WORLD_TYPES = {
    "afg": ["country", "sovereign"],
    "pak": ["country", "sovereign"],
    "france": ["country"],
    "pashto": ["language"],
    "dari": ["language"],
    "urdu": ["language"],
}
PEOPLE_TYPES = {"artist": ["occupation"], "doctor": ["occupation"], "nurse": ["occupation"]}


@pytest.fixture(scope="module")
def world():
    return tiny_kg(WORLD, labels=WORLD_LABELS, types=WORLD_TYPES)


@pytest.fixture(scope="module")
def people():
    return tiny_kg(PEOPLE, labels=PEOPLE_LABELS, types=PEOPLE_TYPES)


def plain(kg, query: LogicalQuery) -> ExtendedQuery:
    """The query, not extended."""
    return extend_query(kg, query, random.Random(0), choice="none")


def build(kg, query: LogicalQuery, seed: int = 0, **kw):
    return structured_attributions(kg, plain(kg, query), random.Random(seed), **kw)


# ---------------------------------------------------------------------------- the evaluator
def test_answers_over_a_fact_set() -> None:
    sub = facts(
        ("najib", "country", "afg"),
        ("afg", "language", "pashto"),
        ("afg", "language", "dari"),
        ("pak", "language", "pashto"),
    )
    assert answers_over(path_query("najib", ["country", "language"]), sub) == {"pashto", "dari"}
    assert answers_over(tree_query([("afg", "language"), ("pak", "language")]), sub) == {"pashto"}
    assert answers_over(union_query(["afg", "pak"], "language"), sub[2:]) == {"pashto", "dari"}
    inverse = single("?a", "language", "pashto")  # (?a, language, pashto)
    assert answers_over(inverse, sub) == {"afg", "pak"}
    assert supports(path_query("najib", ["country", "language"]), sub, ["dari"])
    assert not supports(path_query("najib", ["country", "language"]), sub[1:], ["dari"])
    assert supports(single("x", "r", "?a"), [], [])  # nothing asserted, nothing needed


# ---------------------------------------------------------------------------- supportive
def test_supportive_is_the_grounded_subgraph(world) -> None:
    out = build(world, path_query("najib", ["country", "language"]))
    sup = out.items["supportive"]
    assert set(sup.facts) == set(
        facts(
            ("najib", "country", "afg"), ("afg", "language", "pashto"), ("afg", "language", "dari")
        )
    )
    assert sorted(sup.answers) == ["dari", "pashto"]
    assert sup.labels["afg"] == "Afghanistan" and sup.labels["language"] == "language"
    assert sup.labels["najib"] == "Mohammad Najibullah"


def test_no_answers_makes_every_category_unavailable(world) -> None:
    out = build(world, single("nobody", "country", "?a"))
    assert out.items == {}
    assert set(out.unavailable.values()) == {"the query has no answers in the KG"}


# ---------------------------------------------------------------------------- insufficient
def test_insufficient_path_deletes_one_triple(world) -> None:
    q = path_query("najib", ["country", "language"])
    full = set(build(world, q).items["supportive"].facts)
    removed_seen = set()
    for seed in range(12):
        ins = build(world, q, seed).items["insufficient"]
        assert len(ins.removed) == 1 and set(ins.facts) == full - set(ins.removed)
        assert not supports(q, ins.facts, ins.answers)
        removed_seen.add(ins.removed[0])
    assert removed_seen == full  # every triple is critical here


def test_insufficient_with_redundant_paths_is_unavailable() -> None:
    kg = tiny_kg(
        [
            ("n", "country", "c1"),
            ("n", "country", "c2"),
            ("c1", "language", "l"),
            ("c2", "language", "l"),
        ]
    )
    out = build(kg, path_query("n", ["country", "language"]))
    assert out.unavailable["insufficient"] == (
        "no single triple deletion leaves the answers unsupported (redundant paths)"
    )


def test_insufficient_tree_deletes_a_branch(world) -> None:
    q = tree_query([("afg", "language"), ("pak", "language")])
    both = set(facts(("afg", "language", "pashto"), ("pak", "language", "pashto")))
    for seed in range(4):
        ins = build(world, q, seed).items["insufficient"]
        assert len(ins.removed) == 1 and set(ins.facts) == both - set(ins.removed)


def test_insufficient_union_skips_a_branch_whose_answers_stay_supported() -> None:
    kg = tiny_kg([("r1", "occ", "artist"), ("r2", "occ", "artist"), ("r2", "occ", "doctor")])
    q = union_query(["r1", "r2"], "occ")
    for seed in range(6):
        ins = build(kg, q, seed).items["insufficient"]
        # deleting r1's branch leaves artist derivable from r2: only r2's branch works
        assert set(ins.removed) == set(facts(("r2", "occ", "artist"), ("r2", "occ", "doctor")))
        assert ins.facts == facts(("r1", "occ", "artist"))


def test_single_triple_queries_are_not_made_insufficient(world) -> None:
    out = build(world, single("najib", "country", "?a"))
    assert out.unavailable["insufficient"] == (
        "single-triple queries are not made insufficient (§4.2.2)"
    )


# ---------------------------------------------------------------------------- contradictory
def test_contradictory_prefers_the_entity_sharing_most_types(world) -> None:
    con = build(world, single("najib", "country", "?a")).items["contradictory"]
    # afg is {country, sovereign}: pak shares both, france one
    assert con.replaced == {"afg": "pak"}
    assert con.facts == facts(("najib", "country", "pak"))
    assert con.answers == ("afg",) and con.labels["pak"] == "Pakistan"


def test_contradictory_union_replaces_every_answer(people) -> None:
    """§4.2.2: "replacing the answer entity in G with a non-answer entity that has the same type
    as the answer entity". Both union answers are replaced so neither stays supported; with one
    other occupation (nurse) only one answer can be, so the category is unavailable."""
    q = union_query(["richard1", "richard2"], "occupation")
    out = build(people, q)
    assert "contradictory" not in out.items
    why = out.unavailable["contradictory"]
    assert why.startswith("no non-answer entity shares a type with")
    assert why.endswith("once the other answers took their replacements")
    roomy = tiny_kg(PEOPLE, labels=PEOPLE_LABELS, types=PEOPLE_TYPES | {"cook": ["occupation"]})
    con = build(roomy, q).items["contradictory"]
    # artist and doctor are replaced by cook and nurse, one each
    assert set(con.replaced) == {"artist", "doctor"}
    assert set(con.replaced.values()) == {"cook", "nurse"}
    assert set(con.facts) == {
        Fact.of("richard1", "occupation", con.replaced["artist"]),
        Fact.of("richard2", "occupation", con.replaced["doctor"]),
    }
    assert answers_over(q, con.facts) == {"cook", "nurse"}
    assert con.note.startswith("replaced all 2 answers: ")


# Two countries speak both pashto and dari; a third speaks pashto only; two more speak dari only
# or neither. Every country entity is typed "country".
BILINGUAL = [
    ("afg", "language", "pashto"),
    ("afg", "language", "dari"),
    ("taj", "language", "pashto"),
    ("taj", "language", "dari"),
    ("pak", "language", "pashto"),
    ("iran", "language", "dari"),
    ("france", "language", "french"),
]
BILINGUAL_TYPES = {c: ["country"] for c in ("afg", "taj", "pak", "iran", "france")}


def test_contradictory_two_answer_intersection_contradicts_every_answer() -> None:
    """§4.2.2: "We obtain the contradictory subgraph G_C, whose reasoning results contradict the
    answer ... For l' involving the intersection operation, we replace the answer entity in G."
    With two answers, replacing only one left the other derived by the evidence."""
    kg = tiny_kg(BILINGUAL, types=BILINGUAL_TYPES)
    q = LogicalQuery(
        edges=(
            QueryEdge(subject="?a", relation="language", object="pashto"),
            QueryEdge(subject="?a", relation="language", object="dari"),
        )
    )
    assert q.shape == "tree" and q.complexity == "intersection"
    for seed in range(6):
        out = build(kg, q, seed)
        sup, con = out.items["supportive"], out.items["contradictory"]
        assert sorted(sup.answers) == ["afg", "taj"] and len(sup.facts) == 4
        # both answers replaced, by two of the other countries (pak, iran, france; none of them
        # is in the subgraph or an answer)
        assert set(con.replaced) == {"afg", "taj"}
        news = set(con.replaced.values())
        assert len(news) == 2 and news <= {"pak", "iran", "france"}
        # the evidence derives the two replacements and neither statement answer
        assert answers_over(q, con.facts) == news
        for answer in con.answers:
            assert not supports(q, con.facts, [answer])
        assert {e for f in con.facts for e in (f.subject, f.object)} == news | {"pashto", "dari"}


def test_contradictory_without_candidates_or_types() -> None:
    lonely = tiny_kg([("a", "r", "b")], types={"b": ["t"]})
    assert build(lonely, single("a", "r", "?a")).unavailable["contradictory"] == (
        "no non-answer entity shares a type with answer b"
    )
    untyped = tiny_kg([("a", "capital", "b"), ("c", "capital", "d"), ("a", "near", "e")])
    con = build(untyped, single("a", "capital", "?a")).items["contradictory"]
    assert con.replaced == {"b": "d"} and "relation range" in con.note
    assert con.facts == facts(("a", "capital", "d"))
    nothing = tiny_kg([("a", "capital", "b")])
    assert (
        "relation range has no other entity"
        in (build(nothing, single("a", "capital", "?a")).unavailable["contradictory"])
    )


# ---------------------------------------------------------------------------- irrelevant
def test_irrelevant_path_walks_new_relations_from_the_subject(world) -> None:
    irr = build(world, path_query("najib", ["country", "language"])).items["irrelevant"]
    # position -> president is a dead end; lived_in -> afg is in the supportive subgraph
    assert set(irr.facts) == set(
        facts(
            ("najib", "party", "pdpa"),
            ("pdpa", "ideology", "communism"),
            ("pdpa", "ideology", "marxism"),
        )
    )
    assert irr.facts[0] == facts(("najib", "party", "pdpa"))[0]  # same order as supportive
    assert sorted(irr.answers) == ["dari", "pashto"]


def test_irrelevant_single_and_tree(world) -> None:
    single_irr = build(world, single("najib", "country", "?a")).items["irrelevant"]
    assert single_irr.facts[0] in facts(
        ("najib", "position", "president"),
        ("najib", "party", "pdpa"),
        ("najib", "spouse", "fatana"),
    )
    tree_irr = build(world, tree_query([("afg", "language"), ("pak", "language")])).items[
        "irrelevant"
    ]
    assert tree_irr.facts == facts(("afg", "continent", "asia"), ("pak", "continent", "asia"))
    assert "2 subject(s)" in tree_irr.note


def test_irrelevant_tree_falls_back_to_the_first_subject() -> None:
    kg = tiny_kg(
        [("s1", "r", "a"), ("s2", "q", "a"), ("s1", "p", "x"), ("s2", "p", "y"), ("z", "q2", "x")]
    )
    irr = build(kg, tree_query([("s1", "r"), ("s2", "q")])).items["irrelevant"]
    assert irr.facts == facts(("s1", "p", "x"), ("z", "q2", "x"))
    assert "first subject s1 only" in irr.note


def test_irrelevant_may_reverse_a_pattern_when_no_same_direction_walk_exists() -> None:
    kg = tiny_kg([("x", "r", "y"), ("z", "s", "x")])  # x has no other out-going fact
    irr = build(kg, single("x", "r", "?a")).items["irrelevant"]
    assert irr.facts == facts(("z", "s", "x"))
    assert "1 pattern(s) point the other way" in irr.note


def test_irrelevant_unavailable() -> None:
    kg = tiny_kg([("x", "r", "y")])
    assert build(kg, single("x", "r", "?a")).unavailable["irrelevant"] == (
        "no subgraph of the same structure avoids the supportive entities and relations"
    )


def test_irrelevant_keeps_the_entity_a_fact_was_attached_to(world) -> None:
    q = single("najib", "country", "?a")
    others = {"position": "president", "party": "pdpa", "spouse": "fatana"}
    for seed in range(6):
        ext = extend_query(world, q, random.Random(seed), choice="intersection-attach")
        assert subject_entities(ext) == ("najib",)
        irr = structured_attributions(world, ext, random.Random(seed)).items["irrelevant"]
        (attached,) = ext.added
        expected = {("najib", r, e) for r, e in others.items() if r != attached.relation}
        assert {f.as_tuple() for f in irr.facts} == expected


# ---------------------------------------------------------------------------- the set
def test_categories_and_determinism(world) -> None:
    ext = plain(world, path_query("najib", ["country", "language"]))
    a = structured_attributions(world, ext, random.Random(3))
    b = structured_attributions(world, ext, random.Random(3))
    # the answers pashto and dari need two other languages; urdu is the only one
    assert a == b and set(a.items) == {"supportive", "insufficient", "irrelevant"}
    assert "once the other answers took their replacements" in a.unavailable["contradictory"]
    roomy = tiny_kg(WORLD, labels=WORLD_LABELS, types=WORLD_TYPES | {"farsi": ["language"]})
    full = structured_attributions(roomy, plain(roomy, ext.query), random.Random(3))
    assert set(full.items) == {"supportive", "insufficient", "contradictory", "irrelevant"}
    assert set(full.items["contradictory"].replaced.values()) == {"urdu", "farsi"}
    only = structured_attributions(world, ext, random.Random(3), categories=("insufficient",))
    assert set(only.items) == {"insufficient"}
    assert only.items["insufficient"] == a.items["insufficient"]  # one seed per category
    with pytest.raises(ConfigError, match="unknown categories"):
        structured_attributions(world, ext, random.Random(3), categories=("wrong",))  # type: ignore[arg-type]
    edges = (QueryEdge(subject="najib", relation="country", object="?a"),)
    assert plain(world, LogicalQuery(edges=edges)).grounding.answers == ("afg",)


# ---------------------------------------------------------------------------- CoDEx-S
def test_codex_categories_hold_by_construction(data_dir) -> None:
    from _codex_queries import sample_queries

    from citegraph.caqa import CaqaKG
    from citegraph.kg import load_codex_kg

    kg = CaqaKG(load_codex_kg(data_dir), name="codex-s")
    queries = sample_queries(kg, per_shape=70)
    assert all(len(v) == 70 for v in queries.values())
    built, why = Counter(), Counter()
    for sampled in queries.values():
        for seed, q in enumerate(sampled):
            rng = random.Random(seed)
            ext = extend_query(kg, q, rng)
            out = structured_attributions(kg, ext, rng)
            query, answers = ext.query, set(ext.grounding.answers)
            sup = out.items["supportive"]
            assert supports(query, sup.facts, answers) and all(kg.has(f) for f in sup.facts)
            for category, reason in out.unavailable.items():
                why[(query.shape, category, reason.split(" answer ")[0])] += 1
            built.update((query.shape, c) for c in out.items)
            if "insufficient" in out.items:
                ins = out.items["insufficient"]
                assert not supports(query, ins.facts, answers)
                assert set(ins.facts) | set(ins.removed) == set(sup.facts)
            if "contradictory" in out.items:
                con = out.items["contradictory"]
                assert set(con.replaced) == answers and set(con.answers) == answers
                for old, new in con.replaced.items():
                    assert new != old and new not in answers
                    assert set(kg.types(new)) & set(kg.types(old))
                    assert new not in {e for f in sup.facts for e in (f.subject, f.object)}
                assert not answers_over(query, con.facts) & answers
            if "irrelevant" in out.items:
                irr = out.items["irrelevant"]
                old_e = {e for f in sup.facts for e in (f.subject, f.object)}
                new_e = {e for f in irr.facts for e in (f.subject, f.object)}
                assert old_e & new_e <= set(subject_entities(ext)) and old_e & new_e
                assert not {f.relation for f in irr.facts} & {f.relation for f in sup.facts}
                assert len(irr.facts) == len(sup.facts) and all(kg.has(f) for f in irr.facts)
    for seed, q in enumerate(queries["tree"][:10]):  # a seed fixes everything
        runs = [
            structured_attributions(kg, extend_query(kg, q, rng), rng)
            for rng in (random.Random(seed), random.Random(seed))
        ]
        assert runs[0] == runs[1]
    assert not any(c == "supportive" for _, c, _ in why)
    # insufficient is only refused for single-triple queries, or for redundant paths
    assert {r for s, c, r in why if c == "insufficient"} <= {
        "single-triple queries are not made insufficient (§4.2.2)",
        "no single triple deletion leaves the answers unsupported (redundant paths)",
        "no single branch deletion leaves the answers unsupported (redundant paths)",
    }
    total = sum(built[(s, "supportive")] for s in ("single", "path", "tree", "union"))
    assert total == 210
    for category in ("contradictory", "irrelevant"):
        made = sum(n for (s, c), n in built.items() if c == category)
        assert made >= 0.6 * total, (category, why)
