"""Meta-evaluation (§6): how well CONNER's metrics agree with human ratings (Somers' D,
Spearman, Pearson), for values in memory (:func:`correlate`) or finished score runs
(:func:`correlate_runs`, ``conner correlate``)."""

from citegraph.conner.correlate._correlate import (
    RATING_VALUES,
    Correlation,
    Method,
    correlate,
    rating_column,
    read_ratings,
)
from citegraph.conner.correlate._runs import correlate_runs, render_correlations

__all__ = [
    "RATING_VALUES",
    "Correlation",
    "Method",
    "correlate",
    "correlate_runs",
    "rating_column",
    "read_ratings",
    "render_correlations",
]
