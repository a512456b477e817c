"""Confusion matrix and per-class / micro / macro F1 against hand-computed numbers."""

from __future__ import annotations

import pytest

from citegraph.errors import ConfigError, DataError
from citegraph.metrics import (
    UNPARSEABLE,
    BootstrapConfig,
    bootstrap_classification,
    classification_scores,
    confusion_matrix,
)

LABELS = ["a", "b", "c"]
# 8 samples; gold a a a b b c c c
GOLD = ["a", "a", "a", "b", "b", "c", "c", "c"]
PRED = ["a", "b", None, "b", "a", "c", "c", None]
# matrix (rows gold, columns a b c unparseable):
#   a: [1, 1, 0, 1]
#   b: [1, 1, 0, 0]
#   c: [0, 0, 2, 1]


def test_confusion_matrix_counts() -> None:
    m = confusion_matrix(GOLD, PRED, LABELS)
    assert m.columns == ("a", "b", "c", UNPARSEABLE)
    assert m.counts == ((1, 1, 0, 1), (1, 1, 0, 0), (0, 0, 2, 1))
    assert (m.n, m.n_unparseable, m.n_correct) == (8, 2, 4)
    assert m.cell("a", None) == 1 and m.cell("c", "c") == 2
    assert m.row_sum("a") == 3 and m.row_sum("a", with_unparseable=False) == 2
    assert m.column_sum("a") == 2 and m.column_sum("c") == 2


def test_unparseable_counted_wrong() -> None:
    s = classification_scores(confusion_matrix(GOLD, PRED, LABELS), unparseable="wrong")
    # micro = trace / all = 4 / 8
    assert s.micro_f1 == pytest.approx(0.5)
    assert (s.n_scored, s.n_correct, s.n_dropped) == (8, 4, 0)
    a, b, c = s.per_class
    # a: P = 1/2, R = 1/3 (support 3 incl. the unparseable one), F1 = 2*(1/6)/(5/6) = 0.4
    assert (a.precision, a.recall, a.f1) == pytest.approx((0.5, 1 / 3, 0.4))
    assert (a.support, a.predicted, a.correct) == (3, 2, 1)
    # b: P = 1/2, R = 1/2, F1 = 0.5
    assert (b.precision, b.recall, b.f1) == pytest.approx((0.5, 0.5, 0.5))
    # c: P = 2/2, R = 2/3, F1 = 2*(2/3)/(5/3) = 0.8
    assert (c.precision, c.recall, c.f1) == pytest.approx((1.0, 2 / 3, 0.8))
    # macro = (0.4 + 0.5 + 0.8) / 3 = 1.7 / 3
    assert s.macro_f1 == pytest.approx(1.7 / 3)
    assert s.macro_over == ("a", "b", "c")
    assert s.of("c") == c


def test_unparseable_dropped() -> None:
    s = classification_scores(confusion_matrix(GOLD, PRED, LABELS), unparseable="drop")
    # 2 dropped, micro = 4 / 6
    assert s.micro_f1 == pytest.approx(4 / 6)
    assert (s.n_scored, s.n_dropped) == (6, 2)
    a, _, c = s.per_class
    # a: support 2, R = 1/2, P = 1/2 -> F1 0.5; c: support 2, R = 1, P = 1 -> F1 1
    assert (a.support, a.recall, a.f1) == (2, 0.5, 0.5)
    assert (c.support, c.recall, c.f1) == (2, 1.0, 1.0)
    # macro = (0.5 + 0.5 + 1) / 3
    assert s.macro_f1 == pytest.approx(2 / 3)


def test_never_predicted_gold_label_enters_the_macro_as_zero() -> None:
    """Paper mode: macro-F1 over all gold classes, F1 = 0 where a class is never predicted.

    CAQA §5.3: "we report the F1 score for the performance on each attribution category ...
    calculated according its precision and recall"; Table 5 prints "-" for a category an
    evaluator cannot identify, so the label's own F1 stays undefined while the macro counts 0.
    """
    # c is never predicted: P_c = 0/0 undefined, R_c = 0/2, F1 undefined
    m = confusion_matrix(["a", "b", "c", "c"], ["a", "a", "b", "a"], LABELS)
    paper = classification_scores(m, macro="gold")
    c = paper.of("c")
    assert (c.precision, c.recall, c.f1) == (None, 0.0, None)
    assert c.reason is not None and "never predicted" in c.reason
    # a: P = 1/3, R = 1 -> F1 = 2*(1/3)/(4/3) = 0.5; b: P = 0/1 = 0, R = 0/1 = 0 -> F1 0
    assert paper.of("a").f1 == pytest.approx(0.5)
    assert paper.of("b").f1 == 0.0
    # macro over the 3 gold labels a, b, c = (0.5 + 0 + 0) / 3 (was (0.5 + 0) / 2 = 0.25)
    assert paper.macro_f1 == pytest.approx(0.5 / 3)
    assert paper.macro_over == ("a", "b", "c")
    assert (paper.macro_as_zero, paper.macro_left_out) == (("c",), ())
    assert paper.reason is not None and "counts 1 as F1 = 0 (c: never predicted" in paper.reason


