"""The query sampler: exhaustive on a hand-made graph, determinism and balance on CoDEx-S."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from _caqa_graphs import tiny_kg

from citegraph.caqa import CaqaKG
from citegraph.caqa.queries import path_query, sample_queries, single, tree_query
from citegraph.errors import ConfigError
from citegraph.kg import load_codex_kg

# a --r--> b --s--> c;  d --t--> b;  x --spouse--> y --spouse--> x;  h --many--> m1, m2, m3
FACTS = [
    ("a", "r", "b"),
    ("b", "s", "c"),
    ("d", "t", "b"),
    ("x", "spouse", "y"),
    ("y", "spouse", "x"),
    ("h", "many", "m1"),
    ("h", "many", "m2"),
    ("h", "many", "m3"),
]


def test_every_query_of_a_tiny_graph() -> None:
    kg = tiny_kg(FACTS)
    samples = sample_queries(kg, 30, seed=3, max_answers=2, max_tries=500)
    by_shape: dict[str, dict] = {"single": {}, "path": {}, "tree": {}}
    for s in samples:
        by_shape[s.query.shape][s.query] = s.answers
    # singles with 1..2 answers: (h, many, ?a) has 3 answers, so it is left out
    assert by_shape["single"] == {
        single("a", "r", "?a"): ("b",),
        single("b", "s", "?a"): ("c",),
        single("d", "t", "?a"): ("b",),
        single("x", "spouse", "?a"): ("y",),
        single("y", "spouse", "?a"): ("x",),
    }
    # paths: a-r-b-s-c and d-t-b-s-c; spouse of spouse returns the subject itself: rejected
    assert by_shape["path"] == {
        path_query("a", ["r", "s"]): ("c",),
        path_query("d", ["t", "s"]): ("c",),
    }
    # trees: only b has in-edges from two different entities
    assert by_shape["tree"] == {tree_query([("a", "r"), ("d", "t")]): ("b",)}
    assert len(samples) == 8
    assert all(s.question is None and s.source == "sample" and s.kg == "tiny" for s in samples)
    # interleaved by shape while every shape still has samples
    assert [s.query.shape for s in samples[:3]] == ["single", "path", "tree"]
    assert samples[0].id == "sample:tiny:3:single:0"


def test_max_answers_and_shapes() -> None:
    kg = tiny_kg(FACTS)
    singles = sample_queries(kg, 10, shapes=("single",), max_answers=3, max_tries=500)
    assert single("h", "many", "?a") in {s.query for s in singles}
    assert {s.query.shape for s in singles} == {"single"} and len(singles) == 6
    with pytest.raises(ConfigError, match="shapes"):
        sample_queries(kg, 3, shapes=("union",))
    assert sample_queries(kg, 0) == []


@pytest.fixture(scope="module")
def codex(data_dir: Path) -> CaqaKG:
    return CaqaKG(load_codex_kg(data_dir, use_cache=False), name="codex-s")


def test_codex_balance_determinism_and_grounding(codex: CaqaKG) -> None:
    samples = sample_queries(codex, 61, seed=7)
    assert Counter(s.query.shape for s in samples) == {"single": 21, "path": 20, "tree": 20}
    assert len({s.query for s in samples}) == 61
    again = sample_queries(codex, 61, seed=7)
    assert [s.model_dump() for s in again] == [s.model_dump() for s in samples]
    other = sample_queries(codex, 61, seed=8)
    assert [s.query for s in other] != [s.query for s in samples]
    # the first queries of each shape do not depend on n
    fewer = sample_queries(codex, 6, seed=7)
    assert [s.query for s in fewer] == [s.query for s in samples[:6]]
    for s in samples:
        grounded = codex.ground(s.query)
        assert sorted(grounded.answers) == list(s.answers)
        assert 1 <= len(s.answers) <= 5
        assert not set(s.answers) & set(s.query.entities)
    trees = [s.query for s in samples if s.query.shape == "tree"]
    assert all(len(set(q.entities)) == 2 for q in trees)
