"""``conner correlate``: Somers' D (and Spearman / Pearson) between a score run's metrics and
human ratings (§6, Table 9), one block of rows per score run (the paper: per knowledge source).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from citegraph.conner.correlate._correlate import Correlation, Method, correlate, read_ratings
from citegraph.conner.score import read_score_values

__all__ = ["correlate_runs", "render_correlations"]


def correlate_runs(
    runs: Sequence[str | Path],
    ratings: str | Path,
    *,
    methods: Sequence[Method] = ("somers_d", "spearman"),
    somers_given: Literal["rating", "metric"] = "rating",
) -> dict[str, list[Correlation]]:
    """Correlate each score run's metrics with the ratings file.

    Args:
        runs: Score run directories (``conner score``).
        ratings: A CSV ``id,<metric>,...`` of 0/1/2 ratings (:func:`read_ratings`); ids are the
            items' ids, e.g. ``nq:17``.
        methods, somers_given: As :func:`~citegraph.conner.correlate`.

    Returns:
        Run path -> its rows (metric by method), with ``n``, unmeasured and unrated counts.

    Raises:
        DataNotFoundError, DataError: A missing or malformed run or ratings file.
        ConfigError: An unknown method.
    """
    rated = read_ratings(ratings)
    return {
        str(run): correlate(
            read_score_values(run), rated, methods=methods, somers_given=somers_given
        )
        for run in runs
    }


def _cell(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def render_correlations(results: dict[str, list[Correlation]]) -> str:
    """A plain-text table: run, metric, rating column, method, value, p, n, reasons."""
    header = f"{'metric':<16} {'rating':<16} {'method':<9} {'value':>7} {'p':>9} {'n':>5}  notes"
    lines: list[str] = []
    for run, rows in results.items():
        lines += [f"# {run}", header]
        for r in rows:
            notes = ", ".join(
                part
                for part in (
                    f"{r.n_unmeasured} unmeasured" if r.n_unmeasured else "",
                    f"{r.n_unrated} unrated" if r.n_unrated else "",
                    r.direction or "",
                    r.reason or "",
                )
                if part
            )
            lines.append(
                f"{r.metric:<16} {r.rating:<16} {r.method:<9} {_cell(r.value, '.4f'):>7} "
                f"{_cell(r.p_value, '.2e'):>9} {r.n:>5}  {notes}"
            )
    return "\n".join(lines)
