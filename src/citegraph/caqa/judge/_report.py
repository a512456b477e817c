"""The evaluator report (§5.3, §6.1-6.3): per-category F1, micro-F1, per-complexity F1, agreement.

Given each sample's gold label and an evaluator's prediction (``None`` when its reply could not
be read), :func:`evaluator_report` computes what Tables 5-7 and Figure 2 show:

- per label precision, recall and F1 (``None``, shown ``-``, when a denominator is 0: AttrScore
  never predicts *insufficient*, so that label has recall 0 and no precision, as in Table 5);
- micro-F1 (the tables' "Overall"; = accuracy, one label per sample) and macro-F1;
- micro-F1 within each complexity level (Table 6);
- the confusion matrix (rows gold, columns predicted and ``unparseable``);
- percentile bootstrap intervals, resampling samples;
- with human labels (§6.3): Cohen's kappa between the automatic (gold) and the human labels and
  the evaluator's micro-F1 against the human labels; :func:`pearson_across_evaluators` then
  correlates the evaluators' micro-F1 on automatic and on human labels (Figure 2).

Scoring modes (see :mod:`citegraph.metrics._classification` for the formulas):

- ``"paper"``: an unparseable prediction is a wrong prediction; macro-F1 is the mean over every
  gold label (support > 0), a label never predicted entering as F1 = 0 (its own F1 stays ``-``,
  as in Table 5); a label with no gold sample is left out, even if predicted. The labels averaged,
  counted as 0 and left out are in ``macro_over``, ``macro_as_zero``, ``macro_left_out`` and
  ``reason``.
- ``"reference"``: the authors' script, ``sklearn.metrics.confusion_matrix(labels=[...])``,
  silently drops predictions outside the label list ("None"), then NumPy divides: a class never
  predicted, never gold, or predicted but never correctly (P = R = 0) has a NaN F1, which makes
  the macro NaN. Here: dropped samples are counted, NaN is ``None`` with a reason.

Binary scoring: with ``label_set="binary"``, or when any gold label is ``unsupported`` (human
binary sets such as AttributionBench), gold labels and predictions collapse onto
supportive / unsupported with :func:`~citegraph.caqa.to_binary`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa._types import BINARY_LABELS, CATEGORIES, Complexity, Label, to_binary
from citegraph.caqa.judge._evaluator import LabelSet
from citegraph.caqa.judge._rules import CaqaRules, Mode
from citegraph.errors import ConfigError, DataError
from citegraph.metrics import (
    Agreement,
    BootstrapConfig,
    ClassificationScores,
    ClassScores,
    ConfidenceInterval,
    ConfusionMatrix,
    bootstrap_classification,
    classification_scores,
    cohen_kappa,
    confusion_matrix,
)
from citegraph.runs import FAILED

ReportMode = Mode

#: What an AttrScore judge can predict (attributable / contradictory / extrapolatory, Appendix C).
ATTRSCORE_LABELS: tuple[Label, ...] = ("supportive", "contradictory", "irrelevant")
#: Table 6's column order: S., C., I., U.
TABLE6_ORDER: tuple[Complexity, ...] = ("single", "concatenation", "intersection", "union")

_PREDICTABLE: dict[str, tuple[str, ...]] = {
    "four": CATEGORIES,
    "binary": BINARY_LABELS,
    "attrscore": ATTRSCORE_LABELS,
}


class ComplexityScore(BaseModel):
    """Micro-F1 (accuracy) on the samples of one complexity level (Table 6)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    complexity: Complexity
    micro_f1: float | None = Field(description="correct / scored; None if no sample scored.")
    n: int = Field(description="Samples of this level.")
    n_scored: int = Field(description="Samples in the denominator (reference mode drops some).")
    n_correct: int


