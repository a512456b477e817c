"""KaLMA citation correctness / precision / recall / F1: Figure 2 and real BioKaLMA answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _kalma_answers import answer

from citegraph.errors import ConfigError
from citegraph.kalma import ParsedAnswer
from citegraph.kalma.score._citations import (
    NO_GOLD,
    REF_EMPTY_ANSWER,
    REF_EMPTY_GOLD,
    REF_NO_GRAPH,
    AnswerCitationScores,
    aggregate_citation_scores,
    combine_citation_runs,
    score_citations,
)
from citegraph.kg import Entity, Subgraph, Triple
from citegraph.metrics import BootstrapConfig

# ---------------------------------------------------------------- Figure 2 of the paper
K = {i: Triple(subject="Q1", relation=f"r{i}", value=f"v{i}") for i in range(1, 10)}
FIG2 = answer(
    ("Sentence1.", [K[1], K[2]]),
    ("Sentence2.", [K[2], K[6], "NA"]),
    ("Sentence3.", [K[6], K[9]]),
)
FIG2_GOLD = [K[1], K[2], K[3], K[4], K[5]]
FIG2_GRAPH = Subgraph(center=Entity(id="Q1", name="E"), triples=tuple(K.values()))


def test_figure2_paper_mode() -> None:
    s = score_citations(FIG2, [FIG2_GRAPH], FIG2_GOLD)
    # citations k1 k2 k2 k6 k6 k9 ([NA] is not one): all correct; precise k1 k2 k2 = 3
    assert (s.n_citations, s.n_correct, s.n_precise) == (6, 6, 3)
    assert s.precision == pytest.approx(3 / 6)
    # gold hit: k1, k2 of 5
    assert (s.n_gold_hit, s.n_gold) == (2, 5)
    assert s.recall == pytest.approx(2 / 5)
    assert s.gold_missed == (K[3], K[4], K[5])
    assert [v.precise for v in s.verdicts] == [True, True, True, False, False, False]


def test_figure2_reference_mode() -> None:
    s = score_citations(FIG2, [FIG2_GRAPH], FIG2_GOLD, mode="reference")
    # hit = |{k1, k2}| = 2; the second k2 is "irrelevant": precision 2/6
    assert (s.n_precise, s.n_citations) == (2, 6)
    assert s.precision == pytest.approx(2 / 6)
    assert s.recall == pytest.approx(2 / 5)
    assert [v.precise for v in s.verdicts] == [True, True, False, False, False, False]
    report = aggregate_citation_scores([s])
    # F1 = 2 * (1/3) * (2/5) / (1/3 + 2/5) = (4/15) / (11/15) = 4/11
    assert report.f1.micro == pytest.approx(4 / 11)
    assert report.f1.mode == "reference"


def test_figure2_with_k2_missing_from_the_retrieved_graph() -> None:
    graph = Subgraph(center=FIG2_GRAPH.center, triples=tuple(t for t in K.values() if t != K[2]))
    paper = score_citations(FIG2, [graph], FIG2_GOLD)
    # both k2 citations incorrect: paper precise only k1 = 1/6, recall k1 only = 1/5
    assert (paper.n_correct, paper.n_precise, paper.n_gold_hit) == (4, 1, 1)
    reference = score_citations(FIG2, [graph], FIG2_GOLD, mode="reference")
    # the reference does not require correctness: still 2/6 and 2/5
    assert (reference.n_correct, reference.n_precise, reference.n_gold_hit) == (4, 2, 2)


# ------------------------------------------------------------------- real BioKaLMA entry
@pytest.fixture(scope="module")
def simeone(data_dir: Path) -> tuple[Subgraph, Subgraph]:
    """Entry 31 of the specific questions: Giovanni Simeone and his father Diego Simeone."""
    entries = json.loads((data_dir / "biokalma" / "complex_question_graph.json").read_text())
    question, entities = entries[31]
    assert "Giovanni Simeone" in question
    giovanni, diego = (Subgraph.from_entity_dict(e) for e in entities)
    assert (giovanni.center.id, diego.center.id) == ("Q6439494", "Q258115")
    return giovanni, diego


def G(relation: str, value: str) -> Triple:
    return Triple(subject="Q6439494", relation=relation, value=value)


def D(relation: str, value: str) -> Triple:
    return Triple(subject="Q258115", relation=relation, value=value)


# hand-written gold minimum knowledge set, 5 facts, all in the real entity dicts
GOLD = [
    G("father", "Diego Simeone"),
    G("position played on team", "forward"),
    D("position played on team", "midfielder"),
    G("place of birth", "Madrid"),
    D("member of sports team", "S.S. Lazio"),
]
# A1: 5 citations; a duplicate (forward twice) and a wrong value (Diego played for Lazio here)
A1 = answer(
    (
        "Giovanni Simeone was born in Madrid.",
        [G("father", "Diego Simeone"), G("place of birth", "Madrid")],
    ),
    ("He plays as a forward.", [G("position played on team", "forward")] * 2),
    ("His father played for Atlético.", [D("member of sports team", "Atlético Madrid"), "NA"]),
)
# A2: 4 citations; a name citation, an unknown QID, a value with the wrong case
UNKNOWN_QID = Triple(subject="Q999999999", relation="member of sports team", value="S.S. Lazio")
A2 = answer(
    (
        "Diego Simeone was a midfielder.",
        [D("name", "Diego Simeone"), D("position played on team", "midfielder")],
    ),
    ("He played for Lazio.", [UNKNOWN_QID]),
    ("He was born in Buenos Aires.", [D("place of birth", "buenos aires")]),
)
# A3: scored against Giovanni's graph only (retrieval missed Diego): a gold fact that is not correct
A3 = answer(
    ("Giovanni is Argentine.", [G("country of citizenship", "Argentina")]),
    ("His father was a midfielder.", [D("position played on team", "midfielder")]),
)
# A4: no citation at all
A4 = answer(("Giovanni Simeone followed his father into football.", ["NA"]))


def scored(simeone: tuple[Subgraph, Subgraph], mode: str, **kw: object) -> list:
    both, only_giovanni = list(simeone), [simeone[0]]
    graphs = [both, both, only_giovanni, both]
    return [
        score_citations(a, g, GOLD, mode=mode, **kw)  # type: ignore[arg-type]
        for a, g in zip([A1, A2, A3, A4], graphs, strict=True)
    ]


def test_real_answers_per_answer_counts(simeone: tuple[Subgraph, Subgraph]) -> None:
    a1, a2, a3, a4 = scored(simeone, "paper")
    # A1: correct = father, birth, forward, forward (Lazio is Diego's club, not Atlético) = 4/5
    #     precise = the 4 correct ones (all gold, duplicates count); hit father, forward, birth
    assert (a1.n_citations, a1.n_correct, a1.n_precise, a1.n_gold_hit) == (5, 4, 4, 3)
    # A2: correct = name, midfielder (unknown QID and "buenos aires" are not) = 2/4; hit midfielder
    assert (a2.n_citations, a2.n_correct, a2.n_precise, a2.n_gold_hit) == (4, 2, 1, 1)
    # A3: correct = country only; the midfielder citation is gold but not in the retrieved graph
    assert (a3.n_citations, a3.n_correct, a3.n_precise, a3.n_gold_hit) == (2, 1, 0, 0)
    # A4: nothing cited: no correctness or precision ratio, recall 0/5
    assert (a4.n_citations, a4.correctness, a4.precision, a4.recall) == (0, None, None, 0.0)
    r1, r2, r3, _ = scored(simeone, "reference")
    # reference: A1's second "forward" is irrelevant (3 precise); A3's midfielder counts
    assert (r1.n_precise, r1.n_gold_hit) == (3, 3)
    assert (r2.n_precise, r2.n_gold_hit) == (1, 1)
    assert (r3.n_precise, r3.n_gold_hit) == (1, 1)


def test_real_answers_aggregate_paper_mode(simeone: tuple[Subgraph, Subgraph]) -> None:
    report = aggregate_citation_scores(scored(simeone, "paper"))
    assert report.mode == "paper" and report.n_answers == 4
    # correctness micro (4+2+1+0)/(5+4+2+0) = 7/11; macro over A1-A3 (.8 + .5 + .5)/3 = 0.6
    assert report.correctness.micro == pytest.approx(7 / 11)
    assert report.correctness.macro == pytest.approx(0.6)
    assert report.correctness.n_excluded == 1  # A4
    # precision micro (4+1+0+0)/11 = 5/11; macro (4/5 + 1/4 + 0/2)/3 = 1.05/3 = 0.35
    assert report.precision.micro == pytest.approx(5 / 11)
    assert report.precision.macro == pytest.approx(0.35)
    # recall micro (3+1+0+0)/20 = 0.2; macro (3/5 + 1/5 + 0 + 0)/4 = 0.2
    assert report.recall.micro == pytest.approx(0.2)
    assert report.recall.macro == pytest.approx(0.2)
    assert report.recall.n_excluded == 0  # A4 counts in recall
    # F1 micro 2*(5/11)*0.2/(5/11 + 0.2) = (2/11)/(36/55) = 5/18; macro 2*.35*.2/.55 = 14/55
    assert report.f1.micro == pytest.approx(5 / 18)
    assert report.f1.macro == pytest.approx(14 / 55)
    assert {m.mode for m in (report.correctness, report.precision, report.recall, report.f1)} == {
        "paper"
    }


def test_real_answers_aggregate_reference_mode(simeone: tuple[Subgraph, Subgraph]) -> None:
    report = aggregate_citation_scores(scored(simeone, "reference"))
    # correctness identical to paper mode: 7/11 micro, 0.6 macro
    assert report.correctness.micro == pytest.approx(7 / 11)
    assert report.correctness.macro == pytest.approx(0.6)
    # precision per answer 3/5, 1/4, 1/2, (A4 no citation); micro 5/11, macro 1.35/3 = 0.45
    assert report.precision.micro == pytest.approx(5 / 11)
    assert report.precision.macro == pytest.approx(0.45)
    # recall per answer 3/5, 1/5, 1/5, 0/5 over all answers: micro 5/20, macro 1.0/4 = 0.25
    assert report.recall.micro == pytest.approx(0.25)
    assert report.recall.macro == pytest.approx(0.25)
    # F1 micro 2*(5/11)*(1/4)/(5/11 + 1/4) = (10/44)/(31/44) = 10/31; macro 2*.45*.25/.7 = 9/28
    assert report.f1.micro == pytest.approx(10 / 31)
    assert report.f1.macro == pytest.approx(9 / 28)
    assert report.f1.mode == "reference"


def test_normalize_matches_case_and_accents(simeone: tuple[Subgraph, Subgraph]) -> None:
    exact = score_citations(A2, list(simeone), GOLD)
    loose = score_citations(A2, list(simeone), GOLD, normalize=True)
    # "buenos aires" now matches "Buenos Aires": 3 of 4 correct instead of 2
    assert (exact.n_correct, loose.n_correct) == (2, 3)
    accents = answer(
        ("Played for Banfield.", [G("member of sports team", "club atletico  banfield")])
    )
    # the KG value is "Club Atlético Banfield"
    assert score_citations(accents, list(simeone), GOLD).n_correct == 0
    assert score_citations(accents, list(simeone), GOLD, normalize=True).n_correct == 1


def test_incomplete_triple_is_never_correct() -> None:
    graph = Subgraph(
        center=Entity(id="Q1", name="E"), triples=(Triple(subject="Q1", relation="", value="x"),)
    )
    cited = answer(("S.", [Triple(subject="Q1", relation="", value="x")]))
    assert score_citations(cited, [graph]).n_correct == 0


def test_without_gold_precision_and_recall_are_unmeasured(
    simeone: tuple[Subgraph, Subgraph],
) -> None:
    s = score_citations(A1, list(simeone))
    assert (s.correctness, s.precision, s.recall) == (0.8, None, None)
    assert s.unmeasured == {"precision": NO_GOLD, "recall": NO_GOLD}
    assert {v.in_gold for v in s.verdicts} == {None}
    report = aggregate_citation_scores([s, score_citations(A4, list(simeone))])
    assert report.correctness.micro == pytest.approx(0.8)
    for metric in (report.precision, report.recall, report.f1):
        assert (metric.micro, metric.macro) == (None, None)
    assert report.precision.reason == NO_GOLD
    assert report.precision.n_unmeasured == 2
    assert "no gold" in (report.f1.reason or "")


def test_reference_mode_skips_what_the_script_skips(simeone: tuple[Subgraph, Subgraph]) -> None:
    no_graph = score_citations(A1, [], GOLD, mode="reference")
    assert no_graph.unmeasured == dict.fromkeys(
        ("correctness", "precision", "recall"), REF_NO_GRAPH
    )
    empty = score_citations(ParsedAnswer(parser="test"), list(simeone), GOLD, mode="reference")
    assert empty.unmeasured["recall"] == REF_EMPTY_ANSWER
    no_gold = score_citations(A1, list(simeone), [], mode="reference")
    assert no_gold.unmeasured == {"precision": REF_EMPTY_GOLD, "recall": REF_EMPTY_GOLD}
    assert no_gold.correctness == pytest.approx(0.8)
    # paper mode scores all three: no graph -> 0 correct; empty answer -> recall 0/5
    assert score_citations(A1, [], GOLD).correctness == 0.0
    assert score_citations(ParsedAnswer(parser="test"), list(simeone), GOLD).recall == 0.0
    report = aggregate_citation_scores([no_graph, empty, no_gold], mode="reference")
    assert report.recall.micro is None and report.recall.n_unmeasured == 3


def test_mixed_modes_refuse_to_aggregate(simeone: tuple[Subgraph, Subgraph]) -> None:
    with pytest.raises(ConfigError):
        aggregate_citation_scores([scored(simeone, "paper")[0], scored(simeone, "reference")[0]])
    with pytest.raises(ConfigError):
        score_citations(A1, list(simeone), GOLD, mode="strict")  # type: ignore[arg-type]


def test_scores_round_trip_through_json(simeone: tuple[Subgraph, Subgraph]) -> None:
    s = scored(simeone, "paper")[0]
    again = AnswerCitationScores.model_validate_json(s.model_dump_json())
    assert again == s
    assert json.loads(s.model_dump_json())["verdicts"][4] == {
        "triple": {
            "subject": "Q258115",
            "relation": "member of sports team",
            "value": "Atlético Madrid",
            "subject_label": None,
            "relation_id": None,
            "value_id": None,
        },
        "correct": False,
        "in_gold": False,
        "precise": False,
    }


def test_bootstrap_interval_contains_point_and_is_seeded(
    simeone: tuple[Subgraph, Subgraph],
) -> None:
    scores = scored(simeone, "paper") * 3  # 12 answers
    config = BootstrapConfig(n_resamples=300, seed=11)
    report = aggregate_citation_scores(scores, bootstrap=config)
    assert report == aggregate_citation_scores(scores, bootstrap=config)
    for metric in (report.correctness, report.precision, report.recall, report.f1):
        for point, ci in ((metric.micro, metric.micro_ci), (metric.macro, metric.macro_ci)):
            assert point is not None and ci is not None
            assert ci.low <= point <= ci.high
            assert ci.unit == "answer"


def test_combine_runs_f1_of_means(simeone: tuple[Subgraph, Subgraph]) -> None:
    a1, _, _, a4 = scored(simeone, "paper")
    run1 = aggregate_citation_scores(scored(simeone, "paper"))
    run2 = aggregate_citation_scores([a1, a4])
    # run2: precision micro 4/5 (macro 4/5, A4 excluded); recall micro 3/10, macro (.6 + 0)/2
    summary = combine_citation_runs([run1, run2])
    p_mean = (5 / 11 + 4 / 5) / 2
    r_mean = (0.2 + 0.3) / 2
    assert summary.precision.micro.mean == pytest.approx(p_mean)
    assert summary.recall.micro.mean == pytest.approx(r_mean)
    assert summary.f1_micro == pytest.approx(2 * p_mean * r_mean / (p_mean + r_mean))
    assert summary.recall.micro.std == pytest.approx(abs(0.3 - 0.2) / 2**0.5)
    assert (summary.n_runs, summary.mode) == (2, "paper")
    with pytest.raises(ConfigError):
        combine_citation_runs([])
