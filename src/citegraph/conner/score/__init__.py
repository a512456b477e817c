"""``conner score``: the six perspectives over a task's knowledge as one resumable, shardable
run (:class:`ConnerScoreTask`), its configuration, models, summary and text table."""

from citegraph.conner._types import in_item_order
from citegraph.conner.score._config import ConnerScoreConfig, model_notes, stand_in_warning
from citegraph.conner.score._models import ScoreModels, load_score_models
from citegraph.conner.score._summary import read_score_values, render_score, score_summary
from citegraph.conner.score._task import (
    ConnerScoreResult,
    ConnerScoreTask,
    score_knowledge,
    score_knowledge_async,
)
from citegraph.conner.score._work import (
    NO_ANSWER_MODEL,
    PROMPT_TOO_LONG,
    score_batch,
    score_batch_async,
)

__all__ = [
    "NO_ANSWER_MODEL",
    "PROMPT_TOO_LONG",
    "ConnerScoreConfig",
    "ConnerScoreResult",
    "ConnerScoreTask",
    "ScoreModels",
    "in_item_order",
    "load_score_models",
    "model_notes",
    "read_score_values",
    "render_score",
    "score_batch",
    "score_batch_async",
    "score_knowledge",
    "score_knowledge_async",
    "score_summary",
    "stand_in_warning",
]
