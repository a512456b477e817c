"""The KaLMA experiments (paper §4-5): the ``kalma.run`` task (answer and score a benchmark
split), knowledge removal, the retrieval ablation, approximate gold, seed summaries."""

from citegraph.kalma.run._ablations import (
    Corruption,
    Removal,
    RemovalStrategy,
    ReplacedSlot,
    corrupt_retrieval,
    remove_knowledge,
)
from citegraph.kalma.run._approx_gold import APPROX_GOLD, APPROX_GOLD_NOTE, question_match_gold
from citegraph.kalma.run._config import KalmaRunConfig
from citegraph.kalma.run._report import build_run_metrics, summarise_seeds
from citegraph.kalma.run._task import (
    KalmaRunResult,
    KalmaRunTask,
    finalize_run,
    run_kalma,
    run_kalma_async,
    select_samples,
)

__all__ = [
    "APPROX_GOLD",
    "APPROX_GOLD_NOTE",
    "Corruption",
    "KalmaRunConfig",
    "KalmaRunResult",
    "KalmaRunTask",
    "Removal",
    "RemovalStrategy",
    "ReplacedSlot",
    "build_run_metrics",
    "corrupt_retrieval",
    "finalize_run",
    "question_match_gold",
    "remove_knowledge",
    "run_kalma",
    "run_kalma_async",
    "select_samples",
    "summarise_seeds",
]
