"""Kendall's tau-b and the pair counts behind it, on pairs ordered by hand.

x = [1, 2, 2, 4, 5], y = [2, 1, 3, 3, 3]; the ten pairs (i < j):
(0,1) x up, y down: discordant. (0,2) (0,3) (0,4) (1,3) (1,4): both up, concordant.
(1,2): tied on x. (2,3) (2,4) (3,4): tied on y. So C = 5, D = 1, n1 = 1, n2 = 3, n0 = 10:
tau-b = (5 - 1) / sqrt((10 - 1)(10 - 3)) = 4 / sqrt(63).
"""

from __future__ import annotations

import math

import pytest

from citegraph.errors import ConfigError
from citegraph.metrics import kendall_tau_b, pair_counts

X = [1, 2, 2, 4, 5]
Y = [2, 1, 3, 3, 3]


def test_pair_counts_by_hand() -> None:
    counts = pair_counts(X, Y)
    assert (counts.concordant, counts.discordant, counts.tied_x, counts.tied_y) == (5, 1, 1, 3)
    assert counts.pairs == 10


def test_tau_b_by_hand() -> None:
    tau = kendall_tau_b(X, Y)
    assert tau.value == pytest.approx(4 / math.sqrt(63))
    assert tau.n == 5 and tau.statistic == "kendall_tau_b"
    assert tau.p_value is not None and 0 < tau.p_value < 1


def test_tau_b_without_ties_is_tau_a() -> None:
    # x = 1..4, y = 1, 3, 2, 4: one discordant pair (1,2) of six -> (5 - 1) / 6.
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]).value == pytest.approx(4 / 6)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]).value == pytest.approx(-1.0)


def test_tau_b_undefined_is_none_with_a_reason() -> None:
    constant = kendall_tau_b([1, 2, 3], [4, 4, 4])
    assert constant.value is None and "constant" in (constant.reason or "")
    one = kendall_tau_b([1], [1])
    assert one.value is None and one.reason


def test_tau_b_refuses_unpaired_input() -> None:
    with pytest.raises(ConfigError):
        kendall_tau_b([1, 2], [1])
