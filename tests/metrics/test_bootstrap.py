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
    micro_macro,
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
