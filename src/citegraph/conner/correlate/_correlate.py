"""Meta-evaluation (§6): correlation of CONNER's metrics with human ratings (0 / 1 / 2).

Human ratings come from a CSV (:func:`read_ratings`): a header ``id,<metric>,<metric>...`` and one
row per rated knowledge text, each cell 0, 1 or 2, blank when not rated. :func:`correlate` pairs
each metric's per-item values with the rating column of the same perspective and reports Somers'
D, Spearman's rho and/or Pearson's r, each with its two-sided p-value and the number of items.

**Direction of Somers' D.** The paper (§6, Table 9) measures "the Somers' D correlation between
the human rating 0, 1, 2 of the knowledge quality and corresponding metric scores" without
saying which variable is dependent. The default here is ``D(metric | rating)``: the rating is
the independent variable ``x`` and the metric the dependent ``y``, i.e. SciPy's
``somersd(rating, metric)`` in the paper's argument order. The reported values require it: with
a continuous metric (almost no ties) and three rating levels, ``D(rating | metric)`` is at most
``1 - Σ_k n_k(n_k - 1) / (n(n - 1))``, about 0.675 for 80 items per model rated evenly, yet
Table 9 reports 0.69 (DPR relevance) and 0.82-0.85 (validity). ``somers_given="metric"`` gives
``D(rating | metric)``, where pairs tied on the metric are left out instead.

**p-value of Somers' D** (not in :func:`citegraph.metrics.somers_d`): the asymptotic test of no
association used by SciPy's ``somersd`` (Agresti): with ``c_i`` = (observations concordant with
``i``) - (observations discordant with ``i``), ``S = Σ c_i² - (Σ c_i)² / n`` and
``Z = Σ c_i / (2 sqrt(S))``, ``p = erfc(|Z| / sqrt(2))``. It is the same for both directions.

**Counts.** ``n`` counts the items with both a rating and a measured metric value;
``n_unmeasured`` the rated items whose metric value is missing or ``None``; ``n_unrated`` the
items with a measured value but no rating in that column. Unmeasured items are left out, never
scored 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citegraph.conner._types import MetricValue, rating_column
from citegraph.errors import ConfigError, DataError
from citegraph.io import numbered_rows, read_csv_file
from citegraph.metrics import Agreement, pearson, somers_d, spearman

__all__ = [
    "RATING_VALUES",
    "Correlation",
    "correlate",
    "rating_column",
    "read_ratings",
]

#: The allowed human ratings (Table 17: 0 unacceptable, 1 acceptable, 2 excellent).
RATING_VALUES = (0, 1, 2)

Method = Literal["somers_d", "spearman", "pearson"]
Ratings = Mapping[tuple[str, str], int]


# ---------------------------------------------------------------- the ratings file
def read_ratings(path: str | Path) -> dict[tuple[str, str], int]:
    """``{(sample id, rating column): rating}`` from a CSV file of human ratings.

    The header has an ``id`` column plus one column per rated perspective (any names, e.g.
    ``factuality,relevance,coherence,informativeness,helpfulness,validity``). Cells are
    stripped; a blank cell is "not rated" and left out; a rating is 0, 1 or 2 (``"2.0"`` is
    read as 2). Blank lines are skipped; a quoted cell may span lines (a record's line is the
    line it starts on).

    Raises:
        DataNotFoundError: The file does not exist.
        DataError: No header, no ``id`` or no rating column, an empty or repeated column name,
            a row with more or fewer cells than the header, an empty or repeated id, or a rating
            other than 0, 1, 2; the message names the file, line and field.
    """
    return read_csv_file(path, _read_rows, what="ratings file")


def _header(row: list[str], path: Path, line: int) -> tuple[int, list[tuple[int, str]]]:
    names = [cell.strip() for cell in row]
    id_index: int | None = None
    columns: list[tuple[int, str]] = []
    for index, name in enumerate(names):
        if not name:
            raise DataError("empty column name in the header", path=path, line=line)
        if names.index(name) != index:
            raise DataError("column given twice", path=path, line=line, field=name)
        if name.casefold() == "id":
            id_index = index
        else:
            columns.append((index, name))
    if id_index is None:
        raise DataError("the header has no 'id' column", path=path, line=line, field="id")
    if not columns:
        raise DataError("the header has no rating column besides 'id'", path=path, line=line)
    return id_index, columns


def _rating(cell: str, path: Path, line: int, field: str) -> int | None:
    text = cell.strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if number not in RATING_VALUES:
        raise DataError(f"rating {text!r} is not 0, 1 or 2", path=path, line=line, field=field)
    return int(number)


def _read_rows(lines: Iterable[str], path: Path) -> dict[tuple[str, str], int]:
    header: tuple[int, list[tuple[int, str]]] | None = None
    width = 0
    seen: set[str] = set()
    out: dict[tuple[str, str], int] = {}
    for line, row in numbered_rows(lines):
        if header is None:
            header, width = _header(row, path, line), len(row)
            continue
        if len(row) != width:
            raise DataError(f"{len(row)} cells, the header has {width}", path=path, line=line)
        id_index, columns = header
        sample_id = row[id_index].strip()
        if not sample_id:
            raise DataError("empty id", path=path, line=line, field="id")
        if sample_id in seen:
            raise DataError(f"id {sample_id!r} given twice", path=path, line=line, field="id")
        seen.add(sample_id)
        for index, name in columns:
            value = _rating(row[index], path, line, name)
            if value is not None:
                out[(sample_id, name)] = value
    if header is None:
        raise DataError("empty file: expected a header 'id,<metric>,...'", path=path)
    return out


# ---------------------------------------------------------------- statistics
# ---------------------------------------------------------------- correlation table
class Correlation(BaseModel):
    """One metric's correlation with one human rating column."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str = Field(description="The metric's name.")
    rating: str = Field(description="The rating column it was paired with.")
    method: Method = Field(description="somers_d, spearman or pearson.")
    value: float | None = Field(description="The statistic; None when undefined (see reason).")
    p_value: float | None = Field(description="Two-sided p-value of no association.")
    n: int = Field(description="Items with both a rating and a measured metric value.")
    n_unmeasured: int = Field(description="Rated items whose metric value is missing or None.")
    n_unrated: int = Field(description="Items with a measured value but no rating.")
    direction: str | None = Field(
        default=None, description="For Somers' D: 'D(metric|rating)' or 'D(rating|metric)'."
    )
    reason: str | None = Field(default=None, description="Why value or p_value is None.")


