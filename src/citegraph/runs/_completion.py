"""How much of what it asked for a run has done: the whole of its items, every item its own
``--limit`` (and ``--shard``) asked for, or less (partial).

A run asks for the items its own limit and shard select: ``run.json`` ``runtime`` records the
``limit``, the ``shard``, how many items they selected (``n_items``) and the run's share of the
task before the limit (``n_total``: every item, or the shard's share). A merged run records the
shards' ``limit`` and the items it asked for the same way (:func:`~citegraph.runs.merge_runs`).
``metrics.json`` ``progress`` keeps those beside the counts (``n_asked``, ``limit``, ``shard``),
so what a run came to is read from either file:

- *finished*: every item of its share done, none failed;
- *finished within its limit*: every item its limit asked for done, none failed, fewer than its
  share (``finished (limit 20 of 1085)``; a shard: ``finished (limit 20, shard 1/4: 5 of
  271)``): raise the limit, or drop it, to do more; the run resumes;
- *partial*: an item failed, or fewer items are done than it asked for (``partial 19/20``).

Whether the metrics are final for what ``samples.jsonl`` holds (*in progress* otherwise) is
:func:`~citegraph.runs.run_state`'s to say; :class:`Completion` says how much of the run the
records are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Completion:
    """A run's done and failed items against what its own limit and shard asked for.

    Attributes:
        n_done: Finished items (newest record of each id).
        n_failed: Items whose newest record failed.
        n_asked: Items the run's own ``limit`` and ``shard`` selected (``runtime.n_items``);
            ``None`` when unknown.
        n_total: Items of the run's share before any limit (the task's, or the shard's);
            ``None`` when unknown (runs written before ``run.json`` recorded it).
        limit: The run's ``--limit`` (``None``: none).
        shard: The run's ``--shard`` (``"i/N"``; ``None``: none).
    """

    n_done: int
    n_failed: int = 0
    n_asked: int | None = None
    n_total: int | None = None
    limit: int | None = None
    shard: str | None = None

    @classmethod
    def of_run(cls, runtime: Mapping[str, Any] | None, n_done: int, n_failed: int) -> Completion:
        """The completion of a run whose ``run.json`` ``runtime`` is ``runtime``, holding
        ``n_done`` finished and ``n_failed`` failed items.

        A run without a limit asked for its whole share, so either count stands for the other
        where only one is known (a merged run records ``n_total`` alone; a count edited out of
        shape is unknown). A ``run.json`` written before ``n_total`` was recorded has it from
        its migration (:mod:`citegraph.runs._schema`)."""
        runtime = runtime if isinstance(runtime, Mapping) else {}
        limit = _count(runtime.get("limit"))
        n_asked = _count(runtime.get("n_items"))
        n_total = _count(runtime.get("n_total"))
        if limit is None:
            n_total = n_asked if n_total is None else n_total
            n_asked = n_total if n_asked is None else n_asked
        shard = runtime.get("shard")
        return cls(
            n_done=n_done,
            n_failed=n_failed,
            n_asked=n_asked,
            n_total=n_total,
            limit=limit,
            shard=shard if isinstance(shard, str) and shard else None,
        )

    @classmethod
    def of_progress(cls, progress: Mapping[str, Any]) -> Completion:
        """The completion a ``metrics.json`` ``progress`` entry records (one written before it
        recorded ``n_asked`` is judged against ``n_total``)."""
        shard = progress.get("shard")
        return cls(
            n_done=_count(progress.get("n_done")) or 0,
            n_failed=_count(progress.get("n_failed")) or 0,
            n_asked=_count(progress.get("n_asked")),
            n_total=_count(progress.get("n_total")),
            limit=_count(progress.get("limit")),
            shard=shard if isinstance(shard, str) and shard else None,
        )

    @property
    def limited(self) -> bool:
        """Whether the run's limit asked for fewer items than its share holds."""
        return (
            self.limit is not None
            and self.n_asked is not None
            and self.n_total is not None
            and self.n_asked < self.n_total
        )

    @property
    def target(self) -> int | None:
        """The items the run asked for: those of its limit, else its share (``None``:
        unknown)."""
        if self.limited or self.n_total is None:
            return self.n_asked
        return self.n_total

    @property
    def partial(self) -> bool | None:
        """True when an item failed or fewer items are done than the run asked for, so the
        metrics cover less than it asked; ``None`` when that is unknown and nothing failed."""
        if self.n_failed:
            return True
        target = self.target
        return None if target is None else self.n_done < target

    @property
    def finished_in_limit(self) -> bool:
        """Whether every item the run's limit asked for is done (and none failed), fewer than
        its share: finished, within its limit."""
        return (
            self.limited
            and self.partial is False
            and self.n_total is not None
            and self.n_done < self.n_total
        )

    @property
    def counts(self) -> str:
        """``done/asked`` (the items of its limit, else of its share), or ``done`` alone when
        the run does not say how many it asked for."""
        target = self.target
        return f"{self.n_done}/{target}" if target else str(self.n_done)

    @property
    def scope(self) -> str | None:
        """What the run's limit asked for, when it asked for fewer items than its share:
        ``limit 20 of 1085``, or for a shard ``limit 20, shard 1/4: 5 of 271``."""
        if not self.limited:
            return None
        if self.shard is None:
            return f"limit {self.limit} of {self.n_total}"
        return f"limit {self.limit}, shard {self.shard}: {self.n_asked} of {self.n_total}"

    @property
    def finished_text(self) -> str | None:
        """``finished (limit 20 of 1085)`` when :attr:`finished_in_limit` (with the items done
        when more are, from an earlier, larger limit), else ``None``."""
        if not self.finished_in_limit:
            return None
        more = f", {self.n_done} items done" if self.n_done != self.n_asked else ""
        return f"finished ({self.scope}{more})"

    def progress(self, n_torn: int = 0) -> dict[str, Any]:
        """The ``progress`` entry of ``metrics.json`` (see ``progress_of`` in the engine)."""
        return {
            "n_done": self.n_done,
            "n_failed": self.n_failed,
            "n_asked": self.n_asked,
            "n_total": self.n_total,
            "limit": self.limit,
            "shard": self.shard,
            "partial": self.partial,
            "torn_lines_dropped": n_torn,
        }


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
