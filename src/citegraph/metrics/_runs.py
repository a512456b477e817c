"""Mean and standard deviation of one number over repeated runs.

Papers report "mean of three runs, standard deviation in brackets" (KaLMA Table 3). F1 there is
the harmonic mean of the mean precision and mean recall, without a deviation: compute it with
:func:`~citegraph.metrics.f1_score` on the two means.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from citegraph.metrics._ratio import MicroMacro


class RunSummary(BaseModel):
    """A number over repeated runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float | None = Field(description="Mean over measured runs; None if none is measured.")
    std: float | None = Field(
        description="Sample standard deviation (n - 1); None with fewer than 2 measured runs."
    )
    n_runs: int = Field(description="Runs given.")
    n_measured: int = Field(description="Runs whose value was measured (not None).")
    values: tuple[float | None, ...] = Field(description="The per-run values, in order.")


def summarise_runs(values: Sequence[float | None]) -> RunSummary:
    """Mean and sample standard deviation of per-run values, skipping unmeasured runs.

    Args:
        values: One value per run, ``None`` for a run where the number was unmeasured.

    Returns:
        The summary. ``std`` is ``None`` (not 0) with a single measured run.

    Example:
        >>> summarise_runs([0.2, 0.4]).mean
        0.30000000000000004
    """
    measured = [v for v in values if v is not None]
    return RunSummary(
        mean=statistics.fmean(measured) if measured else None,
        std=statistics.stdev(measured) if len(measured) >= 2 else None,
        n_runs=len(values),
        n_measured=len(measured),
        values=tuple(values),
    )


class MicroMacroRuns(BaseModel):
    """Micro and macro of one metric over runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    micro: RunSummary
    macro: RunSummary
    mode: str | None = Field(default=None, description="Scoring mode of the runs' numbers.")


def summarise_micro_macro_runs(results: Sequence[MicroMacro]) -> MicroMacroRuns:
    """Mean and sample std over runs of a metric's micro and macro values.

    Args:
        results: The metric's result in each run.

    Returns:
        The two run summaries, with the runs' mode when they share one.
    """
    modes = {r.mode for r in results}
    return MicroMacroRuns(
        micro=summarise_runs([r.micro for r in results]),
        macro=summarise_runs([r.macro for r in results]),
        mode=modes.pop() if len(modes) == 1 else None,
    )
