"""Percentile bootstrap confidence intervals over samples.

The resampling unit is the sample (for KaLMA: the answer): each resample draws ``n`` samples with
replacement from the ``n`` given, recomputes the statistic on it and the interval is read off the
sorted resampled values at the ``(1 - c) / 2`` and ``(1 + c) / 2`` quantiles (linear
interpolation, numpy's default). Resampling whole answers keeps the citations of one answer
together, so the interval reflects the variation between answers, which is what a new question set
would change. Resamples on which the statistic is unmeasured (``None``, e.g. no citation at all in
the resample) are left out and counted (``n_valid``). Several statistics can be computed on the
same resamples (:func:`bootstrap_many`), so that e.g. an F1 interval uses matching precision and
recall resamples. The RNG is stdlib :class:`random.Random` seeded from the config: results are
deterministic for a seed. :func:`micro_macro_ci` and :func:`micro_macro_f1` give the point
estimates with their intervals when a config is given, as the KaLMA reports do.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from citegraph.errors import ConfigError
from citegraph.metrics._interval import BootstrapConfig, ConfidenceInterval
from citegraph.metrics._ratio import (
    MicroMacro,
    RatioPair,
    ZeroDenominator,
    f1_micro_macro,
    f1_score,
    macro_value,
    micro_macro,
    micro_value,
)

T = TypeVar("T")
#: A metric's name (a ``str`` or a ``Literal`` of names).
M = TypeVar("M", bound=str)

#: A statistic of a list of samples; ``None`` when it cannot be measured on that list.
Statistic = Callable[[Sequence[T]], float | None]


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0 <= q <= 1) of sorted values, by linear interpolation.

    Args:
        sorted_values: Non-empty values in ascending order.
        q: The quantile level.

    Returns:
        ``v[lo] + (v[hi] - v[lo]) * frac`` where ``h = (n - 1) * q``, ``lo = floor(h)``.

    Raises:
        ConfigError: If ``sorted_values`` is empty or ``q`` is outside [0, 1].
    """
    if not sorted_values:
        raise ConfigError("percentile of an empty list")
    if not 0.0 <= q <= 1.0:
        raise ConfigError(f"quantile level must be in [0, 1], got {q}")
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (h - lo)


def bootstrap_many(
    samples: Sequence[T],
    statistics: Mapping[str, Statistic[T]],
    config: BootstrapConfig | None = None,
    *,
    unit: str = "sample",
) -> dict[str, ConfidenceInterval | None]:
    """Percentile intervals of several statistics computed on the same resamples.

    Args:
        samples: The resampling units (e.g. one record per answer).
        statistics: Name -> function of a list of samples.
        config: Resample count, confidence and seed; defaults to ``BootstrapConfig()``.
        unit: Name of the resampling unit, recorded in each interval.

    Returns:
        Name -> interval, or ``None`` when there are no samples or the statistic was unmeasured
        on every resample.
    """
    config = config or BootstrapConfig()
    if not samples:
        return dict.fromkeys(statistics)
    rng = random.Random(config.seed)
    indices = range(len(samples))
    values: dict[str, list[float]] = {name: [] for name in statistics}
    for _ in range(config.n_resamples):
        resample = [samples[i] for i in rng.choices(indices, k=len(samples))]
        for name, statistic in statistics.items():
            value = statistic(resample)
            if value is not None:
                values[name].append(value)
    alpha = 1.0 - config.confidence
    out: dict[str, ConfidenceInterval | None] = {}
    for name, vals in values.items():
        if not vals:
            out[name] = None
            continue
        vals.sort()
        out[name] = ConfidenceInterval(
            low=percentile(vals, alpha / 2),
            high=percentile(vals, 1 - alpha / 2),
            confidence=config.confidence,
            n_resamples=config.n_resamples,
            n_valid=len(vals),
            seed=config.seed,
            unit=unit,
        )
    return out


def bootstrap_ci(
    samples: Sequence[T],
    statistic: Statistic[T],
    config: BootstrapConfig | None = None,
    *,
    unit: str = "sample",
) -> ConfidenceInterval | None:
    """Percentile interval of one statistic (see :func:`bootstrap_many`)."""
    return bootstrap_many(samples, {"value": statistic}, config, unit=unit)["value"]


def bootstrap_micro_macro(
    pairs: Sequence[RatioPair],
    config: BootstrapConfig | None = None,
    *,
    zero_denominator: ZeroDenominator = "exclude",
    unit: str = "sample",
) -> tuple[ConfidenceInterval | None, ConfidenceInterval | None]:
    """Intervals of the micro and the macro average of per-sample ratios.

    Args:
        pairs: Per-sample ``(numerator, denominator)`` or ``None`` (unmeasured, resampled too).
        config: Bootstrap settings.
        zero_denominator: Macro policy, as in :func:`~citegraph.metrics.micro_macro`.
        unit: Name of the resampling unit.

    Returns:
        ``(micro interval, macro interval)``.
    """
    cis = bootstrap_many(
        pairs,
        {
            "micro": micro_value,
            "macro": lambda s: macro_value(s, zero_denominator),
        },
        config,
        unit=unit,
    )
    return cis["micro"], cis["macro"]