def _statistic(
    method: Method, metric: Sequence[float], rating: Sequence[float], given: str
) -> tuple[Agreement, str | None]:
    if method == "spearman":
        return spearman(metric, rating), None
    if method == "pearson":
        return pearson(metric, rating), None
    if given == "rating":
        result = somers_d(rating, metric)
        direction = "D(metric|rating)"
    else:
        result = somers_d(metric, rating)
        direction = "D(rating|metric)"
    return result, direction


def correlate(
    metric_values: Mapping[str, Mapping[str, float | MetricValue | None]],
    ratings: Ratings,
    *,
    methods: Sequence[Method] = ("somers_d", "spearman"),
    columns: Mapping[str, str] | None = None,
    somers_given: Literal["rating", "metric"] = "rating",
) -> list[Correlation]:
    """Correlate each metric with its human rating column (one row per metric and method).

    Args:
        metric_values: Metric name -> sample id -> value (a number, a :class:`MetricValue` or
            None when unmeasured).
        ratings: ``(sample id, column) -> rating``, as :func:`read_ratings` returns.
        methods: Any of ``"somers_d"``, ``"spearman"``, ``"pearson"``.
        columns: Metric name -> rating column, for metrics not named like their column (e.g.
            a baseline ``{"nli": "factuality"}``). Otherwise the column of the same name is used,
            and ``coherence_sent`` / ``coherence_para`` fall back to a ``coherence`` column.
        somers_given: ``"rating"`` for ``D(metric | rating)`` (the default, see the module
            docstring) or ``"metric"`` for ``D(rating | metric)``.

    Returns:
        Rows in the order of ``metric_values`` then ``methods``; a statistic that cannot be
        computed (too few items, a constant variable, no ratings in the column) is None with
        the reason.

    Raises:
        ConfigError: An unknown method or ``somers_given``, or a non-finite metric value.
    """
    for method in methods:
        if method not in ("somers_d", "spearman", "pearson"):
            raise ConfigError(f"unknown correlation method {method!r}")
    if somers_given not in ("rating", "metric"):
        raise ConfigError(f"somers_given must be 'rating' or 'metric', got {somers_given!r}")
    available = {column for _, column in ratings}
    rows: list[Correlation] = []
    for metric, values in metric_values.items():
        column = rating_column(metric, available, columns)
        rated = {sid: r for (sid, col), r in ratings.items() if col == column}
        xs: list[float] = []
        ys: list[float] = []
        unmeasured = unrated = 0
        for sid, raw in values.items():
            value = raw.value if isinstance(raw, MetricValue) else raw
            if value is not None and not math.isfinite(value):
                raise ConfigError(f"metric {metric!r}, sample {sid!r}: value {value} not finite")
            if value is None:
                unmeasured += sid in rated
            elif sid not in rated:
                unrated += 1
            else:
                xs.append(float(value))
                ys.append(float(rated[sid]))
        unmeasured += sum(1 for sid in rated if sid not in values)
        for method in methods:
            if not rated:
                result, direction = None, None
                reason: str | None = f"no human ratings in column {column!r}"
            else:
                result, direction = _statistic(method, xs, ys, somers_given)
                reason = result.reason
            rows.append(
                Correlation(
                    metric=metric,
                    rating=column,
                    method=method,
                    value=None if result is None else result.value,
                    p_value=None if result is None else result.p_value,
                    n=len(xs),
                    n_unmeasured=unmeasured,
                    n_unrated=unrated,
                    direction=direction,
                    reason=reason,
                )
            )
    return rows
