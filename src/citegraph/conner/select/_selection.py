"""CONNER-guided selection (§5): knowledge quality (Eq. 9), knowledge and demonstration choice.

``Q_know(q, k) = γᵀ · [S_fact, S_rel, S_coh_para, S_info]`` (:func:`knowledge_quality`), from
metric values already computed (the four intrinsic metrics, as their :class:`MetricValue`).

- **Knowledge selection**: among ``r`` candidates sampled for one query, keep
  ``argmax Q_know`` (:func:`select_knowledge`; the paper used r = 5, top-p 0.9).
- **Demonstration selection**: among ``m`` sampled training examples, keep the ``n`` with the
  highest ``Q_know`` for the few-shot prompt (:func:`select_best_demonstrations`; the paper used
  m = 30, n = 8).

The paper does not give γ; the default is ``(1, 1, 1, 1)``. The components are used as the
metrics give them (no rescaling): choose γ to balance their scales (e.g. an unbounded raw
paragraph-coherence score).

Missing components: a component that is absent, ``None`` (unmeasured) or not finite makes the
quality ``None`` with the reason (``missing="none"``, the default: the paper's sum needs all
four terms, and a silent zero would rank the candidate as if the metric had judged it bad). A
component whose γ is 0 is never needed. ``missing="renormalise"`` instead sums the measured
terms and scales by ``Σ|γ| / Σ_measured |γ|``, so a candidate missing one metric competes on the
others; the quality is ``None`` only when no weighted term is measured.

Pure functions: generating the candidates and scoring them is the caller's job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from citegraph.conner._types import DetailValue, Knowledge, Metric, MetricValue
from citegraph.errors import ConfigError

__all__ = [
    "DEFAULT_GAMMA",
    "INTRINSIC_METRICS",
    "KnowledgeChoice",
    "knowledge_quality",
    "select_best_demonstrations",
    "select_knowledge",
]

#: The components of S_intr, in the order of γ.
INTRINSIC_METRICS: tuple[Metric, ...] = (
    "factuality",
    "relevance",
    "coherence_para",
    "informativeness",
)
#: γ = (1, 1, 1, 1): the paper does not report its coefficients.
DEFAULT_GAMMA: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
#: The ``model`` recorded on a quality value.
QUALITY_MODEL = "conner-quality"

Gamma = Sequence[float] | Mapping[str, float]
Missing = Literal["none", "renormalise"]
T = TypeVar("T")


def _weights(gamma: Gamma) -> dict[str, float]:
    if isinstance(gamma, Mapping):
        unknown = set(gamma) - set(INTRINSIC_METRICS)
        if unknown:
            raise ConfigError(f"γ names unknown metrics {sorted(unknown)}; use {INTRINSIC_METRICS}")
        weights: dict[str, float] = {m: float(gamma.get(m, 0.0)) for m in INTRINSIC_METRICS}
    else:
        if len(gamma) != len(INTRINSIC_METRICS):
            raise ConfigError(f"γ needs {len(INTRINSIC_METRICS)} values, got {len(gamma)}")
        weights = dict(zip(INTRINSIC_METRICS, (float(g) for g in gamma), strict=True))
    if not all(math.isfinite(w) for w in weights.values()):
        raise ConfigError(f"γ must be finite, got {weights}")
    if not any(weights.values()):
        raise ConfigError("γ is all zeros")
    return weights


def _component(scores: Mapping[str, MetricValue], metric: str) -> tuple[float | None, str]:
    value = scores.get(metric)
    if value is None:
        return None, "not computed"
    if value.value is None:
        return None, value.reason or "unmeasured"
    if not math.isfinite(value.value):
        return None, f"not finite ({value.value})"
    return value.value, ""


def knowledge_quality(
    scores: Mapping[str, MetricValue], gamma: Gamma = DEFAULT_GAMMA, *, missing: Missing = "none"
) -> MetricValue:
    """``Q_know = γᵀ · [factuality, relevance, coherence_para, informativeness]`` (Eq. 9).

    Args:
        scores: Metric name -> value for one knowledge text (other metrics are ignored).
        gamma: Four coefficients in the order of :data:`INTRINSIC_METRICS`, or a mapping from
            those names (absent names weigh 0).
        missing: ``"none"`` or ``"renormalise"`` (see the module docstring).

    Returns:
        The quality as a :class:`MetricValue` (``model="conner-quality"``); ``details`` holds
        each component used and ``"renormalised"`` (the scale factor) when one was missing.
        ``value`` is None, with the reason naming the missing components, when not computable.

    Raises:
        ConfigError: A bad γ or ``missing`` option.

    Example:
        >>> from citegraph.conner import MetricValue
        >>> s = {m: MetricValue(value=0.5, model="x") for m in INTRINSIC_METRICS}
        >>> knowledge_quality(s, (1, 2, 0, 1)).value
        2.0
    """
    if missing not in ("none", "renormalise"):
        raise ConfigError(f"missing must be 'none' or 'renormalise', got {missing!r}")
    weights = _weights(gamma)
    details: dict[str, DetailValue] = {}
    total = used = weight_all = weight_used = 0.0
    gaps: list[str] = []
    for metric, weight in weights.items():
        if weight == 0.0:
            continue
        weight_all += abs(weight)
        value, why = _component(scores, metric)
        details[metric] = value
        if value is None:
            gaps.append(f"{metric}: {why}")
            continue
        total += weight * value
        weight_used += abs(weight)
        used += 1
    if gaps and (missing == "none" or used == 0):
        reason = "missing components: " + "; ".join(gaps)
        return MetricValue(value=None, reason=reason, model=QUALITY_MODEL, details=details)
    if gaps:
        scale = weight_all / weight_used
        details["renormalised"] = scale
        total *= scale
    return MetricValue(value=total, model=QUALITY_MODEL, details=details)


class KnowledgeChoice(BaseModel):
    """The knowledge kept for one item, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    knowledge: Knowledge = Field(description="The chosen candidate.")
    index: int = Field(description="Its position among the item's candidates.")
    quality: float | None = Field(description="Its Q_know; None when no candidate had one.")
    qualities: tuple[float | None, ...] = Field(description="Q_know of every candidate.")
    reason: str = Field(description="Why it was chosen (argmax, tie, or no quality at all).")


