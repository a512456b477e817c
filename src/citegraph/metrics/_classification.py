"""Single-label classification scores: confusion matrix, per-class P / R / F1, micro and macro F1.

Every sample has one gold label and one predicted label, or no prediction (``None``: the
evaluator's reply could not be read). The confusion matrix has one row per gold label and one
column per predicted label, plus a last column :data:`UNPARSEABLE` counting samples without a
prediction. For a label ``c``, with ``TP_c`` the diagonal cell:

- precision ``P_c = TP_c / (column sum of c)``: of the samples predicted ``c``, the share that
  are ``c``;
- recall ``R_c = TP_c / (row sum of c)``: of the samples that are ``c``, the share predicted ``c``;
- ``F1_c = 2 P_c R_c / (P_c + R_c)``; when ``P_c = R_c = 0`` it is 0 under the ``"gold"``
  macro policy and undefined (NumPy's 0/0) under ``"strict"``.

A ratio whose denominator is 0 (a label never predicted, or never gold) is ``None`` with a
reason, never NaN, and so is an F1 that depends on it.

What happens to a sample without a prediction is a policy (:data:`UnparseablePolicy`):

- ``"wrong"``: it stays in the denominators as a wrong prediction (it is in its label's row sum,
  so it lowers that label's recall, and in the total);
- ``"drop"``: it is left out before scoring and counted (what scikit-learn's
  ``confusion_matrix(labels=...)`` does with a prediction outside ``labels``).

**Micro-F1** pools every decision: with one label per sample, micro precision = micro recall =
``trace / total``, so micro-F1 is the accuracy over the samples scored (all of them under
``"wrong"``, the ones with a prediction under ``"drop"``).

**Macro-F1** is a mean of per-label F1s; :data:`MacroPolicy` says over which labels and what an
undefined F1 does:

- ``"gold"`` (the paper's reading): the mean over every *gold* label, i.e. every label with
  support > 0 among the samples scored. A gold label never predicted has an undefined precision
  and so no F1 of its own (``ClassScores.f1`` stays ``None``, printed ``-`` as in CAQA Table 5),
  but it enters the macro as F1 = 0: an evaluator that never finds a class scores 0 on it. A label
  with no gold sample is left out of the mean even when it was predicted (scikit-learn's
  ``f1_score(average="macro", zero_division=0)`` would average it in as 0, over the union of gold
  and predicted labels); its predictions are not lost, they are errors that lower the recall of
  the samples' gold labels and the micro-F1. The labels left out, and how many predictions the
  predicted-only ones received, are recorded in ``reason``.
- ``"strict"`` (the CAQA authors' NumPy arithmetic, ``evaluate_confusion_matrix`` in their
  ``inference.py``): every 0/0 is NaN and NaN propagates, here as ``None`` with a reason. A label
  never predicted (P = 0/0), never gold (R = 0/0), or predicted but never correctly (P = R = 0,
  so F1 = 0/0) has an undefined F1, and then the macro over all labels is undefined too
  (``np.mean`` of an array holding a NaN).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError, DataError
from citegraph.metrics._bootstrap import bootstrap_many
from citegraph.metrics._interval import BootstrapConfig, ConfidenceInterval
from citegraph.metrics._ratio import f1_score

#: Name of the confusion-matrix column of samples without a prediction.
UNPARSEABLE = "unparseable"

#: A sample without a prediction counts as wrong, or is dropped before scoring.
UnparseablePolicy = Literal["wrong", "drop"]

#: Macro-F1 over the gold labels with an undefined F1 as 0 (``"gold"``, the paper), or NumPy's
#: arithmetic where any 0/0 makes the macro undefined (``"strict"``, the authors' code).
MacroPolicy = Literal["gold", "strict"]


class ConfusionMatrix(BaseModel):
    """Counts of (gold, predicted) pairs; rows are gold labels, columns predicted labels plus
    :data:`UNPARSEABLE` (no prediction)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    labels: tuple[str, ...] = Field(description="Row labels (gold), also the first columns.")
    counts: tuple[tuple[int, ...], ...] = Field(
        description="counts[i][j]: gold labels[i], predicted columns[j]; the last column counts "
        "samples without a prediction."
    )

    @property
    def columns(self) -> tuple[str, ...]:
        """Column labels: the predicted labels, then :data:`UNPARSEABLE`."""
        return (*self.labels, UNPARSEABLE)

    def cell(self, gold: str, predicted: str | None) -> int:
        """Count of samples with this gold label and this prediction (``None``: no prediction)."""
        col = len(self.labels) if predicted is None else self.labels.index(predicted)
        return self.counts[self.labels.index(gold)][col]

    @property
    def n(self) -> int:
        """All samples, with or without a prediction."""
        return sum(sum(row) for row in self.counts)

    @property
    def n_unparseable(self) -> int:
        """Samples without a prediction (the last column)."""
        return sum(row[-1] for row in self.counts)

    @property
    def n_correct(self) -> int:
        """The diagonal: samples predicted as their gold label."""
        return sum(self.counts[i][i] for i in range(len(self.labels)))

    def row_sum(self, label: str, *, with_unparseable: bool = True) -> int:
        """Samples whose gold label is ``label``."""
        row = self.counts[self.labels.index(label)]
        return sum(row) if with_unparseable else sum(row[:-1])

    def column_sum(self, label: str) -> int:
        """Samples predicted as ``label``."""
        j = self.labels.index(label)
        return sum(row[j] for row in self.counts)


