"""The figures of ``conner score`` runs, as chart specifications (the viewer draws them).

- One histogram per metric: each run's measured values counted in equal bins over the range of
  all runs' values (``[0, 1]`` when every value lies in it); unmeasured items are left out.
- With human ratings, one scatter plot per metric: each rated item's rating (0 / 1 / 2) against
  its metric value, with Somers' ``D(metric | rating)`` per run in the note (the direction
  ``conner correlate`` uses by default). ``conner correlate`` joins ratings from a CSV file that
  no run directory holds; here a rating is read from a record's ``human_ratings`` field
  (``{column: 0 | 1 | 2}``, paired with a metric by
  :func:`~citegraph.conner.correlate.rating_column`), and without such fields there is no scatter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citegraph.conner._format import number
from citegraph.conner._types import METRICS, rating_column
from citegraph.metrics import somers_d
from citegraph.runs import FAILED, Chart, Record, RunData, Series

__all__ = ["HUMAN_RATINGS", "histogram", "run_labels", "score_charts"]

#: The record field that holds an item's human ratings: ``{rating column: 0 | 1 | 2}``.
HUMAN_RATINGS = "human_ratings"
BINS = 10


def run_labels(runs: Sequence[RunData]) -> list[str]:
    """Each run's directory name, or its whole path when two runs share a name."""
    names = [run.path.name for run in runs]
    return [str(run.path) if names.count(n) > 1 else n for run, n in zip(runs, names, strict=True)]


def _values(record: Record, metric: str) -> float | None:
    metrics = record.get("metrics")
    value = metrics.get(metric) if isinstance(metrics, Mapping) else None
    return number(value.get("value")) if isinstance(value, Mapping) else None


def _scored(run: RunData) -> list[Record]:
    return [r for r in run.records if r.get("status") != FAILED]


def histogram(values: Sequence[float], lo: float, hi: float, bins: int = BINS) -> list[float]:
    """Counts of ``values`` in ``bins`` equal bins of ``[lo, hi]`` (the last bin closed)."""
    counts = [0.0] * bins
    width = (hi - lo) / bins
    for v in values:
        i = bins - 1 if width <= 0 else min(bins - 1, max(0, int((v - lo) / width)))
        counts[i] += 1
    return counts


def _metrics_of(runs: Sequence[RunData]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        for record in run.records:
            metrics = record.get("metrics")
            seen.update(dict.fromkeys(metrics if isinstance(metrics, Mapping) else ()))
    return sorted(seen, key=lambda m: (METRICS.index(m) if m in METRICS else len(METRICS), m))  # type: ignore[arg-type]


def _histogram_chart(metric: str, runs: Sequence[RunData], labels: list[str]) -> Chart | None:
    per_run = [[v for r in _scored(run) if (v := _values(r, metric)) is not None] for run in runs]
    every = [v for values in per_run for v in values]
    if not every:
        return None
    lo, hi = (0.0, 1.0) if min(every) >= 0.0 and max(every) <= 1.0 else (min(every), max(every))
    bins = BINS if hi > lo else 1
    width = (hi - lo) / bins
    centres: list[float | str] = [round(lo + (i + 0.5) * width, 6) for i in range(bins)]
    series = [
        Series(name=label, x=centres, y=list(histogram(values, lo, hi, bins)))
        for label, values in zip(labels, per_run, strict=True)
    ]
    counts = ", ".join(f"{label}: n={len(v)}" for label, v in zip(labels, per_run, strict=True))
    raw = " Raw per-item scores (metrics.json min-max normalises the mean)."
    raw = raw if metric == "coherence_para" else ""
    return Chart(
        kind="hist",
        title=f"{metric}: distribution of values",
        x_label=metric,
        y_label="items",
        series=series,
        note=f"Measured values counted in {bins} equal bins of [{lo:.4g}, {hi:.4g}] (x: bin "
        f"centre); unmeasured and failed items left out ({counts}).{raw}",
    )


def _ratings(record: Record) -> dict[str, int]:
    raw = record.get(HUMAN_RATINGS)
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): v for k, v in raw.items() if v in (0, 1, 2) and not isinstance(v, bool)}


def _scatter_chart(metric: str, runs: Sequence[RunData], labels: list[str]) -> Chart | None:
    available = {c for run in runs for r in _scored(run) for c in _ratings(r)}
    column = rating_column(metric, available)
    if column not in available:
        return None
    series: list[Series] = []
    notes: list[str] = []
    for label, run in zip(labels, runs, strict=True):
        pairs = [
            (float(rating), value)
            for r in _scored(run)
            if (rating := _ratings(r).get(column)) is not None
            and (value := _values(r, metric)) is not None
        ]
        if not pairs:
            continue
        xs: list[float | str] = [x for x, _ in pairs]
        series.append(Series(name=label, x=xs, y=[y for _, y in pairs]))
        d = somers_d([x for x, _ in pairs], [y for _, y in pairs])
        shown = "undefined" if d.value is None else f"{d.value:.3f}"
        notes.append(f"{label}: D = {shown} (n={len(pairs)})")
    if not series:
        return None
    return Chart(
        kind="scatter",
        title=f"{metric} vs human rating ({column})",
        x_label=f"human rating of {column} (0 / 1 / 2)",
        y_label=metric,
        series=series,
        note=f"One point per item with a human rating (record field {HUMAN_RATINGS!r}, column "
        f"{column!r}) and a measured value. Somers' D(metric | rating): " + "; ".join(notes),
    )


def score_charts(runs: Sequence[RunData]) -> list[Chart]:
    """Per metric: the histogram of its values over ``runs``, then the scatter against human
    ratings when records carry them."""
    labels = run_labels(runs)
    charts: list[Chart] = []
    for metric in _metrics_of(runs):
        for chart in (_histogram_chart(metric, runs, labels), _scatter_chart(metric, runs, labels)):
            if chart is not None:
                charts.append(chart)
    return charts
