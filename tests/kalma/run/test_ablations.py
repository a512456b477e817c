"""KaLMA ablations: gold-knowledge removal (§4.4) and retrieval corruption (§5.3), by hand."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma.run._ablations import corrupt_retrieval, remove_knowledge
from citegraph.kg import Entity, Subgraph, Triple


def T(subject: str, relation: str, value: str) -> Triple:
    return Triple(subject=subject, relation=relation, value=value)


def graph(qid: str, *facts: tuple[str, str]) -> Subgraph:
    return Subgraph(
        center=Entity(id=qid, name=f"name of {qid}"),
        triples=tuple(
            Triple(subject=qid, relation=r, value=v, subject_label=qid) for r, v in facts
        ),
    )


G1 = graph("Q1", ("occupation", "painter"), ("place of birth", "Rome"), ("father", "Orazio"))
G2 = graph("Q2", ("occupation", "poet"), ("place of death", "London"))
A, B, C = (
    T("Q1", "occupation", "painter"),
    T("Q1", "place of birth", "Rome"),
    T("Q1", "father", "Orazio"),
)
D, E = T("Q2", "occupation", "poet"), T("Q2", "place of death", "London")
MISSING = T("Q2", "spouse", "Nobody")
GOLD = [A, D, E, MISSING]


def all_triples(graphs: list[Subgraph]) -> list[Triple]:
    return [t for g in graphs for t in g.triples]


# ---------------------------------------------------------------- knowledge removal


def test_removes_exactly_k_gold_facts_and_keeps_the_rest() -> None:
    r = remove_knowledge([G1, G2], GOLD, 2, sample_id="s1")
    assert len(r.removed) == 2
    assert set(r.removed) <= {A, D, E}
    remaining = all_triples(r.graphs)
    assert len(remaining) == 5 - 2
    assert set(remaining) == {A, B, C, D, E} - set(r.removed)
    assert [g.center.id for g in r.graphs] == ["Q1", "Q2"]
    assert r.requested == 2 and r.reason is None
    assert r.not_in_graph == [MISSING]
    assert r.n_gold == 4
    # The input graphs are untouched.
    assert len(G1) == 3 and len(G2) == 2


@pytest.mark.parametrize("sample_id", ["s1", "s2", "s3", "general-17"])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_rounds_are_nested(sample_id: str, seed: int) -> None:
    rounds = [
        remove_knowledge([G1, G2], GOLD, k, seed=seed, sample_id=sample_id).removed
        for k in (1, 2, 3)
    ]
    assert rounds[1][:1] == rounds[0]
    assert rounds[2][:2] == rounds[1]
    assert set(rounds[2]) == {A, D, E}  # all removable gold facts by round 3


def test_random_order_is_the_documented_seeded_permutation() -> None:
    # Contract: random.Random(f"{seed}:{sample_id}") shuffles the distinct gold facts (gold
    # order), then facts in no graph are skipped.
    expected = [A, D, E, MISSING]
    random.Random("3:abc").shuffle(expected)
    expected = [t for t in expected if t != MISSING]
    r = remove_knowledge([G1, G2], GOLD, 3, seed=3, sample_id="abc")
    assert r.removed == expected
    again = remove_knowledge([G1, G2], GOLD, 3, seed=3, sample_id="abc")
    assert again == r


def test_first_strategy_takes_gold_order_and_skips_missing_facts() -> None:
    gold = [MISSING, D, A, E]
    one = remove_knowledge([G1, G2], gold, 1, strategy="first", sample_id="x")
    two = remove_knowledge([G1, G2], gold, 2, strategy="first", sample_id="x")
    assert one.removed == [D]
    assert two.removed == [D, A]
    assert all_triples(two.graphs) == [B, C, E]
    assert two.not_in_graph == [MISSING]


def test_fewer_gold_facts_than_k_removes_what_exists_and_says_so() -> None:
    r = remove_knowledge([G1, G2], [B], 3, strategy="first", sample_id="x")
    assert r.removed == [B]
    assert all_triples(r.graphs) == [A, C, D, E]
    assert r.reason is not None and "only 1 of the 3" in r.reason


def test_gold_fact_in_no_graph_cannot_be_removed() -> None:
    r = remove_knowledge([G1, G2], [MISSING], 1, sample_id="x")
    assert r.removed == []
    assert r.not_in_graph == [MISSING]
    assert r.graphs == [G1, G2]
    assert r.reason is not None and "1 of them in no graph" in r.reason


def test_identity_is_subject_relation_value_and_duplicates_count_once() -> None:
    # Gold triples without metadata match graph triples that carry a subject label.
    r = remove_knowledge([G1, G2], [C, C, T("Q1", "father", "Orazio")], 5, sample_id="x")
    assert r.n_gold == 1
    assert r.removed == [C]
    # Same relation, other value: a different fact, not in the KG.
    r2 = remove_knowledge([G1], [T("Q1", "father", "Someone")], 1, sample_id="x")
    assert r2.removed == [] and len(r2.graphs[0]) == 3


def test_a_fact_in_two_subgraphs_is_removed_from_both() -> None:
    dup = graph("Q1", ("father", "Orazio"))
    r = remove_knowledge([G1, dup], [C], 1, sample_id="x")
    assert r.removed == [C]
    assert [len(g) for g in r.graphs] == [2, 0]


def test_k_zero_is_the_gold_round() -> None:
    r = remove_knowledge([G1, G2], GOLD, 0, sample_id="x")
    assert r.removed == [] and r.graphs == [G1, G2] and r.reason is None


def test_removal_rejects_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        remove_knowledge([G1], [A], -1, sample_id="x")
    with pytest.raises(ConfigError):
        remove_knowledge([G1], [A], 1, strategy="last", sample_id="x")  # type: ignore[arg-type]


# ---------------------------------------------------------------- retrieval corruption

# Five questions with two graphs each (centres C0..C9), and one question without graphs.
TOY = {f"q{i}": [graph(f"C{2 * i}"), graph(f"C{2 * i + 1}")] for i in range(5)} | {"q5": []}
OWN = {q: {g.center.id for g in gs} for q, gs in TOY.items()}


@pytest.mark.parametrize(
    ("accuracy", "n_replaced"), [(100, 0), (80, 2), (60, 4), (40, 6), (20, 8), (0, 10)]
)
def test_corruption_counts_and_achieved_accuracy(accuracy: int, n_replaced: int) -> None:
    c = corrupt_retrieval(TOY, accuracy, seed=0)
    assert c.n_graphs == 10
    assert c.n_requested == n_replaced
    assert len(c.replaced) == n_replaced
    assert c.achieved_accuracy == pytest.approx((10 - n_replaced) / 10)
    assert c.n_unreplaceable == 0
    changed = [
        (q, i)
        for q, gs in TOY.items()
        for i, g in enumerate(gs)
        if c.graphs_by_id[q][i].center.id != g.center.id
    ]
    assert sorted(changed) == sorted((s.question_id, s.index) for s in c.replaced)
    assert list(c.graphs_by_id) == list(TOY)
    assert c.graphs_by_id["q5"] == []
    assert all(len(c.graphs_by_id[q]) == len(TOY[q]) for q in TOY)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_corruption_never_uses_own_or_duplicate_centres(seed: int) -> None:
    c = corrupt_retrieval(TOY, 0, seed=seed)
    for s in c.replaced:
        assert s.source_question_id != s.question_id
        assert s.replacement_center not in OWN[s.question_id]
        assert s.original_center == TOY[s.question_id][s.index].center.id
    for q, gs in c.graphs_by_id.items():
        centres = [g.center.id for g in gs]
        assert len(centres) == len(set(centres)), q


@pytest.mark.parametrize("seed", [0, 5])
def test_corruption_levels_are_nested_with_fixed_replacements(seed: int) -> None:
    levels = [corrupt_retrieval(TOY, a, seed=seed) for a in (80, 60, 40, 20, 0)]
    for finer, coarser in itertools.pairwise(levels):
        assert coarser.replaced[: len(finer.replaced)] == finer.replaced
    final = {(s.question_id, s.index): s.replacement_center for s in levels[-1].replaced}
    for level in levels:
        for s in level.replaced:
            assert final[(s.question_id, s.index)] == s.replacement_center


def test_corruption_is_deterministic_per_seed_and_independent_of_key_order() -> None:
    one = corrupt_retrieval(TOY, 40, seed=3)
    assert corrupt_retrieval(TOY, 40, seed=3) == one
    reordered = dict(reversed(list(TOY.items())))
    other = corrupt_retrieval(reordered, 40, seed=3)
    assert other.replaced == one.replaced
    assert corrupt_retrieval(TOY, 40, seed=4).replaced != one.replaced


@pytest.mark.parametrize(("accuracy", "expected"), [(50, 4), (90, 1), (95, 0), (93, 0), (35, 5)])
def test_replaced_count_rounds_half_up(accuracy: int, expected: int) -> None:
    # 7 graphs: 50 -> 3.5 -> 4; 90 -> 0.7 -> 1; 95 -> 0.35 -> 0; 93 -> 0.49 -> 0; 35 -> 4.55 -> 5.
    data = {f"q{i}": [graph(f"C{i}")] for i in range(7)}
    assert corrupt_retrieval(data, accuracy).n_requested == expected


def test_half_rounds_up_not_to_even() -> None:
    # 10 graphs at 75: 2.5 -> 3 (Python's round() would give 2).
    assert corrupt_retrieval(TOY, 75).n_requested == 3
    assert len(corrupt_retrieval(TOY, 75).replaced) == 3


def test_unreplaceable_slots_are_skipped_and_counted() -> None:
    # qa's pool is {C3} (C1, C2 are its own); qb's pool is {C1}: one slot each can be replaced.
    data = {"qa": [graph("C1"), graph("C2")], "qb": [graph("C2"), graph("C3")]}
    c = corrupt_retrieval(data, 0)
    assert len(c.replaced) == 2
    assert c.n_unreplaceable == 2
    assert c.achieved_accuracy == 0.5
    assert {(s.question_id, s.replacement_center) for s in c.replaced} == {
        ("qa", "C3"),
        ("qb", "C1"),
    }
    single = corrupt_retrieval({"qa": [graph("C1")]}, 0)
    assert single.replaced == [] and single.achieved_accuracy == 1.0


def test_empty_dataset_has_no_accuracy() -> None:
    c = corrupt_retrieval({"q": []}, 60)
    assert c.n_graphs == 0 and c.achieved_accuracy is None and c.graphs_by_id == {"q": []}


@pytest.mark.parametrize("accuracy", [-1, 101, 50.0, True])
def test_corruption_rejects_bad_accuracy(accuracy: object) -> None:
    with pytest.raises(ConfigError):
        corrupt_retrieval(TOY, accuracy)  # type: ignore[arg-type]


def test_corruption_on_biokalma(data_dir: Path) -> None:
    from citegraph.datasets import load_biokalma

    samples = load_biokalma("specific", data_dir)
    graphs = {s.id: list(s.graphs) for s in samples}
    n = sum(len(g) for g in graphs.values())
    at80 = corrupt_retrieval(graphs, 80, seed=0)
    at60 = corrupt_retrieval(graphs, 60, seed=0)
    assert at80.n_graphs == n
    assert len(at80.replaced) == (n * 20 + 50) // 100
    assert len(at60.replaced) == (n * 40 + 50) // 100
    assert at60.replaced[: len(at80.replaced)] == at80.replaced
    for s in at60.replaced:
        own = {g.center.id for g in graphs[s.question_id]}
        assert s.replacement_center not in own
        assert s.source_question_id != s.question_id
    per_question: dict[str, list[str]] = {}
    for s in at60.replaced:
        per_question.setdefault(s.question_id, []).append(s.replacement_center)
    assert all(len(c) == len(set(c)) for c in per_question.values())