def confusion_matrix(
    gold: Sequence[str], predicted: Sequence[str | None], labels: Sequence[str]
) -> ConfusionMatrix:
    """Count (gold, predicted) pairs.

    Args:
        gold: One gold label per sample.
        predicted: One predicted label per sample, ``None`` when there is none.
        labels: The label list: rows and columns, in this order.

    Returns:
        The matrix (the :data:`UNPARSEABLE` column counts the ``None`` predictions).

    Raises:
        ConfigError: If ``gold`` and ``predicted`` differ in length, or ``labels`` is empty or
            has duplicates.
        DataError: If a gold or predicted label is not in ``labels``.
    """
    if len(gold) != len(predicted):
        raise ConfigError(
            f"one prediction per gold label needed, got {len(gold)} gold and "
            f"{len(predicted)} predicted"
        )
    if not labels or len(set(labels)) != len(labels):
        raise ConfigError(f"labels must be non-empty and distinct, got {list(labels)!r}")
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * (len(labels) + 1) for _ in labels]
    for k, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        if g not in index:
            raise DataError(f"gold label {g!r} is not one of {list(labels)!r}", line=k + 1)
        if p is not None and p not in index:
            raise DataError(f"predicted label {p!r} is not one of {list(labels)!r}", line=k + 1)
        counts[index[g]][len(labels) if p is None else index[p]] += 1
    return ConfusionMatrix(labels=tuple(labels), counts=tuple(tuple(row) for row in counts))


class ClassScores(BaseModel):
    """Precision, recall and F1 of one label; ``None`` (with ``reason``) when undefined."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    precision: float | None = Field(description="correct / predicted; None if never predicted.")
    recall: float | None = Field(description="correct / support; None if the support is 0.")
    f1: float | None = Field(
        description="2PR / (P + R); None if P or R is None, and under the 'strict' policy also "
        "when P = R = 0 (0/0)."
    )
    support: int = Field(description="Samples with this gold label (that were scored).")
    predicted: int = Field(description="Samples predicted as this label.")
    correct: int = Field(description="Samples with this gold label predicted as it.")
    reason: str | None = Field(default=None, description="Why a score is None.")
    f1_ci: ConfidenceInterval | None = Field(
        default=None, description="Bootstrap interval of F1, when requested."
    )


class ClassificationScores(BaseModel):
    """Per-label scores with micro- and macro-F1, and how they were computed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_class: tuple[ClassScores, ...]
    micro_f1: float | None = Field(
        description="correct / samples scored (= accuracy); None if nothing was scored."
    )
    macro_f1: float | None = Field(description="Mean per-label F1 (see macro_policy).")
    macro_over: tuple[str, ...] = Field(description="Labels whose F1 entered the macro-F1.")
    macro_as_zero: tuple[str, ...] = Field(
        default=(),
        description="Labels of macro_over whose F1 is undefined (never predicted) and entered "
        "the macro as 0 ('gold' policy).",
    )
    macro_left_out: tuple[str, ...] = Field(
        default=(),
        description="Labels not averaged: no gold sample ('gold' policy), predicted or not.",
    )
    n_scored: int = Field(description="Samples in the micro-F1 denominator.")
    n_correct: int = Field(description="Samples predicted as their gold label.")
    n_dropped: int = Field(description="Samples without a prediction left out ('drop').")
    unparseable: UnparseablePolicy
    macro_policy: MacroPolicy
    reason: str | None = Field(
        default=None,
        description="Why micro or macro is None, or which labels the macro counted as 0 or left "
        "out and why.",
    )

    def of(self, label: str) -> ClassScores:
        """The scores of ``label``.

        Raises:
            KeyError: unknown label.
        """
        for scores in self.per_class:
            if scores.label == label:
                return scores
        raise KeyError(label)


