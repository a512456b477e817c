"""What a public entry point returns: a :class:`TaskResult`, built from :func:`run_task`'s
outcome with :meth:`TaskResult.of`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from citegraph.runs._engine import RunOutcome


class TaskResult(BaseModel):
    """What an entry point's run produced: its directory, its metrics and the counts every
    task has. Each entry point's result subclasses it with its own fields (items, samples,
    a report...) and says how they are read from the outcome in :meth:`own_fields`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path = Field(description="The run directory.")
    metrics: dict[str, Any] = Field(description="``metrics.json`` as written.")
    n_failed: int = Field(
        description="Items of this call whose record failed (retried on the next call)."
    )
    n_resumed: int = Field(description="Items of this call found done in the run directory.")

    @classmethod
    def of(cls, outcome: RunOutcome[Any]) -> Self:
        """The result of a finished engine run: the shared fields, then :meth:`own_fields`."""
        return cls(
            out=outcome.out,
            metrics=outcome.metrics,
            n_failed=outcome.n_failed,
            n_resumed=outcome.n_resumed,
            **cls.own_fields(outcome),
        )

    @classmethod
    def own_fields(cls, outcome: RunOutcome[Any]) -> dict[str, Any]:
        """A subclass's own fields, read from ``outcome``; none here."""
        return {}
