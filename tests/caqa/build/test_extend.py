"""Query extension (§4.2.1, Table 3) on hand-made graphs, and its draw frequencies."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from _caqa_graphs import facts, tiny_kg
from _worlds import PEOPLE, PEOPLE_LABELS, WORLD, WORLD_LABELS

from citegraph.caqa import Fact, LogicalQuery
from citegraph.caqa.build import ExtendedQuery, allowed_extensions, extend_query
from citegraph.caqa.queries import path_query, single, tree_query, union_query
from citegraph.errors import ConfigError


@pytest.fixture(scope="module")
def world():
    return tiny_kg(WORLD, labels=WORLD_LABELS)


@pytest.fixture(scope="module")
def people():
    return tiny_kg(PEOPLE, labels=PEOPLE_LABELS)


def added_over_seeds(kg, query: LogicalQuery, choice, seeds=range(30)) -> set[Fact]:
    out: set[Fact] = set()
    for seed in seeds:
        ext = extend_query(kg, query, random.Random(seed), choice=choice)
        assert ext.extension == choice, ext.note
        out.update(ext.added)
    return out


def test_allowed_extensions_follow_table_3() -> None:
    assert allowed_extensions(single("e", "r", "?a")) == (
        "union",
        "intersection-attach",
        "intersection-branch",
        "none",
    )
    assert allowed_extensions(path_query("e", ["r", "s"])) == (
        "intersection-attach",
        "intersection-branch",
    )
    assert allowed_extensions(tree_query([("e", "r"), ("f", "s")])) == (
        "intersection-attach",
        "intersection-branch",
    )
    assert allowed_extensions(union_query(["e", "f"], "r")) == ()


def test_union_takes_every_namesake_with_the_relation(people) -> None:
    ext = extend_query(
        people, single("richard1", "occupation", "?a"), random.Random(0), choice="union"
    )
    assert ext.extension == "union" and ext.query.shape == "union"
    # richard3 is a namesake but has no occupation
    assert ext.query == union_query(["richard1", "richard2"], "occupation")
    assert sorted(ext.grounding.answers) == ["artist", "doctor"]
    assert ext.added == facts(("richard2", "occupation", "doctor"))
    born = extend_query(
        people, single("richard3", "born_in", "?a"), random.Random(0), choice="union"
    )
    assert born.query == union_query(["richard3", "richard1"], "born_in")
    assert sorted(born.grounding.answers) == ["london", "paris"]


def test_union_without_namesakes_falls_back_to_none(world) -> None:
    ext = extend_query(world, single("najib", "country", "?a"), random.Random(0), choice="union")
    assert ext.extension == "none" and ext.drawn == "union"
    assert ext.query == ext.original and ext.grounding.answers == ("afg",)
    assert "no other entity is named like najib" in ext.note


def test_attach_on_a_single_makes_a_two_hop_path(world) -> None:
    q = single("najib", "country", "?a")
    for seed in range(5):
        ext = extend_query(world, q, random.Random(seed), choice="intersection-attach")
        assert ext.query.shape == "path" and ext.query.complexity == "concatenation"
        assert ext.query.edges[0] == q.edges[0] and len(ext.query.edges) == 2
        assert ext.grounding.answers == ("afg",)
    # lived_in leads to the answer afg and country is the query's own relation: both excluded
    assert added_over_seeds(world, q, "intersection-attach") == set(
        facts(
            ("najib", "position", "president"),
            ("najib", "party", "pdpa"),
            ("najib", "spouse", "fatana"),
        )
    )


def test_branch_on_a_single_makes_a_tree(world) -> None:
    q = single("najib", "country", "?a")
    ext = extend_query(world, q, random.Random(0), choice="intersection-branch")
    assert ext.query.shape == "tree" and ext.grounding.answers == ("afg",)
    # (najib, lived_in, ?a) is excluded: najib is already in the query
    assert added_over_seeds(world, q, "intersection-branch") == set(
        facts(
            ("afg", "language", "pashto"), ("afg", "language", "dari"), ("afg", "continent", "asia")
        )
    )


def test_path_extensions(world) -> None:
    q = path_query("najib", ["country", "language"])
    branch = extend_query(world, q, random.Random(0), choice="intersection-branch")
    # the only new relation meeting pashto and dari is (?a, script, arabic)
    assert branch.query.edges == (*q.edges, *single("?a", "script", "arabic").edges)
    assert branch.query.shape == "tree"
    assert sorted(branch.grounding.answers) == ["dari", "pashto"]
    assert set(branch.added) == set(
        facts(("pashto", "script", "arabic"), ("dari", "script", "arabic"))
    )
    attach = extend_query(world, q, random.Random(0), choice="intersection-attach")
    assert attach.query.shape == "path" and sorted(attach.grounding.answers) == ["dari", "pashto"]
    # afg is a binding, not a query entity, and not an answer of this query: lived_in is allowed
    assert added_over_seeds(world, q, "intersection-attach") == set(
        facts(
            ("najib", "position", "president"),
            ("najib", "party", "pdpa"),
            ("najib", "spouse", "fatana"),
            ("najib", "lived_in", "afg"),
        )
    )


def test_tree_extensions(world) -> None:
    q = tree_query([("afg", "language"), ("pak", "language")])
    branch = extend_query(world, q, random.Random(0), choice="intersection-branch")
    assert branch.query.shape == "tree" and len(branch.query.edges) == 3
    assert branch.added == facts(("pashto", "script", "arabic"))
    assert branch.grounding.answers == ("pashto",)
    attached = added_over_seeds(world, q, "intersection-attach")
    assert attached == set(
        facts(
            ("afg", "continent", "asia"),
            ("najib", "country", "afg"),
            ("najib", "lived_in", "afg"),
            ("pak", "continent", "asia"),
        )
    )
    ext = extend_query(world, q, random.Random(1), choice="intersection-attach")
    assert ext.query.shape == "tree" and ext.grounding.answers == ("pashto",)


def test_no_extension_possible_falls_back_to_none_with_reasons() -> None:
    kg = tiny_kg([("x", "r", "y")])
    q = single("x", "r", "?a")
    drawn = Counter()
    for seed in range(20):
        ext = extend_query(kg, q, random.Random(seed))
        assert ext.extension == "none" and ext.query == q
        drawn[ext.drawn] += 1
        if ext.drawn != "none":
            assert ext.note.startswith("no extension possible")
            assert "union: no other entity is named like x" in ext.note
            assert "intersection-attach: no fact links a subject entity" in ext.note
            assert "intersection-branch: no new relation meets the answers" in ext.note
    assert len(drawn) >= 3  # the draw happened; the fallbacks made every one 'none'
    u = extend_query(kg, union_query(["x", "y"], "r"), random.Random(0))
    assert u.extension == "none" and "not extended further" in u.note


def test_fallback_to_the_other_extension() -> None:
    kg = tiny_kg([("x", "r", "y"), ("y", "s", "z")])  # nothing to attach to x; a branch via s
    q = single("x", "r", "?a")
    seen = set()
    for seed in range(30):
        ext = extend_query(kg, q, random.Random(seed))
        seen.add(ext.drawn)
        if ext.drawn == "none":
            assert ext.extension == "none"
        else:
            assert ext.extension == "intersection-branch"
            assert ext.added == facts(("y", "s", "z"))
            assert ("fallback" in ext.note) == (ext.drawn != "intersection-branch")
    assert seen == {"union", "intersection-attach", "intersection-branch", "none"}


def test_max_answers_bounds_the_extended_query(world) -> None:
    q = single("afg", "language", "?a")  # two answers: pashto, dari
    attach = extend_query(world, q, random.Random(0), max_answers=1, choice="intersection-attach")
    assert attach.extension == "none" and "more than 1 answers" in attach.note
    # (?a, script, arabic) keeps both answers: too many for max_answers=1
    branch = extend_query(world, q, random.Random(0), max_answers=1, choice="intersection-branch")
    assert branch.extension == "none" and "no new relation meets" in branch.note
    assert extend_query(
        world, q, random.Random(0), max_answers=2, choice="intersection-branch"
    ).extension == ("intersection-branch")


def test_bad_options_raise(world) -> None:
    with pytest.raises(ConfigError, match="does not apply"):
        extend_query(
            world, path_query("najib", ["country", "language"]), random.Random(0), choice="union"
        )
    with pytest.raises(ConfigError, match="max_answers"):
        extend_query(world, single("najib", "country", "?a"), random.Random(0), max_answers=0)


def test_same_seed_same_extension(world) -> None:
    q = tree_query([("afg", "language"), ("pak", "language")])
    runs = [extend_query(world, q, random.Random(7)) for _ in range(2)]
    assert runs[0] == runs[1]
    assert ExtendedQuery.model_validate(runs[0].model_dump()) == runs[0]


def test_single_query_draws_are_equally_likely(people) -> None:
    # every extension is possible for this query, so no fallback hides the draw
    q = single("richard1", "occupation", "?a")
    counts = Counter()
    for seed in range(400):
        ext = extend_query(people, q, random.Random(seed))
        assert ext.extension == ext.drawn
        counts[ext.extension] += 1
    assert set(counts) == {"union", "intersection-attach", "intersection-branch", "none"}
    assert all(70 <= n <= 130 for n in counts.values()), counts  # 100 expected, sd ~8.7


def test_codex_draws_and_fallbacks(data_dir) -> None:
    from citegraph.caqa import CaqaKG
    from citegraph.kg import load_codex_kg

    kg = CaqaKG(load_codex_kg(data_dir), name="codex-s")
    singles = []
    for entity in kg.entity_ids()[::4]:
        by_relation: dict[str, int] = Counter(f.relation for f in kg.out_facts(entity))
        small = sorted(r for r, n in by_relation.items() if n <= 10)
        if small:
            singles.append(single(entity, small[0], "?a"))
        if len(singles) >= 400:
            break
    drawn, applied = Counter(), Counter()
    for seed, q in enumerate(singles):
        ext = extend_query(kg, q, random.Random(seed))
        drawn[ext.drawn] += 1
        applied[ext.extension] += 1
        assert 1 <= len(ext.grounding.answers) <= 10
        if ext.extension != "none":
            assert (
                ext.query.shape
                == {
                    "union": "union",
                    "intersection-attach": "path",
                    "intersection-branch": "tree",
                }[ext.extension]
            )
            assert all(kg.has(f) for f in ext.added)
    assert len(singles) == 400
    assert all(
        70 <= drawn[e] <= 130
        for e in ("union", "intersection-attach", "intersection-branch", "none")
    )
    # CoDEx-S has no two entities with one name: every union draw falls back
    assert applied["union"] == 0
    from _codex_queries import sample_queries

    sampled = sample_queries(kg, per_shape=40, step=11)
    drawn = Counter()
    for shape in ("path", "tree"):
        assert len(sampled[shape]) == 40
        for seed, q in enumerate(sampled[shape]):
            ext = extend_query(kg, q, random.Random(seed))
            drawn[ext.drawn] += 1
            assert ext.drawn in ("intersection-attach", "intersection-branch")
            if ext.extension == "intersection-attach":
                assert ext.query.shape == shape and ext.grounding.answers == kg.ground(q).answers
            elif ext.extension == "intersection-branch":
                assert ext.query.shape == "tree"
                assert set(ext.grounding.answers) <= set(kg.ground(q).answers)
            if ext.extension != "none":
                assert 1 <= len(ext.grounding.answers) <= 10
    assert 25 <= drawn["intersection-attach"] <= 55  # 40 expected of 80
