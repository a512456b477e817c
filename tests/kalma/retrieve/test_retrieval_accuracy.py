"""Retrieval accuracy against hand-computed precision, recall, F1 and exact-set accuracy."""

from __future__ import annotations

import pytest

from citegraph.errors import ConfigError, DataError
from citegraph.kalma._rules import KalmaRules
from citegraph.kalma.retrieve._accuracy import NO_GOLD, retrieval_accuracy, score_question

RETRIEVED = [["Q1", "Q2"], ["Q3"], [], ["Q5", "Q5", "Q6"], ["Q9"]]
GOLD = [["Q1"], ["Q3", "Q4"], ["Q7"], ["Q6", "Q5"], []]
# Per question (retrieved set, gold set -> correct / retrieved / gold / exact):
#   0: {Q1,Q2} vs {Q1}     -> 1 / 2 / 1 / no
#   1: {Q3}    vs {Q3,Q4}  -> 1 / 1 / 2 / no
#   2: {}      vs {Q7}     -> 0 / 0 / 1 / no
#   3: {Q5,Q6} vs {Q6,Q5}  -> 2 / 2 / 2 / yes (the repeated Q5 counts once)
#   4: no gold             -> unmeasured


def test_paper_mode_by_hand() -> None:
    acc = retrieval_accuracy(RETRIEVED, GOLD)
    assert acc.mode == "paper"
    assert (acc.n_questions, acc.n_measured, acc.n_unmeasured) == (5, 4, 1)
    assert acc.unmeasured_reason == NO_GOLD
    assert (acc.n_correct, acc.n_retrieved, acc.n_gold, acc.n_exact) == (4, 5, 6, 1)
    assert acc.precision.micro == pytest.approx(4 / 5)
    # Macro precision leaves out question 2 (nothing retrieved): (1/2 + 1 + 1) / 3.
    assert acc.precision.macro == pytest.approx(5 / 6)
    assert acc.precision.n_excluded == 1 and acc.precision.n_unmeasured == 1
    assert acc.recall.micro == pytest.approx(4 / 6)
    assert acc.recall.macro == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    # F1 of P = 4/5 and R = 2/3: 2 * 8/15 / (22/15) = 8/11; macro: P = 5/6, R = 5/8 -> 5/7.
    assert acc.f1.micro == pytest.approx(8 / 11)
    assert acc.f1.macro == pytest.approx(5 / 7)
    assert acc.exact_match == pytest.approx(1 / 4)
    assert acc.per_question[3].retrieved == ("Q5", "Q6")
    assert acc.per_question[3].exact is True
    assert acc.per_question[4].exact is None
    assert acc.per_question[4].unmeasured_reason == NO_GOLD


def test_paper_mode_records_its_recall_denominator() -> None:
    acc = retrieval_accuracy(RETRIEVED, GOLD)
    assert acc.n_no_gold == 1
    assert acc.recall.denominator == 6  # 1 + 2 + 1 + 2 gold ids of questions 0-3
    assert (
        acc.recall_denominator
        == "the gold ids of the 4 questions with gold, 1 without gold left out"
    )


