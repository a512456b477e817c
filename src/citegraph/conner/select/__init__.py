"""CONNER-guided selection (§5): knowledge quality (Eq. 9), the choice among candidates or
demonstrations, and ``conner select`` (:class:`ConnerSelectTask`: sample, score, keep the best)."""

from citegraph.conner.select._config import ConnerSelectConfig, check_select, scored_metrics
from citegraph.conner.select._selection import (
    DEFAULT_GAMMA,
    INTRINSIC_METRICS,
    KnowledgeChoice,
    knowledge_quality,
    select_best_demonstrations,
    select_knowledge,
)
from citegraph.conner.select._task import Candidate, ConnerSelectTask, select_run, select_run_async

__all__ = [
    "DEFAULT_GAMMA",
    "INTRINSIC_METRICS",
    "Candidate",
    "ConnerSelectConfig",
    "ConnerSelectTask",
    "KnowledgeChoice",
    "check_select",
    "knowledge_quality",
    "scored_metrics",
    "select_best_demonstrations",
    "select_knowledge",
    "select_run",
    "select_run_async",
]