def test_four_labels_two_never_predicted() -> None:
    """The issue's case: 4 labels, 2 never predicted; paper macro = (F1a + F1c + 0 + 0) / 4."""
    gold = ["a", "a", "a", "b", "b", "c", "c", "d"]
    pred = ["a", "a", "c", "a", "c", "c", "a", "c"]
    # rows gold, columns a b c d: a [2,0,1,0]; b [1,0,1,0]; c [1,0,1,0]; d [0,0,1,0]
    # column sums a 4, b 0, c 4, d 0; trace 3
    m = confusion_matrix(gold, pred, ["a", "b", "c", "d"])
    assert m.counts == ((2, 0, 1, 0, 0), (1, 0, 1, 0, 0), (1, 0, 1, 0, 0), (0, 0, 1, 0, 0))
    paper = classification_scores(m)
    # a: P 2/4, R 2/3 -> 2*(1/3)/(7/6) = 4/7; c: P 1/4, R 1/2 -> 2*(1/8)/(3/4) = 1/3
    assert paper.of("a").f1 == pytest.approx(4 / 7)
    assert paper.of("c").f1 == pytest.approx(1 / 3)
    assert paper.of("b").f1 is None and paper.of("d").f1 is None
    # (4/7 + 1/3 + 0 + 0) / 4 = 19/84 ~ 0.226 (the old "defined" mean over a, c was 19/42 ~ 0.452)
    assert paper.macro_f1 == pytest.approx(19 / 84)
    assert paper.macro_over == ("a", "b", "c", "d")
    assert paper.macro_as_zero == ("b", "d")
    assert paper.micro_f1 == pytest.approx(3 / 8)
    strict = classification_scores(m, macro="strict")
    assert strict.macro_f1 is None and strict.macro_over == ()
    assert strict.reason is not None and "undefined for b, d" in strict.reason
    assert ":NaN" not in strict.model_dump_json()  # undefined is null


def test_predicted_only_label_is_left_out_of_the_paper_macro() -> None:
    """ "all gold classes": a label with no gold sample is not averaged, even if predicted."""
    # c has no gold sample and is predicted twice
    m = confusion_matrix(["a", "a", "b", "b"], ["a", "c", "b", "c"], LABELS)
    paper = classification_scores(m)
    c = paper.of("c")
    # P_c = 0/2 = 0, R_c = 0/0 undefined -> F1 undefined
    assert (c.precision, c.recall, c.f1, c.support, c.predicted) == (0.0, None, None, 0, 2)
    # a: P 1/1, R 1/2 -> 2/3; b likewise; macro over a, b = 2/3 (sklearn's union of gold and
    # predicted labels with zero_division=0 would give (2/3 + 2/3 + 0) / 3 = 4/9)
    assert paper.macro_f1 == pytest.approx(2 / 3)
    assert paper.macro_over == ("a", "b") and paper.macro_left_out == ("c",)
    assert paper.reason is not None and "c (predicted 2 times)" in paper.reason
    # the two c predictions still cost the recall of a and b, and the micro: 2 / 4
    assert paper.micro_f1 == 0.5
    strict = classification_scores(m, macro="strict")
    assert strict.macro_f1 is None  # R_c = 0/0 is NaN in NumPy


def test_strict_f1_is_undefined_when_precision_and_recall_are_zero() -> None:
    """Reference mode: the authors' F1 = 2PR/(P+R) in NumPy is 0/0 = NaN when P = R = 0."""
    gold = ["a", "a", "b", "b", "c", "c"]
    pred = ["a", "b", "c", "a", "c", "a"]
    # rows gold, columns a b c: a [1,1,0]; b [1,0,1]; c [1,0,1]; column sums a 3, b 1, c 2
    m = confusion_matrix(gold, pred, LABELS)
    strict = classification_scores(m, macro="strict")
    b = strict.of("b")
    # b is predicted once, never correctly: P = 0/1, R = 0/2, F1 = 0/0
    assert (b.precision, b.recall, b.f1) == (0.0, 0.0, None)
    assert b.reason is not None and "0/0" in b.reason
    assert strict.macro_f1 is None
    paper = classification_scores(m)
    # paper: F1_b = 0; a: P 1/3, R 1/2 -> 0.4; c: P 1/2, R 1/2 -> 0.5; macro = 0.9 / 3
    assert paper.of("b").f1 == 0.0
    assert paper.macro_f1 == pytest.approx(0.3)
    assert paper.macro_as_zero == ()  # b's F1 is defined (0), not undefined


