"""Percentile bootstrap: quantiles by hand, determinism, coverage of the point estimate."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from citegraph.errors import ConfigError
from citegraph.metrics import (
    BootstrapConfig,
    bootstrap_ci,
    bootstrap_f1,
    bootstrap_micro_macro,
    f1_micro_macro,
    join_reasons,
    micro_macro,
    micro_macro_ci,
    micro_macro_f1,
    percentile,
    with_bootstrap,
)


def test_percentile_linear_interpolation() -> None:
    values = [1.0, 2.0, 4.0, 8.0]
    # h = 3 * 0.5 = 1.5 -> 2 + (4 - 2) * 0.5 = 3
    assert percentile(values, 0.5) == pytest.approx(3.0)
    # h = 3 * 0.025 = 0.075 -> 1 + (2 - 1) * 0.075 = 1.075
    assert percentile(values, 0.025) == pytest.approx(1.075)
    # h = 3 * 0.975 = 2.925 -> 4 + (8 - 4) * 0.925 = 7.7
    assert percentile(values, 0.975) == pytest.approx(7.7)
    assert percentile(values, 0.0) == 1.0
    assert percentile(values, 1.0) == 8.0
    assert percentile([5.0], 0.3) == 5.0
    with pytest.raises(ConfigError):
        percentile([], 0.5)
    with pytest.raises(ConfigError):
        percentile(values, 1.5)


def test_constant_samples_give_a_degenerate_interval() -> None:
    # every answer 1/2: any resample has micro = macro = 0.5
    micro, macro = bootstrap_micro_macro([(1, 2)] * 7, BootstrapConfig(n_resamples=50))
    assert micro is not None and macro is not None
    assert (micro.low, micro.high, macro.low, macro.high) == (0.5, 0.5, 0.5, 0.5)
    assert (micro.n_resamples, micro.n_valid, micro.confidence) == (50, 50, 0.95)


# 12 answers with varied citation counts
PAIRS: list[tuple[float, float] | None] = [
    (3, 4), (1, 5), (2, 2), (0, 3), (4, 6), (1, 1),
    (0, 0), (2, 5), (5, 5), (1, 3), None, (3, 7),
]  # fmt: skip


def test_interval_contains_point_estimate_and_is_deterministic() -> None:
    config = BootstrapConfig(n_resamples=400, seed=7)
    point = micro_macro(PAIRS)
    first = with_bootstrap(point, PAIRS, config, unit="answer")
    again = with_bootstrap(point, PAIRS, config, unit="answer")
    assert first == again  # same seed, same intervals
    assert first.micro_ci is not None and first.macro_ci is not None
    assert point.micro is not None and point.macro is not None
    assert first.micro_ci.low <= point.micro <= first.micro_ci.high
    assert first.macro_ci.low <= point.macro <= first.macro_ci.high
    assert first.micro_ci.low < first.micro_ci.high  # data vary, the interval is not a point
    assert (first.micro_ci.unit, first.micro_ci.seed) == ("answer", 7)
    other = with_bootstrap(point, PAIRS, BootstrapConfig(n_resamples=400, seed=8))
    assert other.micro_ci != first.micro_ci


def test_wider_confidence_gives_wider_interval() -> None:
    narrow = bootstrap_ci(PAIRS, _micro, BootstrapConfig(n_resamples=300, confidence=0.5))
    wide = bootstrap_ci(PAIRS, _micro, BootstrapConfig(n_resamples=300, confidence=0.99))
    assert narrow is not None and wide is not None
    assert wide.low <= narrow.low and narrow.high <= wide.high
    assert wide.high - wide.low > narrow.high - narrow.low


def _micro(sample: Sequence[tuple[float, float] | None]) -> float | None:
    num = sum(p[0] for p in sample if p)
    den = sum(p[1] for p in sample if p)
    return num / den if den else None


def test_unmeasured_resamples_are_left_out() -> None:
    # 1 sample of 2 has a unit: a resample of 2 misses it with probability 1/4
    config = BootstrapConfig(n_resamples=200, seed=1)
    micro, _ = bootstrap_micro_macro([(1, 2), (0, 0)], config)
    assert micro is not None
    assert 100 < micro.n_valid < 200  # about 150 expected
    assert (micro.low, micro.high) == (0.5, 0.5)
    # nothing measurable at all -> no interval
    assert bootstrap_micro_macro([(0, 0)], config) == (None, None)
    assert bootstrap_micro_macro([], config) == (None, None)


def test_f1_interval_resamples_precision_and_recall_jointly() -> None:
    precision = [(1, 2), (2, 2), (0, 3), (3, 4), (1, 1)]
    recall = [(1, 3), (2, 2), (0, 2), (3, 5), (1, 4)]
    config = BootstrapConfig(n_resamples=300, seed=3)
    micro_ci, macro_ci = bootstrap_f1(precision, recall, config)
    point = f1_micro_macro(micro_macro(precision), micro_macro(recall))
    assert micro_ci is not None and macro_ci is not None
    assert point.micro is not None and point.macro is not None
    assert micro_ci.low <= point.micro <= micro_ci.high
    assert macro_ci.low <= point.macro <= macro_ci.high
    assert bootstrap_f1(precision, recall, config) == (micro_ci, macro_ci)
    with pytest.raises(ConfigError):
        bootstrap_f1(precision, recall[:-1], config)


def test_micro_macro_ci_is_micro_macro_with_intervals_only_when_asked() -> None:
    pairs = [(1, 2), (3, 3), (0, 0), None]
    assert micro_macro_ci(pairs, None, mode="paper") == micro_macro(pairs, mode="paper")
    config = BootstrapConfig(n_resamples=50, seed=3)
    expected = with_bootstrap(micro_macro(pairs, zero_denominator="zero"), pairs, config, unit="a")
    assert micro_macro_ci(pairs, config, zero_denominator="zero", unit="a") == expected


def test_micro_macro_f1_aggregates_each_metric_and_f1_of_precision_and_recall() -> None:
    precision = [(1, 2), (0, 0), (2, 2)]
    recall = [(1, 3), (1, 1), None]
    correctness = [(2, 2), (0, 0), (1, 2)]
    config = BootstrapConfig(n_resamples=40, seed=1)
    out = micro_macro_f1(
        {"correctness": correctness, "precision": precision, "recall": recall},
        config,
        zero_denominators={"correctness": "zero", "precision": "zero"},
        reasons={"recall": "why"},
        mode="paper",
        unit="answer",
    )
    assert set(out) == {"correctness", "precision", "recall", "f1"}
    assert out["correctness"] == with_bootstrap(
        micro_macro(correctness, zero_denominator="zero", mode="paper"),
        correctness,
        config,
        unit="answer",
    )
    assert out["recall"].reason is None  # measured: the reason is kept only when unmeasured
    micro_ci, macro_ci = bootstrap_f1(
        precision, recall, config, precision_zero_denominator="zero", unit="answer"
    )
    f1 = f1_micro_macro(out["precision"], out["recall"], mode="paper")
    assert out["f1"] == f1.model_copy(update={"micro_ci": micro_ci, "macro_ci": macro_ci})
    plain = micro_macro_f1({"precision": precision, "recall": recall}, None)
    assert plain["f1"].micro_ci is None and plain["precision"].zero_denominator == "exclude"


def test_join_reasons_sorts_distinct_reasons_and_skips_empty_ones() -> None:
    assert join_reasons(["b", None, "a", "b", ""]) == "a; b"
    assert join_reasons([None, ""]) is None
    assert join_reasons([]) is None
