"""Retrieval accuracy against hand-computed precision, recall, F1 and exact-set accuracy."""

from __future__ import annotations

import pytest

from citegraph.errors import ConfigError, DataError
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


def test_reference_mode_counts_two_gold_per_question() -> None:
    acc = retrieval_accuracy(RETRIEVED, GOLD, mode="reference")
    assert acc.precision.micro == pytest.approx(4 / 5)
    # Recall over 2 per measured question: 4 / (4 * 2); macro mean(1/2, 1/2, 0, 2/2).
    assert acc.recall.micro == pytest.approx(0.5)
    assert acc.recall.macro == pytest.approx(0.5)
    assert acc.f1.micro == pytest.approx(2 * 0.8 * 0.5 / 1.3)
    assert acc.recall.mode == "reference"


def test_score_question() -> None:
    one = score_question(["Q1", "Q2", "Q1"], ["Q2"])
    assert (one.retrieved, one.gold, one.correct, one.exact) == (("Q1", "Q2"), ("Q2",), 1, False)


def test_no_gold_at_all_is_unmeasured_not_zero() -> None:
    acc = retrieval_accuracy([["Q1"], []], [[], []])
    assert acc.precision.micro is None and acc.recall.micro is None and acc.f1.micro is None
    assert acc.exact_match is None
    assert acc.n_unmeasured == 2 and acc.n_measured == 0


def test_bad_inputs() -> None:
    with pytest.raises(DataError, match="2 retrieved lists for 1 gold"):
        retrieval_accuracy([["Q1"], ["Q2"]], [["Q1"]])
    with pytest.raises(DataError, match=r"gold\[1\]"):
        retrieval_accuracy([["Q1"], ["Q2"]], [["Q1"], "Q2"])  # type: ignore[list-item]
    with pytest.raises(ConfigError):
        retrieval_accuracy([["Q1"]], [["Q1"]], mode="code")  # type: ignore[arg-type]
