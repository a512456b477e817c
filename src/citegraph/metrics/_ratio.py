"""Ratio aggregation: per-sample ``(numerator, denominator)`` pairs to micro and macro averages.

Most attribution metrics are a ratio per sample (correct citations / citations, gold facts hit /
gold facts, ...). Over a dataset there are two standard averages:

- **micro** = Σ numerator / Σ denominator: every unit (citation, fact) weighs the same;
- **macro** = mean over samples of numerator / denominator: every sample (answer) weighs the same.

A sample whose denominator is 0 has no ratio. It adds nothing to the micro sums; for the macro
average it is either left out (``zero_denominator="exclude"``, the usual choice) or counted as 0
(``"zero"``). A sample that could not be measured at all is passed as ``None``: it is left out of
both averages and counted in :attr:`MicroMacro.n_unmeasured`. A result that cannot be computed is
``None``, never NaN (see DESIGN.md, "unmeasured is not zero and not NaN").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError
from citegraph.metrics._interval import ConfidenceInterval

#: What a sample with denominator 0 does in the macro average: left out, or counted as 0.
ZeroDenominator = Literal["exclude", "zero"]

#: A per-sample ratio, or ``None`` for a sample that could not be measured.
RatioPair = tuple[float, float] | None


class MicroMacro(BaseModel):
    """A micro and a macro average over samples, with the counts behind them.

    ``None`` means unmeasured (no unit or no sample to average), never 0 and never NaN.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    micro: float | None = Field(description="Σ numerator / Σ denominator; None if Σ den == 0.")
    macro: float | None = Field(
        description="Mean of per-sample ratios over the samples kept; None if none is kept."
    )
    n: int = Field(description="Samples given, unmeasured ones included.")
    n_excluded: int = Field(
        default=0, description="Samples with denominator 0 left out of the macro average."
    )
    n_unmeasured: int = Field(
        default=0, description="Samples that could not be measured, left out of both averages."
    )
    numerator: float | None = Field(default=None, description="Σ numerator (None for F1).")
    denominator: float | None = Field(default=None, description="Σ denominator (None for F1).")
    zero_denominator: ZeroDenominator = Field(
        default="exclude", description="Macro policy for samples with denominator 0."
    )
    method: Literal["ratio", "f1"] = Field(
        default="ratio",
        description="'ratio': averages of ratios; 'f1': harmonic mean of a precision and a recall.",
    )
    mode: str | None = Field(
        default=None,
        description="Scoring mode the per-sample numbers came from (e.g. KaLMA 'paper' or "
        "'reference'); None for plain arithmetic.",
    )
    reason: str | None = Field(
        default=None, description="Why micro and/or macro are None, when there is a known reason."
    )
    micro_ci: ConfidenceInterval | None = Field(
        default=None, description="Bootstrap confidence interval of micro, when requested."
    )
    macro_ci: ConfidenceInterval | None = Field(
        default=None, description="Bootstrap confidence interval of macro, when requested."
    )

    @property
    def n_macro(self) -> int:
        """How many samples the macro average is over."""
        return self.n - self.n_unmeasured - self.n_excluded


def _check_policy(zero_denominator: str) -> None:
    if zero_denominator not in ("exclude", "zero"):
        raise ConfigError(f"zero_denominator must be 'exclude' or 'zero', got {zero_denominator!r}")


def micro_value(pairs: Iterable[RatioPair]) -> float | None:
    """Σ numerator / Σ denominator over measured samples; ``None`` if Σ denominator is 0.

    Args:
        pairs: Per-sample ``(numerator, denominator)``; ``None`` entries are skipped.

    Returns:
        The micro average, or ``None`` when there is no unit to average over.
    """
    num = 0.0
    den = 0.0
    for pair in pairs:
        if pair is not None:
            num += pair[0]
            den += pair[1]
    return num / den if den > 0 else None


def macro_value(
    pairs: Iterable[RatioPair], zero_denominator: ZeroDenominator = "exclude"
) -> float | None:
    """Mean of per-sample ratios; ``None`` if no sample is kept.

    Args:
        pairs: Per-sample ``(numerator, denominator)``; ``None`` entries are skipped.
        zero_denominator: ``"exclude"`` leaves samples with denominator 0 out, ``"zero"`` counts
            them as ratio 0.

    Returns:
        The macro average, or ``None`` when no sample is kept.
    """
    total = 0.0
    kept = 0
    count_zero = zero_denominator == "zero"
    for pair in pairs:
        if pair is None:
            continue
        if pair[1] > 0:
            total += pair[0] / pair[1]
            kept += 1
        elif count_zero:
            kept += 1
    return total / kept if kept else None