class HumanAgreement(BaseModel):
    """Automatic (gold) labels against human labels on the samples that have one (§6.3)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(description="Samples with a human label.")
    labels: tuple[str, ...] = Field(description="Label space of the comparison.")
    kappa: Agreement = Field(description="Cohen's kappa, gold vs human labels (paper: 0.65).")
    micro_f1_human: float | None = Field(description="The evaluator's micro-F1 on human labels.")
    micro_f1_gold: float | None = Field(
        description="The evaluator's micro-F1 on the gold labels of the same samples."
    )
    n_scored: int = Field(description="Samples in those micro-F1 denominators.")


class EvaluatorReport(BaseModel):
    """One evaluator's scores on one labelled set, and how they were computed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="", description="The evaluator's name, when given.")
    label_set: LabelSet = Field(description="What the evaluator can predict.")
    mode: ReportMode
    labels: tuple[str, ...] = Field(description="The label list scored (rows of the matrix).")
    description: str = Field(description="How the numbers were computed, in words.")
    per_label: tuple[ClassScores, ...]
    micro_f1: float | None = Field(description="Overall micro-F1 (= accuracy over scored).")
    micro_f1_ci: ConfidenceInterval | None = None
    macro_f1: float | None
    macro_f1_ci: ConfidenceInterval | None = None
    macro_over: tuple[str, ...] = Field(description="Labels averaged in macro-F1.")
    macro_as_zero: tuple[str, ...] = Field(
        default=(), description="Labels averaged as F1 = 0 (gold, never predicted; paper mode)."
    )
    macro_left_out: tuple[str, ...] = Field(
        default=(), description="Labels not averaged: no gold sample (paper mode)."
    )
    reason: str | None = Field(default=None, description="Why a headline number is None.")
    n: int = Field(description="Samples given.")
    n_scored: int = Field(description="Samples in the micro-F1 denominator.")
    n_correct: int
    n_unparseable: int = Field(description="Samples without a prediction.")
    n_dropped: int = Field(description="Samples left out (reference mode: no prediction).")
    n_errors: dict[str, int] = Field(description="Error kind -> samples, from ``errors``.")
    per_complexity: tuple[ComplexityScore, ...] = Field(description="Table 6 order: S, C, I, U.")
    n_without_complexity: int = 0
    confusion: ConfusionMatrix
    human: HumanAgreement | None = None
    bootstrap: BootstrapConfig | None = None

    @classmethod
    def from_metrics(cls, metrics: dict[str, Any]) -> EvaluatorReport:
        """The report inside a judge run's ``metrics.json`` (which adds a few keys to it).

        Raises:
            ValidationError: ``metrics`` holds no report.
        """
        return cls.model_validate({k: v for k, v in metrics.items() if k in cls.model_fields})

    def label(self, label: str) -> ClassScores:
        """Scores of one label.

        Raises:
            KeyError: unknown label.
        """
        for scores in self.per_label:
            if scores.label == label:
                return scores
        raise KeyError(label)


def _check_length(name: str, values: Sequence[object] | None, n: int) -> None:
    if values is not None and len(values) != n:
        raise ConfigError(f"{name} needs one entry per sample: {len(values)} given for {n}")


def _score(
    gold: Sequence[str], predicted: Sequence[str | None], labels: Sequence[str], rules: CaqaRules
) -> tuple[ConfusionMatrix, ClassificationScores]:
    matrix = confusion_matrix(gold, predicted, labels)
    scores = classification_scores(matrix, unparseable=rules.unparseable, macro=rules.macro)
    return matrix, scores


def _human(
    gold: Sequence[str],
    predicted: Sequence[str | None],
    human: Sequence[Label | None],
    binary: bool,
    rules: CaqaRules,
) -> HumanAgreement:
    keep = [i for i, h in enumerate(human) if h is not None]
    binary = binary or any(human[i] == "unsupported" for i in keep)
    labels = BINARY_LABELS if binary else CATEGORIES

    def space(label: str | None) -> str | None:
        return to_binary(label) if binary and label is not None else label

    gold_h = [space(gold[i]) or "" for i in keep]
    human_h = [space(human[i]) or "" for i in keep]
    pred_h = [space(predicted[i]) for i in keep]
    _, on_human = _score(human_h, pred_h, labels, rules)
    _, on_gold = _score(gold_h, pred_h, labels, rules)
    return HumanAgreement(
        n=len(keep),
        labels=labels,
        kappa=cohen_kappa(gold_h, human_h),
        micro_f1_human=on_human.micro_f1,
        micro_f1_gold=on_gold.micro_f1,
        n_scored=on_human.n_scored,
    )


