"""The metric names a task's ``metrics.json`` can hold, known before the task has run.

``--fail-under`` checks a gate's name and threshold when a command starts, before any work:
each task declares its short names in :attr:`Task.gate_metrics <citegraph.runs.Task>` (the
engine knows no paper's metrics), and :func:`citegraph.runs.parse_thresholds` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The figure a group's short name stands for (``precision`` is ``precision.micro``).
HEADLINE_KEYS = ("micro", "mean", "value")


@dataclass(frozen=True)
class TaskMetrics:
    """The metrics a task's ``metrics.json`` can hold, as ``--fail-under`` names them before the
    task has run.

    Attributes:
        fractions: Short names of figures in [0, 1], or of groups of them with a headline
            (``precision`` is ``precision.micro``; ``precision.macro`` the other): a threshold
            above 1 (100%) can never be reached.
        others: The other short names: counts (``n_answers``), figures that may exceed 1
            (``mean_words``), groups whose figures are named by a dotted path (``retrieval``:
            ``retrieval.f1``).
        inner: Fractions found only inside groups or lists, named by a dotted path (CAQA's
            per-label ``f1``: ``supportive.f1``).
    """

    fractions: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    inner: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every short name (a name without a dot) the task's gates may use."""
        return self.fractions + self.others

    def is_fraction(self, name: str) -> bool:
        """Whether the metric ``name`` (short or dotted) is a fraction: its last part, or the
        part before a headline (``precision.macro``, ``metrics.factuality.mean``), is one."""
        parts = name.split(".")
        if len(parts) > 1 and parts[-1] in (*HEADLINE_KEYS, "macro"):
            parts.pop()
        return parts[-1] in self.fractions or parts[-1] in self.inner
