"""Meta-evaluation (§6): the human ratings file and Somers' D / Spearman against it.

Hand example: ratings [0, 1, 2, 2] and scores [0.1, 0.4, 0.3, 0.9]. Of the 6 pairs, (1, 2) is
discordant (rating up, score down), (2, 3) is tied on the rating, the other 4 are concordant.
D(metric | rating) = (4 - 1) / 5 untied-on-rating pairs = 0.6; D(rating | metric) = 3 / 6 = 0.5.
p-value: per-observation c = [3, 1, 0, 2], S = 14 - 6² / 4 = 5, Z = 6 / (2 sqrt 5) = 3 / sqrt 5.
Spearman: ranks [1, 2, 3.5, 3.5] and [1, 3, 2, 4] give rho = 3 / sqrt(4.5 * 5) = 0.632456.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from citegraph.conner import MetricValue
from citegraph.conner.correlate import correlate, read_ratings
from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.metrics import somers_d_p_value

P_HAND = math.erfc(3 / math.sqrt(5) / math.sqrt(2))  # 0.179712


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ratings.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_read_ratings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'id,factuality,coherence\nnq:1,2,0\n\nnq:2, 1 ,\nnq:3,,"2.0"\n',
    )
    assert read_ratings(path) == {
        ("nq:1", "factuality"): 2,
        ("nq:1", "coherence"): 0,
        ("nq:2", "factuality"): 1,
        ("nq:3", "coherence"): 2,
    }


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("id,factuality\nnq:1,3\n", 2, "factuality"),
        ("id,factuality\nnq:1,2\nnq:2,good\n", 3, "factuality"),
        ("id,factuality\nnq:1,1.5\n", 2, "factuality"),
        ("id,factuality\nnq:1,2\nnq:1,1\n", 3, "id"),
        ("id,factuality\n,2\n", 2, "id"),
        ("id,factuality\nnq:1,2,1\n", 2, None),
        ("sample,factuality\nnq:1,2\n", 1, "id"),
        ("id,factuality,factuality\n", 1, "factuality"),
        ("id\nnq:1\n", 1, None),
    ],
)
def test_read_ratings_bad_rows(tmp_path: Path, text: str, line: int, field: str | None) -> None:
    with pytest.raises(DataError) as info:
        read_ratings(write(tmp_path, text))
    assert info.value.line == line and info.value.field == field


def test_read_ratings_missing_and_empty(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError):
        read_ratings(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="empty file"):
        read_ratings(write(tmp_path, "\n\n"))


def test_somers_d_p_value_by_hand() -> None:
    p, reason = somers_d_p_value([0, 1, 2, 2], [0.1, 0.4, 0.3, 0.9])
    assert reason is None and p == pytest.approx(P_HAND, abs=1e-12)
    assert somers_d_p_value([0, 1], [0, 1]) == (0.0, None)  # perfect order, no spread
    assert somers_d_p_value([1, 1, 1], [0, 1, 2])[0] is None  # every pair tied
    assert somers_d_p_value([1], [1])[0] is None


def hand_ratings() -> dict[tuple[str, str], int]:
    return {(f"s{i}", "factuality"): r for i, r in enumerate([0, 1, 2, 2])}


def test_correlate_by_hand() -> None:
    values: dict[str, float | MetricValue | None] = {
        "s0": 0.1,
        "s1": 0.4,
        "s2": MetricValue(value=0.3, model="nli"),
        "s3": 0.9,
    }
    rows = correlate({"factuality": values}, hand_ratings())
    somers, rho = rows
    assert (somers.metric, somers.rating, somers.method) == ("factuality", "factuality", "somers_d")
    assert somers.value == pytest.approx(0.6) and somers.direction == "D(metric|rating)"
    assert somers.p_value == pytest.approx(P_HAND, abs=1e-12)
    assert (somers.n, somers.n_unmeasured, somers.n_unrated) == (4, 0, 0)
    assert rho.method == "spearman" and rho.value == pytest.approx(3 / math.sqrt(22.5))
    other = correlate(
        {"factuality": values}, hand_ratings(), methods=("somers_d",), somers_given="metric"
    )
    assert other[0].value == pytest.approx(0.5) and other[0].direction == "D(rating|metric)"
    assert other[0].p_value == pytest.approx(P_HAND, abs=1e-12)


def test_correlate_skips_and_counts_missing_values() -> None:
    ratings = {**hand_ratings(), ("s4", "factuality"): 1, ("s5", "factuality"): 0}
    values: dict[str, float | MetricValue | None] = {
        "s0": 0.1,
        "s1": 0.4,
        "s2": 0.3,
        "s3": 0.9,
        "s4": None,  # rated, unmeasured
        "s6": 0.7,  # measured, unrated
        # s5: rated, no value at all
    }
    (row,) = correlate({"factuality": values}, ratings, methods=("somers_d",))
    assert row.value == pytest.approx(0.6)
    assert (row.n, row.n_unmeasured, row.n_unrated) == (4, 2, 1)


def test_correlate_columns_and_undefined() -> None:
    ratings = {("a", "coherence"): 0, ("b", "coherence"): 2, ("a", "factuality"): 1}
    rows = correlate(
        {
            "coherence_para": {"a": 0.2, "b": 0.8},  # falls back to the 'coherence' column
            "nli": {"a": 0.2, "b": 0.8},  # a baseline mapped onto a column
            "relevance": {"a": 0.5},  # no such column
        },
        ratings,
        methods=("pearson",),
        columns={"nli": "coherence"},
    )
    coh, nli, rel = rows
    assert coh.rating == "coherence" and coh.value == pytest.approx(1.0)
    assert coh.reason == "p-value needs at least 3 pairs" and coh.n == 2
    assert nli.rating == "coherence" and nli.value == pytest.approx(1.0)
    assert rel.value is None and "no human ratings in column 'relevance'" in str(rel.reason)
    constant = correlate({"factuality": {"a": 0.5}}, ratings, methods=("somers_d",))
    assert constant[0].value is None and constant[0].n == 1


def test_correlate_bad_options() -> None:
    with pytest.raises(ConfigError):
        correlate({"factuality": {}}, {}, methods=("kendall",))  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        correlate({"factuality": {}}, {}, somers_given="x")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not finite"):
        correlate({"factuality": {"s0": float("nan")}}, hand_ratings())