def evaluator_report(
    gold: Sequence[Label],
    predicted: Sequence[Label | None],
    *,
    complexities: Sequence[Complexity | None] | None = None,
    label_set: LabelSet = "four",
    mode: ReportMode | CaqaRules = "paper",
    bootstrap: BootstrapConfig | None = None,
    human: Sequence[Label | None] | None = None,
    errors: Sequence[str | None] | None = None,
    name: str = "",
) -> EvaluatorReport:
    """Score an evaluator's predictions against gold labels (Tables 5-7, §6.3).

    Args:
        gold: Gold label per sample (four-way, or binary for human binary sets).
        predicted: Predicted label per sample; ``None`` when the reply could not be read.
        complexities: Complexity level per sample (``None`` where unknown) for Table 6.
        label_set: What the evaluator can predict (``attrscore``: supportive / contradictory /
            irrelevant).
        mode: ``"paper"`` (unparseable = wrong) or ``"reference"`` (unparseable dropped, macro
            undefined when a class is never predicted), see the module docstring; or the
            :class:`~citegraph.caqa.CaqaRules` of one.
        bootstrap: When given, percentile intervals of micro-, macro- and per-label F1.
        human: Human label per sample (``None`` where there is none), for §6.3.
        errors: The judgement's error per sample (``None`` if none), counted by kind.
        name: The evaluator's name, recorded in the report.

    Returns:
        The report.

    Raises:
        ConfigError: On an unknown mode or label set, or sequences of different lengths.
        DataError: On a gold label outside the scored labels, or a prediction the label set
            cannot produce (the line is the 1-based sample position).
    """
    rules = CaqaRules.for_mode(mode)
    if label_set not in _PREDICTABLE:
        raise ConfigError(f"unknown label set {label_set!r}; choose from {', '.join(_PREDICTABLE)}")
    n = len(gold)
    _check_length("predicted", predicted, n)
    _check_length("complexities", complexities, n)
    _check_length("human", human, n)
    _check_length("errors", errors, n)
    allowed = _PREDICTABLE[label_set]
    for k, p in enumerate(predicted):
        if p is not None and p not in allowed:
            raise DataError(
                f"label set {label_set!r} cannot predict {p!r} (allowed: {', '.join(allowed)})",
                line=k + 1,
                field="predicted",
            )
    binary = label_set == "binary" or any(g == "unsupported" for g in gold)
    labels = BINARY_LABELS if binary else CATEGORIES
    gold_s = [to_binary(g) if binary else g for g in gold]
    pred_s = [to_binary(p) if binary and p is not None else p for p in predicted]
    matrix, scores = _score(gold_s, pred_s, labels, rules)

    cis: dict[str, ConfidenceInterval | None] = {}
    if bootstrap is not None:
        cis = bootstrap_classification(
            gold_s, pred_s, labels, bootstrap, unparseable=rules.unparseable, macro=rules.macro
        )
    per_label = tuple(
        s.model_copy(update={"f1_ci": cis.get(f"f1:{s.label}")}) for s in scores.per_class
    )

    per_complexity: list[ComplexityScore] = []
    n_without = n
    if complexities is not None:
        n_without = sum(1 for c in complexities if c is None)
        if n_without < n:
            for level in TABLE6_ORDER:
                idx = [i for i, c in enumerate(complexities) if c == level]
                _, sub = _score([gold_s[i] for i in idx], [pred_s[i] for i in idx], labels, rules)
                per_complexity.append(
                    ComplexityScore(
                        complexity=level,
                        micro_f1=sub.micro_f1,
                        n=len(idx),
                        n_scored=sub.n_scored,
                        n_correct=sub.n_correct,
                    )
                )

    n_errors = Counter(error_kind(e) for e in errors or () if e is not None)
    agreement = _human(gold, predicted, human, binary, rules) if human is not None else None
    return EvaluatorReport(
        name=name,
        label_set=label_set,
        mode=rules.mode,
        labels=labels,
        description=describe(
            rules=rules,
            label_set=label_set,
            binary=binary,
            n=n,
            n_unparseable=matrix.n_unparseable,
            n_scored=scores.n_scored,
            bootstrap=bootstrap,
            scores=scores,
        ),
        per_label=per_label,
        micro_f1=scores.micro_f1,
        micro_f1_ci=cis.get("micro"),
        macro_f1=scores.macro_f1,
        macro_f1_ci=cis.get("macro"),
        macro_over=scores.macro_over,
        macro_as_zero=scores.macro_as_zero,
        macro_left_out=scores.macro_left_out,
        reason=scores.reason,
        n=n,
        n_scored=scores.n_scored,
        n_correct=scores.n_correct,
        n_unparseable=matrix.n_unparseable,
        n_dropped=scores.n_dropped,
        n_errors=dict(sorted(n_errors.items())),
        per_complexity=tuple(per_complexity),
        n_without_complexity=n_without,
        confusion=matrix,
        human=agreement,
        bootstrap=bootstrap,
    )


