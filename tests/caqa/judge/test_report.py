"""The CAQA evaluator report (Tables 5-7, §6.3) against hand-computed numbers."""

from __future__ import annotations

from typing import Final

import pytest

from citegraph.caqa import Complexity, Label
from citegraph.caqa.judge import (
    EvaluatorReport,
    evaluator_report,
    pearson_across_evaluators,
    render_report,
)
from citegraph.errors import ConfigError, DataError
from citegraph.metrics import BootstrapConfig

S: Final = "supportive"
INS: Final = "insufficient"
C: Final = "contradictory"
R: Final = "irrelevant"
U: Final = "unsupported"

# Ten samples with a known confusion matrix.
GOLD: list[Label] = [S, S, S, INS, INS, INS, C, C, R, R]
PRED: list[Label | None] = [S, S, INS, INS, C, S, C, R, R, S]
# rows gold, columns S I C R unparseable:
#   S: [2, 1, 0, 0, 0]
#   I: [1, 1, 1, 0, 0]
#   C: [0, 0, 1, 1, 0]
#   R: [1, 0, 0, 1, 0]
# column sums: S 4, I 2, C 2, R 2; trace 5


def test_four_way_per_label_micro_macro() -> None:
    report = evaluator_report(GOLD, PRED)
    assert report.confusion.counts == (
        (2, 1, 0, 0, 0),
        (1, 1, 1, 0, 0),
        (0, 0, 1, 1, 0),
        (1, 0, 0, 1, 0),
    )
    # Sup: P = 2/4, R = 2/3, F1 = 2*(1/3)/(7/6) = 4/7
    sup = report.label(S)
    assert (sup.precision, sup.recall, sup.f1) == pytest.approx((0.5, 2 / 3, 4 / 7))
    assert (sup.support, sup.predicted, sup.correct) == (3, 4, 2)
    # Ins: P = 1/2, R = 1/3, F1 = 2*(1/6)/(5/6) = 0.4
    assert report.label(INS).f1 == pytest.approx(0.4)
    # Con: P = 1/2, R = 1/2 -> 0.5; Irr: P = 1/2, R = 1/2 -> 0.5
    assert report.label(C).f1 == pytest.approx(0.5)
    assert report.label(R).f1 == pytest.approx(0.5)
    # micro = 5 / 10; macro = (4/7 + 0.4 + 0.5 + 0.5) / 4 = (69/35) / 4 = 69/140
    assert report.micro_f1 == pytest.approx(0.5)
    assert report.macro_f1 == pytest.approx(69 / 140)
    assert (report.n, report.n_scored, report.n_correct, report.n_unparseable) == (10, 10, 5, 0)
    assert report.labels == (S, INS, C, R)
    assert report.per_complexity == ()


# Same gold, two unparseable predictions (samples 5 and 10).
PRED_UNP: list[Label | None] = [S, S, INS, INS, None, S, C, R, R, None]
# rows gold, columns S I C R unparseable:
#   S: [2, 1, 0, 0, 0]
#   I: [1, 1, 0, 0, 1]
#   C: [0, 0, 1, 1, 0]
#   R: [0, 0, 0, 1, 1]
# column sums: S 3, I 2, C 1, R 2; trace 5


def test_unparseable_in_paper_mode_counts_as_wrong() -> None:
    report = evaluator_report(GOLD, PRED_UNP, mode="paper")
    assert report.confusion.counts[1] == (1, 1, 0, 0, 1)
    assert report.confusion.columns[-1] == "unparseable"
    # micro = 5 / 10 (the 2 unparseable stay in the denominator)
    assert report.micro_f1 == pytest.approx(0.5)
    assert (report.n_scored, report.n_unparseable, report.n_dropped) == (10, 2, 0)
    # Sup: P 2/3, R 2/3 -> 2/3; Ins: P 1/2, R 1/3 (support 3) -> 0.4
    # Con: P 1/1, R 1/2 -> 2/3; Irr: P 1/2, R 1/2 (support 2) -> 0.5
    f1 = [s.f1 for s in report.per_label]
    assert f1 == pytest.approx([2 / 3, 0.4, 2 / 3, 0.5])
    assert report.label(INS).support == 3
    # macro = (2/3 + 0.4 + 2/3 + 0.5) / 4 = (67/30) / 4 = 67/120
    assert report.macro_f1 == pytest.approx(67 / 120)
    assert "count as wrong" in report.description