def join_reasons(reasons: Iterable[str | None]) -> str | None:
    """The distinct reasons given (``None`` and ``""`` skipped), sorted and joined with ``"; "``;
    ``None`` when there is none: a ``reason`` for :func:`micro_macro` from per-sample reasons."""
    return "; ".join(sorted({r for r in reasons if r})) or None


def micro_macro(
    pairs: Sequence[RatioPair],
    *,
    zero_denominator: ZeroDenominator = "exclude",
    mode: str | None = None,
    reason: str | None = None,
) -> MicroMacro:
    """Micro and macro averages of per-sample ratios.

    Args:
        pairs: One ``(numerator, denominator)`` per sample, or ``None`` for a sample that could
            not be measured. Numerators and denominators must be >= 0.
        zero_denominator: Macro policy for samples whose denominator is 0 (see module docstring).
        mode: Scoring mode to record with the numbers.
        reason: Why the numbers may be unmeasured, recorded when micro or macro is ``None``.

    Returns:
        The averages and their counts.

    Raises:
        ConfigError: On an unknown policy or a negative numerator or denominator.

    Example:
        >>> micro_macro([(1, 2), (3, 3), (0, 0)]).micro  # (1 + 3) / (2 + 3)
        0.8
    """
    _check_policy(zero_denominator)
    n_unmeasured = 0
    n_zero = 0
    num = 0.0
    den = 0.0
    for pair in pairs:
        if pair is None:
            n_unmeasured += 1
            continue
        if pair[0] < 0 or pair[1] < 0:
            raise ConfigError(f"ratio parts must be >= 0, got {pair!r}")
        num += pair[0]
        den += pair[1]
        if pair[1] == 0:
            n_zero += 1
    micro = num / den if den > 0 else None
    macro = macro_value(pairs, zero_denominator)
    if micro is None and reason is None:
        reason = "no sample with a non-zero denominator" if pairs else "no samples"
    return MicroMacro(
        micro=micro,
        macro=macro,
        n=len(pairs),
        n_excluded=n_zero if zero_denominator == "exclude" else 0,
        n_unmeasured=n_unmeasured,
        numerator=num,
        denominator=den,
        zero_denominator=zero_denominator,
        mode=mode,
        reason=reason if (micro is None or macro is None) else None,
    )


def f1_score(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean ``2PR / (P + R)``.

    Args:
        precision: A precision in [0, 1], or ``None`` if unmeasured.
        recall: A recall in [0, 1], or ``None`` if unmeasured.

    Returns:
        ``None`` if either input is ``None``; 0.0 when ``P + R == 0``; the F1 otherwise.
    """
    if precision is None or recall is None:
        return None
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


def f1_micro_macro(
    precision: MicroMacro, recall: MicroMacro, *, mode: str | None = None
) -> MicroMacro:
    """Micro F1 from micro P and R, macro F1 from macro P and R (not a mean of per-sample F1s).

    This is how the KaLMA paper reports F1 ("we calculate micro and macro F1-Score from
    corresponding precision and recall"; Table 3's F1 columns equal 2PR/(P+R) of the P and R
    columns).

    Args:
        precision: Aggregated precision.
        recall: Aggregated recall over the same samples.
        mode: Scoring mode to record; defaults to the precision's.

    Returns:
        A :class:`MicroMacro` with ``method="f1"``; ``n`` and ``n_unmeasured`` are the larger of
        the precision's and the recall's, there are no sums.
    """
    micro = f1_score(precision.micro, recall.micro)
    macro = f1_score(precision.macro, recall.macro)
    reason = None
    if micro is None or macro is None:
        reason = (
            "; ".join(
                r
                for r in (
                    f"precision: {precision.reason}" if precision.reason else None,
                    f"recall: {recall.reason}" if recall.reason else None,
                )
                if r
            )
            or "precision or recall unmeasured"
        )
    return MicroMacro(
        micro=micro,
        macro=macro,
        n=max(precision.n, recall.n),
        n_unmeasured=max(precision.n_unmeasured, recall.n_unmeasured),
        method="f1",
        mode=mode if mode is not None else precision.mode,
        reason=reason,
    )