def _class_scores(matrix: ConfusionMatrix, label: str, drop: bool, strict: bool) -> ClassScores:
    i = matrix.labels.index(label)
    correct = matrix.counts[i][i]
    support = matrix.row_sum(label, with_unparseable=not drop)
    predicted = matrix.column_sum(label)
    precision = correct / predicted if predicted else None
    recall = correct / support if support else None
    reasons = []
    if precision is None:
        reasons.append("never predicted: precision undefined")
    if recall is None:
        reasons.append("no gold sample: recall undefined")
    f1 = f1_score(precision, recall)
    if strict and precision == 0 and recall == 0:
        f1 = None
        reasons.append("precision = recall = 0: F1 = 0/0 undefined (NumPy NaN)")
    return ClassScores(
        label=label,
        precision=precision,
        recall=recall,
        f1=f1,
        support=support,
        predicted=predicted,
        correct=correct,
        reason="; ".join(reasons) or None,
    )


class _Macro(NamedTuple):
    f1: float | None
    over: tuple[str, ...]
    as_zero: tuple[str, ...]
    left_out: tuple[str, ...]
    reasons: list[str]


def _gold_macro(per_class: Sequence[ClassScores]) -> _Macro:
    """Macro-F1 over the gold labels (support > 0), an undefined F1 counted as 0."""
    gold = [s for s in per_class if s.support > 0]
    if not gold:
        return _Macro(None, (), (), (), ["macro-F1: no gold sample scored"])
    as_zero = tuple(s.label for s in gold if s.f1 is None)
    left_out = [s for s in per_class if s.support == 0]
    reasons = []
    if as_zero:
        reasons.append(
            f"macro-F1 over the {len(gold)} gold labels counts {len(as_zero)} as F1 = 0 "
            f"({', '.join(as_zero)}: never predicted, precision undefined)"
        )
    if left_out:
        described = ", ".join(
            f"{s.label} (predicted {s.predicted} times)" if s.predicted else s.label
            for s in left_out
        )
        reasons.append(
            f"macro-F1 leaves out {len(left_out)} label(s) with no gold sample: {described}"
        )
    return _Macro(
        f1=sum(s.f1 or 0.0 for s in gold) / len(gold),
        over=tuple(s.label for s in gold),
        as_zero=as_zero,
        left_out=tuple(s.label for s in left_out),
        reasons=reasons,
    )


def _strict_macro(per_class: Sequence[ClassScores]) -> _Macro:
    """Mean of every label's F1, undefined if one is (NumPy's NaN through ``np.mean``)."""
    undefined = [s.label for s in per_class if s.f1 is None]
    if undefined:
        reason = (
            f"macro-F1: F1 undefined for {', '.join(undefined)} (NumPy's NaN propagates "
            "through the mean)"
        )
        return _Macro(None, (), (), (), [reason])
    f1 = sum(s.f1 or 0.0 for s in per_class) / len(per_class)
    return _Macro(f1, tuple(s.label for s in per_class), (), (), [])