def test_unparseable_in_reference_mode_is_dropped() -> None:
    report = evaluator_report(GOLD, PRED_UNP, mode="reference")
    # micro = 5 / 8 after dropping the 2
    assert report.micro_f1 == pytest.approx(5 / 8)
    assert (report.n, report.n_scored, report.n_dropped, report.n_unparseable) == (10, 8, 2, 2)
    # Ins: support 2, R 1/2, P 1/2 -> 0.5; Irr: support 1, R 1, P 1/2 -> 2/3
    assert report.label(INS).support == 2
    f1 = [s.f1 for s in report.per_label]
    assert f1 == pytest.approx([2 / 3, 0.5, 2 / 3, 2 / 3])
    # macro = (2/3 + 1/2 + 2/3 + 2/3) / 4 = 2.5 / 4
    assert report.macro_f1 == pytest.approx(0.625)
    assert "dropped" in report.description


# AttrScore predicts supportive / contradictory / irrelevant only.
GOLD_ATTR: list[Label] = [S, S, INS, INS, C, C, R, R]
PRED_ATTR: list[Label | None] = [S, C, S, R, C, C, R, S]
# rows gold, columns S I C R: S [1,0,1,0]; I [1,0,0,1]; C [0,0,2,0]; R [1,0,0,1]
# column sums: S 3, I 0, C 3, R 2; trace 4


def test_attrscore_missing_class() -> None:
    paper = evaluator_report(GOLD_ATTR, PRED_ATTR, label_set="attrscore")
    ins = paper.label(INS)
    # never predicted: recall 0/2, precision and F1 undefined (Table 5 "-")
    assert (ins.precision, ins.recall, ins.f1, ins.predicted) == (None, 0.0, None, 0)
    # Sup: P 1/3, R 1/2 -> 2*(1/6)/(5/6) = 0.4; Con: P 2/3, R 1 -> 0.8; Irr: P 1/2, R 1/2 -> 0.5
    assert paper.label(S).f1 == pytest.approx(0.4)
    assert paper.label(C).f1 == pytest.approx(0.8)
    assert paper.label(R).f1 == pytest.approx(0.5)
    assert paper.micro_f1 == pytest.approx(0.5)  # 4 / 8
    # paper macro over the 4 gold labels, insufficient (never predicted) as 0:
    # (0.4 + 0 + 0.8 + 0.5) / 4 = 0.425 (the old mean over the 3 defined F1s was 1.7 / 3)
    assert paper.macro_f1 == pytest.approx(0.425)
    assert paper.macro_over == (S, INS, C, R)
    assert paper.macro_as_zero == (INS,)
    assert paper.reason is not None and "counts 1 as F1 = 0 (insufficient" in paper.reason
    assert "counted as 0 (never predicted): insufficient" in paper.description
    assert "AttrScore" in paper.description
    reference = evaluator_report(GOLD_ATTR, PRED_ATTR, label_set="attrscore", mode="reference")
    assert reference.macro_f1 is None  # the authors' NaN
    assert reference.reason is not None and "insufficient" in reference.reason
    assert ":NaN" not in reference.model_dump_json()  # undefined is null
    with pytest.raises(DataError, match="cannot predict 'insufficient'"):
        evaluator_report([S, INS], [S, INS], label_set="attrscore")


def test_binary_collapse() -> None:
    gold: list[Label] = [S, S, INS, C, R, R]
    pred: list[Label | None] = [S, U, S, U, U, None]
    report = evaluator_report(gold, pred, label_set="binary")
    # gold collapses to S S U U U U; rows gold, columns S U unparseable:
    #   S: [1, 1, 0]; U: [1, 2, 1]; trace 3 -> micro 3/6
    assert report.labels == (S, U)
    assert report.confusion.counts == ((1, 1, 0), (1, 2, 1))
    assert report.micro_f1 == pytest.approx(0.5)
    # Sup: P 1/2, R 1/2 -> 0.5; Uns: P 2/3, R 2/4 -> 2*(1/3)/(7/6) = 4/7
    assert report.label(S).f1 == pytest.approx(0.5)
    assert report.label(U).f1 == pytest.approx(4 / 7)
    with pytest.raises(DataError):
        evaluator_report([S], [INS], label_set="binary")


