"""The common part of what the KaLMA entry points (``kalma build``, ``run``, ``score``) return."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from citegraph.runs import RunOutcome


class RunDirResult(BaseModel):
    """A finished call of a KaLMA task: its run directory, the metrics written there and how
    many items were found done (resumed); each entry point's result adds its own counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path = Field(description="The run directory.")
    metrics: dict[str, Any] = Field(description="The run's metrics, as in its metrics.json.")
    n_resumed: int = Field(description="Items found already done in the run directory.")

    @classmethod
    def of(cls, outcome: RunOutcome[Any], **counts: int) -> Self:
        """The result of a finished engine run, with the entry point's own ``counts``."""
        return cls(out=outcome.out, metrics=outcome.metrics, n_resumed=outcome.n_resumed, **counts)
