"""Fine-tuning an attribution evaluator on a CAQA train split (§5.2, Appendix C), and judging
with the result.

:func:`finetune` trains a sequence classifier or a causal LM (:class:`CaqaFinetuneConfig`) and saves
it with ``citegraph-judge.json``; :class:`ClassifierJudge` loads a fine-tuned classifier as an
evaluator (``caqa judge --evaluator cls/<folder>``). Fine-tuning is a training loop over the
whole split, not a per-item task, so it does not run on the engine (see :func:`finetune`).
"""

from citegraph.caqa.finetune._classifier_judge import ClassifierJudge, map_class_labels
from citegraph.caqa.finetune._config import CaqaFinetuneConfig
from citegraph.caqa.finetune._loop import EpochRecord
from citegraph.caqa.finetune._run import CaqaFinetuneResult, finetune

__all__ = [
    "CaqaFinetuneConfig",
    "CaqaFinetuneResult",
    "ClassifierJudge",
    "EpochRecord",
    "finetune",
    "map_class_labels",
]