def _numpy_reference(counts: tuple[tuple[int, ...], ...]) -> tuple[list[float], float, float]:
    """The authors' evaluate_confusion_matrix arithmetic (REFERENCE_NOTES CAQA §2.3), in NumPy,
    on the matrix without the unparseable column (their sklearn matrix has none)."""
    np = pytest.importorskip("numpy")
    cm = np.array([row[:-1] for row in counts], dtype=np.int64)
    f1 = np.zeros(cm.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(cm.shape[0]):
            tp = cm[i, i]
            precision = tp / np.sum(cm[:, i])
            recall = tp / np.sum(cm[i, :])
            f1[i] = 2 * precision * recall / (precision + recall)
        micro = np.sum(np.diag(cm)) / np.sum(cm)
    return [float(x) for x in f1], float(np.mean(f1)), float(micro)


@pytest.mark.parametrize(
    ("gold", "pred", "labels"),
    [
        (
            ["a", "a", "a", "b", "b", "c", "c", "d"],
            ["a", "a", "c", "a", "c", "c", "a", "c"],
            "abcd",
        ),
        (["a", "a", "b", "b", "c", "c"], ["a", "b", "c", "a", "c", "a"], "abc"),
        (["a", "a", "b", "b"], ["a", "c", "b", "c"], "abc"),
        (["a", "b", "c"], ["a", "b", "c"], "abc"),
        (GOLD, PRED, "abc"),
    ],
)
def test_strict_matches_numpy_nan_for_nan(gold: list[str], pred: list[str], labels: str) -> None:
    """Run NumPy on the same matrices: every NaN F1 is our None, every other value equal."""
    m = confusion_matrix(gold, pred, list(labels))
    strict = classification_scores(m, unparseable="drop", macro="strict")
    f1, macro, micro = _numpy_reference(m.counts)
    for ours, theirs in zip(strict.per_class, f1, strict=True):
        assert (ours.f1 is None) == (theirs != theirs)  # NaN != NaN
        if ours.f1 is not None:
            assert ours.f1 == pytest.approx(theirs)
    assert (strict.macro_f1 is None) == (macro != macro)
    if strict.macro_f1 is not None:
        assert strict.macro_f1 == pytest.approx(macro)
    assert strict.micro_f1 == pytest.approx(micro)


def test_numpy_gives_nan_where_the_notes_say() -> None:
    """REFERENCE_NOTES CAQA §2.3: "NaN if a class is never predicted, and then macro becomes
    NaN"; also NaN for a class predicted but never correct, and for a never-gold class."""
    m = confusion_matrix(["a", "a", "b", "b"], ["a", "c", "a", "a"], LABELS)
    # a: P 1/3, R 1/2 -> 0.4; b: never predicted -> P 0/0; c: never gold -> R 0/0
    f1, macro, _ = _numpy_reference(m.counts)
    assert f1[0] == pytest.approx(0.4)
    assert f1[1] != f1[1] and f1[2] != f1[2] and macro != macro
    # predicted once, never correct: P = 0/1, R = 0/1 -> F1 0/0 = NaN (our f1_score gives 0)
    f1, _, _ = _numpy_reference(confusion_matrix(["a", "b"], ["b", "a"], ["a", "b"]).counts)
    assert f1[0] != f1[0] and f1[1] != f1[1]


def test_empty_and_all_unparseable() -> None:
    s = classification_scores(confusion_matrix([], [], LABELS))
    assert s.micro_f1 is None and s.macro_f1 is None
    dropped = classification_scores(
        confusion_matrix(["a", "b"], [None, None], LABELS), unparseable="drop"
    )
    assert dropped.micro_f1 is None and dropped.n_dropped == 2
    wrong = classification_scores(confusion_matrix(["a", "b"], [None, None], LABELS))
    assert wrong.micro_f1 == 0.0


def test_bad_inputs() -> None:
    with pytest.raises(ConfigError):
        confusion_matrix(["a"], [], LABELS)
    with pytest.raises(ConfigError):
        confusion_matrix(["a"], ["a"], ["a", "a"])
    with pytest.raises(DataError, match="line 2"):
        confusion_matrix(["a", "z"], ["a", "a"], LABELS)
    with pytest.raises(DataError):
        confusion_matrix(["a"], ["z"], LABELS)
    m = confusion_matrix(["a"], ["a"], LABELS)
    with pytest.raises(ConfigError):
        classification_scores(m, unparseable="skip")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        classification_scores(m, macro="nan")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):  # the old policy that dropped undefined F1s is gone
        classification_scores(m, macro="defined")  # type: ignore[arg-type]


def test_bootstrap_is_deterministic_and_degenerate_when_all_correct() -> None:
    config = BootstrapConfig(n_resamples=200, seed=3)
    first = bootstrap_classification(GOLD, PRED, LABELS, config)
    assert first == bootstrap_classification(GOLD, PRED, LABELS, config)
    assert set(first) == {"micro", "macro", "f1:a", "f1:b", "f1:c"}
    micro = first["micro"]
    assert micro is not None and micro.low <= 0.5 <= micro.high
    assert micro.n_valid == 200 and micro.unit == "sample"
    # every sample correct: every resample has micro = 1 and F1 = 1 for the labels it holds
    perfect = bootstrap_classification(["a", "b", "a"], ["a", "b", "a"], LABELS, config)
    assert perfect["micro"] is not None
    assert (perfect["micro"].low, perfect["micro"].high) == (1.0, 1.0)
    # c never occurs: its F1 is undefined on every resample
    assert perfect["f1:c"] is None