def records_report(
    records: Sequence[Mapping[str, Any]],
    *,
    label_set: LabelSet,
    labels: Literal["auto", "binary"] = "auto",
    mode: ReportMode | CaqaRules = "paper",
    bootstrap: BootstrapConfig | None = None,
    name: str = "",
) -> EvaluatorReport:
    """The report of a judge run's records (failed ones left out): their ``gold``,
    ``predicted``, ``complexity``, ``error`` and ``human`` fields.

    Args:
        records: The run's records.
        label_set: What the evaluator can predict (``run.json``: ``label_set``).
        labels: ``"binary"`` collapses gold labels and predictions to supportive / unsupported
            before scoring; ``"auto"`` scores them as they are.
        mode: The scoring mode or its rules.
        bootstrap: When given, percentile intervals.
        name: The evaluator's name.

    Raises:
        ConfigError, DataError: as :func:`evaluator_report`.
    """
    judged = [r for r in records if r.get("status") != FAILED]
    binary = labels == "binary"

    def scored(label: Any) -> Any:
        return to_binary(label) if binary and label is not None else label

    with_human = any("human" in r for r in judged)
    return evaluator_report(
        [scored(r["gold"]) for r in judged],
        [scored(r["predicted"]) for r in judged],
        complexities=[r.get("complexity") for r in judged],
        label_set="binary" if binary else label_set,
        mode=mode,
        bootstrap=bootstrap,
        human=[scored(r.get("human")) for r in judged] if with_human else None,
        errors=[r.get("error") for r in judged],
        name=name,
    )


def error_kind(error: str) -> str:
    """The kind of an error string: the text before the first ``:`` (``"unparseable"``,
    ``"EndpointUnavailable"``...), at most 60 characters."""
    return error.split(":", 1)[0].strip()[:60] or "error"


def describe(
    *,
    rules: CaqaRules,
    label_set: LabelSet,
    binary: bool,
    n: int,
    n_unparseable: int,
    n_scored: int,
    bootstrap: BootstrapConfig | None,
    scores: ClassificationScores | None = None,
) -> str:
    """How a report's numbers were computed, in one paragraph (``scores``, when given, names the
    labels the macro-F1 averaged, counted as 0 and left out)."""
    if binary:
        parts = [
            "Binary labels supportive / unsupported (gold and predictions collapsed with to_binary)"
        ]
    else:
        parts = ["Four-way labels supportive / insufficient / contradictory / irrelevant"]
    if label_set == "attrscore" and not binary:
        parts.append(
            "the evaluator predicts supportive / contradictory / irrelevant only (AttrScore "
            "mapping), so insufficient has recall 0 and undefined precision and F1 (-)"
        )
    if rules.unparseable == "wrong":
        parts.append(
            f"paper scoring (§5.3): {n_unparseable} unparseable predictions count as wrong "
            f"(column 'unparseable'); micro-F1 = correct / all {n} samples (= accuracy); "
            "per-label F1 = 2PR / (P + R), undefined (-) when precision or recall has a zero "
            "denominator; macro-F1 = mean over the gold labels (support > 0), a gold label never "
            "predicted counted as F1 = 0, a label with no gold sample left out even if predicted"
            + _macro_labels(scores)
        )
    else:
        parts.append(
            f"reference scoring (the authors' sklearn confusion_matrix): {n_unparseable} "
            f"samples without a prediction dropped; micro-F1 = correct / the {n_scored} "
            "remaining; per-label F1 with NumPy's arithmetic: a label never predicted, never "
            "gold, or with precision = recall = 0 has an undefined F1 (their 0/0 = NaN), and "
            "then macro-F1 over all labels is undefined (NaN through np.mean)"
        )
    if bootstrap is not None:
        parts.append(
            f"{bootstrap.confidence:.0%} percentile bootstrap intervals from "
            f"{bootstrap.n_resamples} resamples of samples (seed {bootstrap.seed})"
        )
    return "; ".join(parts) + "."


def _macro_labels(scores: ClassificationScores | None) -> str:
    """`` (here: over ...; ... as 0; ... left out)`` for the paper-mode paragraph."""
    if scores is None or scores.macro_f1 is None:
        return ""
    parts = [f"over {len(scores.macro_over)} labels: {', '.join(scores.macro_over)}"]
    if scores.macro_as_zero:
        parts.append(
            f"{len(scores.macro_as_zero)} counted as 0 (never predicted): "
            + ", ".join(scores.macro_as_zero)
        )
    if scores.macro_left_out:
        parts.append(
            f"{len(scores.macro_left_out)} left out (no gold sample): "
            + ", ".join(
                f"{s.label}, predicted {s.predicted} times" if s.predicted else s.label
                for s in scores.per_class
                if s.label in scores.macro_left_out
            )
        )
    return " (here " + "; ".join(parts) + ")"