def classification_scores(
    matrix: ConfusionMatrix,
    *,
    unparseable: UnparseablePolicy = "wrong",
    macro: MacroPolicy = "gold",
) -> ClassificationScores:
    """Per-label precision / recall / F1, micro-F1 and macro-F1 from a confusion matrix.

    Args:
        matrix: The counts.
        unparseable: Samples without a prediction count as wrong, or are dropped.
        macro: ``"gold"``: mean over the labels with a gold sample, an undefined F1 (never
            predicted) counted as 0, labels without a gold sample left out even if predicted;
            ``"strict"``: NumPy's arithmetic, undefined as soon as one label's F1 is 0/0 (see the
            module docstring).

    Returns:
        The scores (see the module docstring for the formulas).

    Raises:
        ConfigError: On an unknown policy.

    Example:
        >>> m = confusion_matrix(["a", "a", "b"], ["a", None, "b"], ["a", "b"])
        >>> classification_scores(m).micro_f1  # 2 correct of 3
        0.6666666666666666
    """
    if unparseable not in ("wrong", "drop"):
        raise ConfigError(f"unparseable must be 'wrong' or 'drop', got {unparseable!r}")
    if macro not in ("gold", "strict"):
        raise ConfigError(f"macro must be 'gold' or 'strict', got {macro!r}")
    drop = unparseable == "drop"
    strict = macro == "strict"
    per_class = tuple(_class_scores(matrix, label, drop, strict) for label in matrix.labels)
    n_dropped = matrix.n_unparseable if drop else 0
    n_scored = matrix.n - n_dropped
    n_correct = matrix.n_correct
    micro = n_correct / n_scored if n_scored else None
    averaged = _strict_macro(per_class) if strict else _gold_macro(per_class)
    reasons = ["micro-F1: no sample scored"] if micro is None else []
    reasons += averaged.reasons
    return ClassificationScores(
        per_class=per_class,
        micro_f1=micro,
        macro_f1=averaged.f1,
        macro_over=averaged.over,
        macro_as_zero=averaged.as_zero,
        macro_left_out=averaged.left_out,
        n_scored=n_scored,
        n_correct=n_correct,
        n_dropped=n_dropped,
        unparseable=unparseable,
        macro_policy=macro,
        reason="; ".join(reasons) or None,
    )


def bootstrap_classification(
    gold: Sequence[str],
    predicted: Sequence[str | None],
    labels: Sequence[str],
    config: BootstrapConfig | None = None,
    *,
    unparseable: UnparseablePolicy = "wrong",
    macro: MacroPolicy = "gold",
) -> dict[str, ConfidenceInterval | None]:
    """Percentile intervals of micro-F1, macro-F1 and each label's F1, resampling samples.

    Each resample draws ``n`` (gold, predicted) pairs with replacement and recomputes
    :func:`classification_scores` once for all statistics (see
    :func:`~citegraph.metrics.bootstrap_many`).

    Args:
        gold: Gold label per sample.
        predicted: Predicted label per sample, ``None`` when there is none.
        labels: The label list.
        config: Resamples, confidence and seed.
        unparseable: Policy for samples without a prediction.
        macro: Policy for undefined per-label F1s in the macro average.

    Returns:
        ``"micro"``, ``"macro"`` and ``"f1:<label>"`` -> interval (``None`` if the statistic was
        undefined on every resample).
    """
    matrix = confusion_matrix(gold, predicted, labels)  # validates the labels
    width = len(matrix.columns)
    index = {label: i for i, label in enumerate(matrix.labels)}
    codes = [
        index[g] * width + (width - 1 if p is None else index[p])
        for g, p in zip(gold, predicted, strict=True)
    ]
    cache: dict[str, object] = {}  # the last resample and its scores, shared by the statistics

    def scores_of(resample: Sequence[int]) -> ClassificationScores:
        if cache.get("resample") is not resample:
            counts = Counter(resample)
            rows = tuple(
                tuple(counts.get(r * width + c, 0) for c in range(width))
                for r in range(len(matrix.labels))
            )
            cache["resample"] = resample
            cache["scores"] = classification_scores(
                ConfusionMatrix(labels=matrix.labels, counts=rows),
                unparseable=unparseable,
                macro=macro,
            )
        scores = cache["scores"]
        assert isinstance(scores, ClassificationScores)
        return scores

    def f1_of(label: str) -> Callable[[Sequence[int]], float | None]:
        return lambda s: scores_of(s).of(label).f1

    statistics: dict[str, Callable[[Sequence[int]], float | None]] = {
        "micro": lambda s: scores_of(s).micro_f1,
        "macro": lambda s: scores_of(s).macro_f1,
    }
    statistics |= {f"f1:{label}": f1_of(label) for label in matrix.labels}
    return bootstrap_many(codes, statistics, config, unit="sample")