def _choose(candidates: Sequence[Knowledge], qualities: Sequence[MetricValue]) -> KnowledgeChoice:
    values = tuple(q.value for q in qualities)
    measured = [(v, i) for i, v in enumerate(values) if v is not None]
    if not measured:
        why = qualities[0].reason if qualities else None
        reason = f"no candidate has a quality ({why}); kept the first"
        return KnowledgeChoice(
            knowledge=candidates[0], index=0, quality=None, qualities=values, reason=reason
        )
    best = max(v for v, _ in measured)
    tied = [i for v, i in measured if v == best]
    index = tied[0]
    reason = f"argmax of {len(measured)} measured of {len(values)} candidates"
    if len(tied) > 1:
        reason += f"; tied with {tied[1:]}, kept the first"
    return KnowledgeChoice(
        knowledge=candidates[index], index=index, quality=best, qualities=values, reason=reason
    )


def _check_shapes(n_candidates: int, n_scores: int, where: str) -> None:
    if n_candidates != n_scores:
        raise ConfigError(f"{where}: {n_candidates} candidates but {n_scores} score sets")


def select_knowledge(
    candidates: Sequence[Sequence[Knowledge]],
    scores: Sequence[Sequence[Mapping[str, MetricValue]]],
    gamma: Gamma = DEFAULT_GAMMA,
    *,
    missing: Missing = "none",
) -> list[KnowledgeChoice]:
    """Per item, the candidate with the highest ``Q_know`` (§5 knowledge selection).

    Ties go to the earliest candidate; candidates without a quality are never preferred to one
    with a quality; when none has one, the first candidate is kept and the reason says so.

    Args:
        candidates: Per item, its ``r`` candidate knowledge texts.
        scores: Per item and candidate (same shape), the metric values.
        gamma, missing: As :func:`knowledge_quality`.

    Raises:
        ConfigError: Mismatched shapes, an item without candidates, or a bad γ / option.
    """
    _check_shapes(len(candidates), len(scores), "items")
    choices: list[KnowledgeChoice] = []
    for item, (cands, item_scores) in enumerate(zip(candidates, scores, strict=True)):
        _check_shapes(len(cands), len(item_scores), f"item {item}")
        if not cands:
            raise ConfigError(f"item {item} has no candidate knowledge")
        qualities = [knowledge_quality(s, gamma, missing=missing) for s in item_scores]
        choices.append(_choose(cands, qualities))
    return choices


def select_best_demonstrations(
    candidates: Sequence[T],
    scores: Sequence[Mapping[str, MetricValue]],
    gamma: Gamma = DEFAULT_GAMMA,
    n: int = 8,
    *,
    missing: Missing = "none",
) -> list[T]:
    """The ``n`` candidates with the highest ``Q_know`` (§5 demonstration selection).

    The kept candidates are returned in their given order (the random order they were sampled
    in), not sorted by quality; among equal qualities at the cut the earlier ones are kept.
    Candidates without a quality are never kept, so fewer than ``n`` come back when fewer than
    ``n`` have one.

    Args:
        candidates: The ``m`` candidate demonstrations (any objects, e.g. ``(sample, knowledge)``).
        scores: The metric values of each candidate's knowledge, aligned with ``candidates``.
        gamma, missing: As :func:`knowledge_quality`.
        n: How many to keep.

    Raises:
        ConfigError: Mismatched lengths, ``n < 1`` or a bad γ / option.
    """
    _check_shapes(len(candidates), len(scores), "demonstrations")
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    values = [knowledge_quality(s, gamma, missing=missing).value for s in scores]
    measured = [(v, i) for i, v in enumerate(values) if v is not None]
    ranked = sorted(measured, key=lambda pair: (-pair[0], pair[1]))
    kept = sorted(i for _, i in ranked[:n])
    return [candidates[i] for i in kept]