def with_bootstrap(
    result: MicroMacro,
    pairs: Sequence[RatioPair],
    config: BootstrapConfig | None = None,
    *,
    unit: str = "sample",
) -> MicroMacro:
    """A copy of ``result`` with micro and macro intervals from resampling ``pairs``.

    Args:
        result: The point estimates, from :func:`~citegraph.metrics.micro_macro` on ``pairs``.
        pairs: The same per-sample pairs.
        config: Bootstrap settings.
        unit: Name of the resampling unit.
    """
    micro_ci, macro_ci = bootstrap_micro_macro(
        pairs, config, zero_denominator=result.zero_denominator, unit=unit
    )
    return result.model_copy(update={"micro_ci": micro_ci, "macro_ci": macro_ci})


def bootstrap_f1(
    precision_pairs: Sequence[RatioPair],
    recall_pairs: Sequence[RatioPair],
    config: BootstrapConfig | None = None,
    *,
    precision_zero_denominator: ZeroDenominator = "exclude",
    recall_zero_denominator: ZeroDenominator = "exclude",
    unit: str = "sample",
) -> tuple[ConfidenceInterval | None, ConfidenceInterval | None]:
    """Intervals of micro and macro F1, resampling precision and recall pairs jointly.

    Sample ``i`` of ``precision_pairs`` and of ``recall_pairs`` must be the same sample.

    Returns:
        ``(micro F1 interval, macro F1 interval)``; F1 is computed from the resample's
        aggregated P and R, as :func:`~citegraph.metrics.f1_micro_macro` does.

    Raises:
        ConfigError: If the two sequences differ in length.
    """
    if len(precision_pairs) != len(recall_pairs):
        raise ConfigError(
            f"precision and recall need one pair per sample each, got {len(precision_pairs)} "
            f"and {len(recall_pairs)}"
        )
    joint = list(zip(precision_pairs, recall_pairs, strict=True))

    def micro_f1(s: Sequence[tuple[RatioPair, RatioPair]]) -> float | None:
        return f1_score(micro_value(p for p, _ in s), micro_value(r for _, r in s))

    def macro_f1(s: Sequence[tuple[RatioPair, RatioPair]]) -> float | None:
        return f1_score(
            macro_value((p for p, _ in s), precision_zero_denominator),
            macro_value((r for _, r in s), recall_zero_denominator),
        )

    cis = bootstrap_many(joint, {"micro": micro_f1, "macro": macro_f1}, config, unit=unit)
    return cis["micro"], cis["macro"]


def micro_macro_ci(
    pairs: Sequence[RatioPair],
    config: BootstrapConfig | None,
    *,
    zero_denominator: ZeroDenominator = "exclude",
    mode: str | None = None,
    reason: str | None = None,
    unit: str = "sample",
) -> MicroMacro:
    """:func:`~citegraph.metrics.micro_macro` of ``pairs``, with intervals when ``config`` is given.

    Args:
        pairs: Per-sample ``(numerator, denominator)`` or ``None`` (unmeasured).
        config: Bootstrap settings; ``None`` for point estimates only.
        zero_denominator, mode, reason: As in :func:`~citegraph.metrics.micro_macro`.
        unit: Name of the resampling unit.
    """
    result = micro_macro(pairs, zero_denominator=zero_denominator, mode=mode, reason=reason)
    return result if config is None else with_bootstrap(result, pairs, config, unit=unit)


def micro_macro_f1(
    pairs: Mapping[M, Sequence[RatioPair]],
    config: BootstrapConfig | None,
    *,
    zero_denominators: Mapping[M, ZeroDenominator] | None = None,
    reasons: Mapping[M, str | None] | None = None,
    mode: str | None = None,
    unit: str = "sample",
) -> dict[str, MicroMacro]:
    """Micro and macro averages of several ratio metrics, and the F1 of precision and recall.

    Args:
        pairs: Metric name -> per-sample pairs, ``"precision"`` and ``"recall"`` among them;
            sample ``i`` is the same sample in every list.
        config: Bootstrap settings; ``None`` for point estimates only.
        zero_denominators: Metric -> macro policy (default ``"exclude"``).
        reasons: Metric -> why it may be unmeasured (see :func:`~citegraph.metrics.micro_macro`).
        mode: Scoring mode to record.
        unit: Name of the resampling unit.

    Returns:
        Metric -> :func:`micro_macro_ci` of its pairs, and ``"f1"``:
        :func:`~citegraph.metrics.f1_micro_macro` of precision and recall, with intervals from
        resampling their pairs jointly (:func:`bootstrap_f1`) when ``config`` is given.
    """
    policies = zero_denominators or {}
    why = reasons or {}
    named: dict[str, Sequence[RatioPair]] = {}
    results: dict[str, MicroMacro] = {}
    for metric, metric_pairs in pairs.items():
        named[metric] = metric_pairs
        results[metric] = micro_macro_ci(
            metric_pairs,
            config,
            zero_denominator=policies.get(metric, "exclude"),
            mode=mode,
            reason=why.get(metric),
            unit=unit,
        )
    precision, recall = results["precision"], results["recall"]
    f1 = f1_micro_macro(precision, recall, mode=mode)
    if config is not None:
        micro_ci, macro_ci = bootstrap_f1(
            named["precision"],
            named["recall"],
            config,
            precision_zero_denominator=precision.zero_denominator,
            recall_zero_denominator=recall.zero_denominator,
            unit=unit,
        )
        f1 = f1.model_copy(update={"micro_ci": micro_ci, "macro_ci": macro_ci})
    return results | {"f1": f1}
