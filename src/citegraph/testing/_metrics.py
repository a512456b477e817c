"""Assertions on the metrics of a run, for a user's own tests and CI: the same gate as the
command line's ``--fail-under`` (:func:`citegraph.runs.check_gates`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citegraph.runs import GateCheck, check_gates, read_metrics, resolve_metric


def _metrics_of(run: str | Path | Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if isinstance(run, Mapping):
        return "the metrics", run
    return str(run), read_metrics(run)


def assert_metrics(
    run: str | Path | Mapping[str, Any],
    thresholds: Mapping[str, float] | None = None,
    /,
    *,
    allow_unmeasured: bool = False,
    **named: float,
) -> list[GateCheck]:
    """Assert that each metric of a run reaches its threshold.

    ``assert_metrics("run", precision=0.6, alignment=0.8)``; names with dots go in the mapping:
    ``assert_metrics("run", {"precision.macro": 0.5})``. Names are those of ``--fail-under``
    (keys of ``metrics.json``, dotted for nested ones, or the short names of the command's
    table). An unmeasured metric fails unless ``allow_unmeasured``.

    Args:
        run: A run directory (its ``metrics.json`` is read) or a ``metrics.json`` already loaded.
        thresholds: ``{metric: least value}``.
        allow_unmeasured: Let an unmeasured metric (``None``, NaN, every sample unmeasured) pass.
        **named: More thresholds, by keyword.

    Returns:
        The checks (all passed).

    Raises:
        AssertionError: a metric fell short or is unmeasured; the message names each, with its
            value and threshold.
        ConfigError: a metric name is unknown (the message lists the available ones).
        DataError: the run has no readable ``metrics.json``.
    """
    where, metrics = _metrics_of(run)
    wanted = {**(thresholds or {}), **named}
    checks = check_gates(metrics, wanted, allow_unmeasured=allow_unmeasured)
    short = [check.describe() for check in checks if not check.passed]
    if short:
        raise AssertionError(f"metrics of {where} fell short: " + "; ".join(short))
    return checks


class RunMetrics:
    """The metrics of one run directory, as the ``citegraph_run`` pytest fixture gives them.

    Attributes:
        path: The run directory.
        metrics: Its ``metrics.json``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.metrics = read_metrics(self.path)

    def __getitem__(self, name: str) -> float | None:
        """The value of a metric (``None`` when unmeasured), named as for ``--fail-under``."""
        return resolve_metric(self.metrics, name)[1]

    def assert_at_least(
        self,
        thresholds: Mapping[str, float] | None = None,
        /,
        *,
        allow_unmeasured: bool = False,
        **named: float,
    ) -> list[GateCheck]:
        """:func:`assert_metrics` on this run."""
        return assert_metrics(
            self.path, {**(thresholds or {}), **named}, allow_unmeasured=allow_unmeasured
        )

    def __repr__(self) -> str:
        return f"RunMetrics({str(self.path)!r})"
