"""Assertions on the metrics of a run, for a user's own tests and CI: the same gate as the
command line's ``--fail-under`` (:func:`citegraph.runs.check_gates`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, DataError
from citegraph.runs import (
    RUN_FILE,
    GateCheck,
    check_gates,
    read_metrics,
    read_run_info,
    resolve_metric,
    task_of_run,
)


def _metrics_of(run: str | Path | Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if isinstance(run, Mapping):
        return "the metrics", run
    return str(run), read_metrics(run)


def _run_task_name(run: str | Path) -> str | None:
    """The task the run directory ``run`` names in its ``run.json`` (checked as ``runs report``
    checks it), ``None`` when it has no ``run.json`` (a ``metrics.json`` alone) or names no
    registered task.

    Raises:
        DataError: its ``run.json`` is damaged or was edited.
    """
    if not (Path(run) / RUN_FILE).is_file():
        return None
    info = read_run_info(run)
    try:
        return task_of_run(info, where=Path(run)).name
    except DataError:
        raise
    except ConfigError:
        return None


def assert_metrics(
    run: str | Path | Mapping[str, Any],
    thresholds: Mapping[str, float | str] | None = None,
    /,
    *,
    allow_unmeasured: bool = False,
    task: str | None = None,
    **named: float | str,
) -> list[GateCheck]:
    """Assert that each metric of a run reaches its threshold.

    ``assert_metrics("run", precision=0.6, alignment=0.8)``; names with dots go in the mapping:
    ``assert_metrics("run", {"precision.macro": 0.5})``. Names are those of ``--fail-under``
    (keys of ``metrics.json``, dotted for nested ones, or the short names of the command's
    table). An unmeasured metric fails unless ``allow_unmeasured``.

    Args:
        run: A run directory (its ``metrics.json`` is read) or a ``metrics.json`` already loaded.
        thresholds: ``{metric: least value}``: a number (a fraction such as 0.6) or a text
            such as ``"60%"``, checked as ``--fail-under`` checks its own.
        allow_unmeasured: Let an unmeasured metric (``None``, NaN, every sample unmeasured) pass.
        task: The task that wrote the metrics (``kalma.run``...); read from the run
            directory's ``run.json`` when not given. Known, it refuses a fraction's threshold
            above 1 and a fraction's value outside 0 to 1.
        **named: More thresholds, by keyword.

    Returns:
        The checks (all passed).

    Raises:
        AssertionError: a metric fell short or is unmeasured; the message names each, with its
            value and threshold.
        ConfigError: a metric name is unknown (the message lists the available ones), or a
            threshold is not a non-negative number (a fraction's above 1).
        DataError: the run has no readable ``metrics.json``, its ``run.json`` is damaged, or a
            value cannot be a measurement (infinite; a fraction outside 0 to 1).
    """
    where, metrics = _metrics_of(run)
    if task is None and not isinstance(run, Mapping):
        task = _run_task_name(run)
    wanted = {**(thresholds or {}), **named}
    checks = check_gates(metrics, wanted, allow_unmeasured=allow_unmeasured, task=task)
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
        thresholds: Mapping[str, float | str] | None = None,
        /,
        *,
        allow_unmeasured: bool = False,
        **named: float | str,
    ) -> list[GateCheck]:
        """:func:`assert_metrics` on this run (the task its ``run.json`` names)."""
        return assert_metrics(
            self.path, {**(thresholds or {}), **named}, allow_unmeasured=allow_unmeasured
        )

    def __repr__(self) -> str:
        return f"RunMetrics({str(self.path)!r})"