def test_four_way_evaluator_on_binary_gold_is_scored_binary() -> None:
    # AttributionBench-style gold: predictions collapse too (insufficient -> unsupported)
    report = evaluator_report([S, U, U], [S, INS, S], label_set="four")
    assert report.labels == (S, U)
    # S U S vs S U U: 2 correct of 3
    assert report.micro_f1 == pytest.approx(2 / 3)
    assert report.description.startswith("Binary labels")


def test_per_complexity() -> None:
    # correct per sample (GOLD vs PRED): T T F T F F T F T F
    levels: list[Complexity | None] = [
        "single", "single", "union", "union", "intersection",
        "concatenation", "concatenation", "single", "union", None,
    ]  # fmt: skip
    report = evaluator_report(GOLD, PRED, complexities=levels)
    by_level = {c.complexity: c for c in report.per_complexity}
    # Table 6 order S, C, I, U
    assert [c.complexity for c in report.per_complexity] == [
        "single",
        "concatenation",
        "intersection",
        "union",
    ]
    # single: samples 1, 2, 8 -> T T F = 2/3; concatenation: 6, 7 -> F T = 1/2
    # intersection: 5 -> F = 0; union: 3, 4, 9 -> F T T = 2/3
    assert by_level["single"].micro_f1 == pytest.approx(2 / 3)
    assert by_level["concatenation"].micro_f1 == pytest.approx(0.5)
    assert by_level["intersection"].micro_f1 == 0.0
    assert by_level["union"].micro_f1 == pytest.approx(2 / 3)
    assert (by_level["single"].n, by_level["single"].n_correct) == (3, 2)
    assert report.n_without_complexity == 1
    # with the unparseable predictions, sample 5 (intersection) has none:
    # paper: 0/1 = 0; reference: dropped, nothing left -> None
    paper = evaluator_report(GOLD, PRED_UNP, complexities=levels)
    reference = evaluator_report(GOLD, PRED_UNP, complexities=levels, mode="reference")
    assert paper.per_complexity[2].micro_f1 == 0.0
    assert reference.per_complexity[2].micro_f1 is None
    assert (reference.per_complexity[2].n, reference.per_complexity[2].n_scored) == (1, 0)


def test_human_labels_kappa_and_micro() -> None:
    # human labels on samples 1-5 and 7-9:
    #   gold  S S S I I C C R
    #   human S S I I I C R R
    #   pred  S S I I C C R R
    human: list[Label | None] = [S, S, INS, INS, INS, None, C, R, R, None]
    report = evaluator_report(GOLD, PRED, human=human)
    h = report.human
    assert h is not None and h.n == 8
    # p_o = 6/8; gold freq S3 I2 C2 R1, human freq S2 I3 C1 R2
    # p_e = (3*2 + 2*3 + 2*1 + 1*2) / 64 = 1/4; kappa = (3/4 - 1/4) / (3/4) = 2/3
    assert h.kappa.value == pytest.approx(2 / 3)
    # pred vs human: all but sample 5 (C vs I) -> 7/8; pred vs gold there: 5/8
    assert h.micro_f1_human == pytest.approx(7 / 8)
    assert h.micro_f1_gold == pytest.approx(5 / 8)


def _four(pred: list[Label | None], name: str) -> EvaluatorReport:
    return evaluator_report([S, INS, C, R], pred, human=[S, INS, C, C], name=name)