def test_reference_mode_divides_by_two_per_question_over_all_questions() -> None:
    """The authors' ``ablation/retrieve_eval.py``: ``gold_all = 1085*2``, ``recall =
    correct/gold_all``, ``precision = correct/cite_all``, looping over every question; each
    question's gold is its 2 generating people (``knowledge_graph[0]`` and ``[1]``). The paper:
    "our retrieval accuracy is 75.9" (§5.3).

    Every question counts, question 4 (no gold, retrieved Q9) included:
      correct 1 + 1 + 0 + 2 + 0 = 4; retrieved 2 + 1 + 0 + 2 + 1 = 6; recall denominator 5 * 2 = 10.
    (Before this mode matched the script, question 4 was left out: P = 4/5, R = 4/8.)
    """
    rules = KalmaRules.for_mode("reference")
    assert rules.retrieval_recall_per_question == 2
    assert rules.retrieval_scores_questions_without_gold
    assert not KalmaRules.for_mode("paper").retrieval_scores_questions_without_gold
    acc = retrieval_accuracy(RETRIEVED, GOLD, mode="reference")
    assert (acc.n_questions, acc.n_measured, acc.n_unmeasured, acc.n_no_gold) == (5, 5, 0, 1)
    assert acc.unmeasured_reason is None
    assert (acc.n_correct, acc.n_retrieved, acc.n_gold) == (4, 6, 6)
    assert acc.precision.micro == pytest.approx(4 / 6)
    # Macro precision over the 4 questions that retrieved something: (1/2 + 1 + 1 + 0) / 4.
    assert acc.precision.macro == pytest.approx(5 / 8)
    assert acc.recall.denominator == 10
    assert acc.recall.micro == pytest.approx(4 / 10)
    # Macro recall: mean(1/2, 1/2, 0/2, 2/2, 0/2) = 2/5.
    assert acc.recall.macro == pytest.approx(2 / 5)
    # F1: 2 * (2/3) * (2/5) / (2/3 + 2/5) = 1/2; macro 2 * (5/8) * (2/5) / (41/40) = 20/41.
    assert acc.f1.micro == pytest.approx(1 / 2)
    assert acc.f1.macro == pytest.approx(20 / 41)
    # Exact-set accuracy stays over the 4 questions with gold.
    assert acc.exact_match == pytest.approx(1 / 4)
    assert acc.recall.mode == "reference"
    assert acc.recall_denominator == (
        "2 per question × 5 questions = 10 (the authors' retrieve_eval.py: 1085*2), "
        "the 1 without gold included"
    )


def test_reference_denominator_on_a_biokalma_shaped_split() -> None:
    """BioKaLMA: 1,085 questions, 98 without graphs. Retrieving exactly the 987 one-person gold
    sets gives paper recall 987/987 but reference recall 987/(1085*2) = 0.4548..."""
    gold = [[] for _ in range(98)] + [[f"Q{i}"] for i in range(987)]
    paper = retrieval_accuracy(gold, gold)
    reference = retrieval_accuracy(gold, gold, mode="reference")
    assert paper.recall.micro == 1.0 and paper.recall.denominator == 987
    assert reference.recall.denominator == 2170
    assert reference.recall.micro == pytest.approx(987 / 2170)
    assert reference.precision.micro == 1.0
    assert reference.n_no_gold == 98 and reference.n_measured == 1085


def test_score_question() -> None:
    one = score_question(["Q1", "Q2", "Q1"], ["Q2"])
    assert (one.retrieved, one.gold, one.correct, one.exact) == (("Q1", "Q2"), ("Q2",), 1, False)


def test_no_gold_at_all_is_unmeasured_not_zero() -> None:
    acc = retrieval_accuracy([["Q1"], []], [[], []])
    assert acc.precision.micro is None and acc.recall.micro is None and acc.f1.micro is None
    assert acc.exact_match is None
    assert acc.n_unmeasured == 2 and acc.n_measured == 0


def test_no_gold_at_all_scores_zero_in_reference_mode() -> None:
    """The script counts such questions: 0 correct of 1 retrieved, 0 of 2 * 2 gold."""
    acc = retrieval_accuracy([["Q1"], []], [[], []], mode="reference")
    assert acc.precision.micro == 0.0 and acc.recall.micro == 0.0
    assert acc.recall.denominator == 4
    assert acc.exact_match is None
    assert acc.n_unmeasured == 0 and acc.n_measured == 2 and acc.n_no_gold == 2


def test_bad_inputs() -> None:
    with pytest.raises(DataError, match="2 retrieved lists for 1 gold"):
        retrieval_accuracy([["Q1"], ["Q2"]], [["Q1"]])
    with pytest.raises(DataError, match=r"gold\[1\]"):
        retrieval_accuracy([["Q1"], ["Q2"]], [["Q1"], "Q2"])  # type: ignore[list-item]
    with pytest.raises(ConfigError):
        retrieval_accuracy([["Q1"]], [["Q1"]], mode="code")  # type: ignore[arg-type]
