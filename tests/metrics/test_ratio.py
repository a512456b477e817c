"""Micro / macro ratio aggregation, F1 and run summaries against hand-computed numbers."""

from __future__ import annotations

import json
import math

import pytest

from citegraph.errors import ConfigError
from citegraph.metrics import (
    MicroMacro,
    f1_micro_macro,
    f1_score,
    macro_value,
    micro_macro,
    micro_value,
    summarise_micro_macro_runs,
    summarise_runs,
)

# Four samples: 1/2, 3/3, 0/0 (no unit), unmeasured; and 0/4.
PAIRS = [(1, 2), (3, 3), (0, 0), None, (0, 4)]


def test_micro_is_sum_over_sum() -> None:
    # (1 + 3 + 0 + 0) / (2 + 3 + 0 + 4) = 4 / 9
    assert micro_value(PAIRS) == pytest.approx(4 / 9)


def test_macro_excludes_zero_denominators_by_default() -> None:
    # kept: 1/2, 3/3, 0/4 -> (0.5 + 1 + 0) / 3 = 0.5
    assert macro_value(PAIRS) == pytest.approx(0.5)


def test_macro_counts_zero_denominator_as_zero_when_asked() -> None:
    # kept: 1/2, 3/3, 0 (the 0/0 sample), 0/4 -> 1.5 / 4 = 0.375
    assert macro_value(PAIRS, "zero") == pytest.approx(0.375)


def test_micro_macro_record_and_counts() -> None:
    result = micro_macro(PAIRS, mode="paper")
    assert result.micro == pytest.approx(4 / 9)
    assert result.macro == pytest.approx(0.5)
    assert (result.n, result.n_excluded, result.n_unmeasured, result.n_macro) == (5, 1, 1, 3)
    assert (result.numerator, result.denominator) == (4, 9)
    assert result.mode == "paper"
    assert result.reason is None
    zero = micro_macro(PAIRS, zero_denominator="zero")
    # the 0/0 sample is now in the macro: n_macro = 5 - 1 unmeasured = 4
    assert (zero.n_excluded, zero.n_macro, zero.macro) == (0, 4, pytest.approx(0.375))


def test_nothing_to_average_is_none_with_a_reason_never_nan() -> None:
    empty = micro_macro([])
    assert (empty.micro, empty.macro, empty.n) == (None, None, 0)
    assert empty.reason == "no samples"
    zeros = micro_macro([(0, 0), (0, 0)])
    assert (zeros.micro, zeros.macro, zeros.n_excluded) == (None, None, 2)
    unmeasured = micro_macro([None, None], reason="no gold minimum knowledge set")
    assert (unmeasured.micro, unmeasured.macro) == (None, None)
    assert unmeasured.reason == "no gold minimum knowledge set"
    assert unmeasured.n_unmeasured == 2
    # JSON round trip: None stays null, no NaN anywhere
    dumped = unmeasured.model_dump_json()
    assert "NaN" not in dumped
    assert MicroMacro.model_validate(json.loads(dumped)) == unmeasured


def test_zero_denominator_macro_zero_policy_gives_zero_not_none() -> None:
    # all samples 0/0 with policy "zero": macro = 0 / 2 = 0.0, micro still unmeasured
    result = micro_macro([(0, 0), (0, 0)], zero_denominator="zero")
    assert result.macro == 0.0
    assert result.micro is None


def test_bad_inputs_raise_config_error() -> None:
    with pytest.raises(ConfigError):
        micro_macro([(1, 2)], zero_denominator="drop")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        micro_macro([(-1, 2)])


@pytest.mark.parametrize(
    ("p", "r", "expected"),
    [
        (0.5, 0.4, 2 * 0.5 * 0.4 / 0.9),  # Figure 2: 0.4 / 0.9 = 0.4444...
        (0.36, 0.436, 0.39436),  # KaLMA Table 3, GPT-4 micro: 2*.36*.436/.796 = 0.394372
        (0.0, 0.0, 0.0),
        (1.0, 0.0, 0.0),
        (None, 0.5, None),
        (0.5, None, None),
    ],
)
def test_f1_score(p: float | None, r: float | None, expected: float | None) -> None:
    got = f1_score(p, r)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-4)


def test_f1_micro_macro_uses_aggregated_p_and_r() -> None:
    # precision per sample: 1/1, 0/3 -> micro 1/4, macro 0.5
    # recall per sample:    1/2, 1/2 -> micro 2/4, macro 0.5
    p = micro_macro([(1, 1), (0, 3)], mode="reference")
    r = micro_macro([(1, 2), (1, 2)], mode="reference")
    f1 = f1_micro_macro(p, r)
    assert f1.micro == pytest.approx(2 * 0.25 * 0.5 / 0.75)  # 1/3
    assert f1.macro == pytest.approx(0.5)
    # mean of per-sample F1s would be (2*1*.5/1.5 + 0) / 2 = 1/3: not what macro F1 is
    assert f1.macro != pytest.approx(1 / 3)
    assert (f1.method, f1.mode, f1.n) == ("f1", "reference", 2)
    unmeasured = f1_micro_macro(p, micro_macro([None, None], reason="no gold"))
    assert (unmeasured.micro, unmeasured.macro) == (None, None)
    assert unmeasured.reason == "recall: no gold"


def test_summarise_runs_mean_and_sample_std() -> None:
    # values 0.36, 0.35, 0.37: mean 0.36, sample std sqrt((0 + 1e-4 + 1e-4) / 2) = 0.01
    summary = summarise_runs([0.36, 0.35, 0.37, None])
    assert summary.mean == pytest.approx(0.36)
    assert summary.std == pytest.approx(0.01)
    assert (summary.n_runs, summary.n_measured) == (4, 3)
    single = summarise_runs([0.5])
    assert (single.mean, single.std) == (0.5, None)
    assert summarise_runs([None]).mean is None


def test_summarise_micro_macro_runs() -> None:
    runs = [
        micro_macro([(1, 2), (1, 1)], mode="paper"),  # micro 2/3, macro 0.75
        micro_macro([(0, 2), (1, 1)], mode="paper"),  # micro 1/3, macro 0.5
    ]
    summary = summarise_micro_macro_runs(runs)
    assert summary.micro.mean == pytest.approx(0.5)
    # std of (2/3, 1/3) = sqrt(2 * (1/6)^2 / 1) = sqrt(2)/6
    assert summary.micro.std == pytest.approx(math.sqrt(2) / 6)
    assert summary.macro.mean == pytest.approx(0.625)
    assert summary.mode == "paper"