def test_pearson_across_evaluators() -> None:
    # gold S I C R, human S I C C; (micro on gold, micro on human):
    #   A: S I C R -> (1, 3/4); B: S I R C -> (1/2, 3/4)
    #   C: S S S S -> (1/4, 1/4); D: S I S S -> (1/2, 1/2)
    reports = [
        _four([S, INS, C, R], "A"),
        _four([S, INS, R, C], "B"),
        _four([S, S, S, S], "C"),
        _four([S, INS, S, S], "D"),
        evaluator_report([S], [S], name="no human labels"),
    ]
    result = pearson_across_evaluators(reports)
    assert result.evaluators == ("A", "B", "C", "D") and result.n_skipped == 1
    assert result.auto == (1.0, 0.5, 0.25, 0.5)
    assert result.human == (0.75, 0.75, 0.25, 0.5)
    # means 9/16 both; dx = 7 -1 -5 -1 (/16), dy = 3 3 -5 -1 (/16)
    # Sxy = (21 - 3 + 25 + 1)/256 = 44/256; Sxx = 76/256; Syy = 44/256
    # r = 44 / sqrt(76 * 44) = sqrt(11/19)
    r = (11 / 19) ** 0.5
    assert result.pearson.value == pytest.approx(r)
    # n = 4, df = 2: p = 1 - |t| / sqrt(2 + t^2) with t = r sqrt(2 / (1 - r^2)), which is 1 - |r|
    assert result.pearson.p_value == pytest.approx(1 - r)
    few = pearson_across_evaluators(reports[:2])
    assert few.pearson.value is None and few.pearson.reason is not None
    assert "at least 3" in few.pearson.reason


def test_bootstrap_intervals_are_deterministic() -> None:
    config = BootstrapConfig(n_resamples=200, seed=11)
    first = evaluator_report(GOLD, PRED_UNP, bootstrap=config)
    second = evaluator_report(GOLD, PRED_UNP, bootstrap=config)
    assert first == second
    assert first.micro_f1_ci is not None
    assert first.micro_f1_ci.low <= 0.5 <= first.micro_f1_ci.high
    assert all(s.f1_ci is not None for s in first.per_label)
    assert first.micro_f1_ci.n_resamples == 200 and first.micro_f1_ci.seed == 11
    attr = evaluator_report(GOLD_ATTR, PRED_ATTR, label_set="attrscore", bootstrap=config)
    assert attr.label(INS).f1_ci is None  # undefined on every resample
    assert evaluator_report(GOLD, PRED).micro_f1_ci is None


def test_error_counts_and_json_round_trip() -> None:
    errors = [None] * 4 + ["unparseable", None, None, "EndpointUnavailable: timed out"]
    errors += [None, "unparseable"]
    report = evaluator_report(GOLD, PRED_UNP, errors=errors)
    assert report.n_errors == {"EndpointUnavailable": 1, "unparseable": 2}
    assert EvaluatorReport.model_validate_json(report.model_dump_json()) == report


def test_render_table_rows() -> None:
    report = evaluator_report(GOLD_ATTR, PRED_ATTR, label_set="attrscore", name="attrscore-13b")
    md = render_report(report, fmt="markdown")
    assert "| F1 | 0.400 | - | 0.800 | 0.500 | 0.500 |" in md
    assert "| Sup. | Ins. | Con. | Irr. | Overall |" in md
    assert "| insufficient | 1 | 0 | 0 | 1 | 0 |" in md
    text = render_report(report)
    assert "attrscore-13b" in text
    assert text.splitlines()[4].split() == ["Sup.", "Ins.", "Con.", "Irr.", "Overall"]
    assert text.splitlines()[5].split() == ["F1", "0.400", "-", "0.800", "0.500", "0.500"]
    levels: list[Complexity | None] = ["single", "union", "intersection", "concatenation"] * 2
    human: list[Label | None] = list(GOLD_ATTR)
    full = render_report(
        evaluator_report(
            GOLD_ATTR,
            PRED_ATTR,
            label_set="attrscore",
            complexities=levels,
            human=human,
            bootstrap=BootstrapConfig(n_resamples=50),
        )
    )
    assert "S." in full and "Cohen's kappa" in full and "F1 CI" in full
    with pytest.raises(ConfigError):
        render_report(report, fmt="html")  # type: ignore[arg-type]


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        evaluator_report([S, S], [S])
    with pytest.raises(ConfigError):
        evaluator_report([S], [S], complexities=[])
    with pytest.raises(ConfigError):
        evaluator_report([S], [S], mode="sklearn")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        evaluator_report([S], [S], label_set="five")  # type: ignore[arg-type]
    with pytest.raises(DataError):
        evaluator_report(["bogus"], [S])  # type: ignore[list-item]
