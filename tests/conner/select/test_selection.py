"""CONNER-guided selection (§5): Eq. 9 quality, knowledge argmax, top-n demonstrations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from citegraph.conner import Knowledge, MetricValue
from citegraph.conner.select import (
    INTRINSIC_METRICS,
    knowledge_quality,
    select_best_demonstrations,
    select_knowledge,
)
from citegraph.errors import ConfigError


def mv(value: float | None, reason: str | None = None) -> MetricValue:
    return MetricValue(value=value, reason=reason if value is None else None, model="m")


def scores(
    fact: float | None, rel: float | None, coh: float | None, info: float | None
) -> dict[str, MetricValue]:
    values = dict(zip(INTRINSIC_METRICS, (fact, rel, coh, info), strict=True))
    return {m: mv(v, None if v is not None else "model down") for m, v in values.items()}


def test_eq9_weighted_sum() -> None:
    s = scores(0.9, 0.5, 0.8, 0.3)
    assert knowledge_quality(s).value == pytest.approx(2.5)  # 0.9 + 0.5 + 0.8 + 0.3
    # 2 * 0.9 + 1 * 0.5 + 0 * 0.8 + 0.5 * 0.3 = 1.8 + 0.5 + 0.15
    q = knowledge_quality(s, (2, 1, 0, 0.5))
    assert q.value == pytest.approx(2.45)
    assert q.model == "conner-quality" and q.details["factuality"] == 0.9
    assert "coherence_para" not in q.details  # γ = 0: not used
    named = knowledge_quality(s, {"relevance": 2.0, "informativeness": -1.0})
    assert named.value == pytest.approx(0.7)  # 2 * 0.5 - 0.3
    extra = {**s, "helpfulness": mv(100.0)}  # other metrics are ignored
    assert knowledge_quality(extra).value == pytest.approx(2.5)


def test_missing_component_none_or_renormalised() -> None:
    s = scores(0.9, None, 0.8, 0.3)
    q = knowledge_quality(s)
    assert q.value is None and "relevance: model down" in str(q.reason)
    absent = {k: v for k, v in s.items() if k != "relevance"}
    assert "relevance: not computed" in str(knowledge_quality(absent).reason)
    # (0.9 + 0.8 + 0.3) * 4 / 3
    r = knowledge_quality(s, missing="renormalise")
    assert r.value == pytest.approx(8 / 3) and r.details["renormalised"] == pytest.approx(4 / 3)
    # a missing component weighted 0 is not needed: 0.9 + 0.8 + 0.3
    assert knowledge_quality(s, (1, 0, 1, 1)).value == pytest.approx(2.0)
    nothing = scores(None, None, None, None)
    assert knowledge_quality(nothing, missing="renormalise").value is None
    nan = {**scores(0.9, 0.5, 0.8, 0.3), "factuality": mv(float("nan"))}
    assert "not finite" in str(knowledge_quality(nan).reason)


def test_bad_gamma() -> None:
    s = scores(0.9, 0.5, 0.8, 0.3)
    bad: list[Sequence[float] | Mapping[str, float]] = [
        (1, 1, 1),
        (0, 0, 0, 0),
        (1, 1, 1, float("inf")),
        {"fluency": 1.0},
    ]
    for gamma in bad:
        with pytest.raises(ConfigError):
            knowledge_quality(s, gamma)
    with pytest.raises(ConfigError, match="missing"):
        knowledge_quality(s, missing="zero")  # type: ignore[arg-type]


def k(i: int) -> Knowledge:
    return Knowledge(id="q1", text=f"candidate {i}", source="llm:test")


def test_select_knowledge_argmax_ties_and_unmeasured() -> None:
    cands = [[k(0), k(1), k(2)], [k(0), k(1), k(2)], [k(0), k(1)]]
    sc = [
        [scores(0.1, 0.1, 0.1, 0.1), scores(0.9, 0.9, 0.9, 0.9), scores(0.5, 0.5, 0.5, 0.5)],
        [scores(None, 1, 1, 1), scores(0.5, 0.5, 0.5, 0.5), scores(0.5, 0.5, 0.5, 0.5)],
        [scores(None, 1, 1, 1), scores(1, None, 1, 1)],
    ]
    first, second, third = select_knowledge(cands, sc)
    assert first.index == 1 and first.knowledge == k(1) and first.quality == pytest.approx(3.6)
    assert first.qualities == pytest.approx((0.4, 3.6, 2.0))
    # candidate 0 is unmeasured (never preferred); 1 and 2 tie at 2.0: the first is kept
    assert second.index == 1 and second.quality == pytest.approx(2.0)
    assert second.qualities[0] is None and "tied with [2]" in second.reason
    assert third.index == 0 and third.quality is None and "kept the first" in third.reason
    # renormalised, candidate 0 of the second item: (1 + 1 + 1) * 4 / 3 = 4 beats 2.0
    assert select_knowledge(cands, sc, missing="renormalise")[1].index == 0


def test_select_knowledge_shapes() -> None:
    with pytest.raises(ConfigError):
        select_knowledge([[k(0)]], [])
    with pytest.raises(ConfigError):
        select_knowledge([[k(0), k(1)]], [[scores(1, 1, 1, 1)]])
    with pytest.raises(ConfigError, match="no candidate"):
        select_knowledge([[]], [[]])


def test_select_demonstrations_top_n_in_given_order() -> None:
    demos = ["d0", "d1", "d2", "d3", "d4", "d5"]
    qualities = [0.2, 0.9, None, 0.5, 0.9, 0.5]
    sc = [scores(q, 0, 0, 0) for q in qualities]
    assert select_best_demonstrations(demos, sc, n=2) == ["d1", "d4"]
    # the cut falls inside the tie at 0.5: the earlier d3 is kept, not d5
    assert select_best_demonstrations(demos, sc, n=3) == ["d1", "d3", "d4"]
    # the unmeasured d2 is never kept, so 5 come back for n = 8
    assert select_best_demonstrations(demos, sc, n=8) == ["d0", "d1", "d3", "d4", "d5"]
    # γ picks the order: weigh relevance only (all 0) -> all tie, the first n are kept
    assert select_best_demonstrations(demos, sc, (0, 1, 0, 0), 2) == ["d0", "d1"]
    with pytest.raises(ConfigError):
        select_best_demonstrations(demos, sc, n=0)
    with pytest.raises(ConfigError):
        select_best_demonstrations(demos, sc[:2], n=1)
