"""The models a ``conner score`` run uses, loaded once from the config's specs.

Only the models the chosen metrics need are loaded. :meth:`ScoreModels.names` is what the run
records (and part of its identity): the name each model reports, so a changed model is a
different run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from citegraph.conner.acquire import DenseRetriever, cached_chat, load_corpus
from citegraph.conner.metrics import (
    CombinedEvidence,
    EvidenceSource,
    ParagraphScorer,
    RelevanceScorer,
    RetrievedEvidence,
    gold_evidence,
    paragraph_scorer,
    relevance_scorer,
)
from citegraph.conner.score._config import ConnerScoreConfig
from citegraph.datasets import ConnerSample
from citegraph.errors import ConfigError
from citegraph.models import (
    ChatModel,
    LMScorer,
    ModelOptions,
    NLI3Model,
    causal_lm_scorer,
    embedding_model,
    nli3_model,
)

__all__ = ["ScoreModels", "load_score_models"]

_LM_METRICS = {"coherence_sent", "informativeness", "helpfulness"}
_NLI_METRICS = {"factuality", "validity"}


@dataclass
class ScoreModels:
    """The scorers of one run; ``None`` where no chosen metric needs one.

    ``retrieved`` is the evidence retriever over the corpus (factuality with ``corpus``
    evidence); ``data_hashes`` the fingerprints of the inputs the models read (the corpus).
    """

    lm: LMScorer | None = None
    nli: NLI3Model | None = None
    relevance: RelevanceScorer | None = None
    paragraph: ParagraphScorer | None = None
    answer: ChatModel | None = None
    retrieved: RetrievedEvidence | None = None
    evidence_kind: str = "gold"
    data_hashes: dict[str, str] = field(default_factory=dict)

    def evidence(self, sample: ConnerSample) -> EvidenceSource:
        """The factuality evidence of one item (``evidence_kind``: gold, corpus or both)."""
        if self.evidence_kind == "gold":
            return gold_evidence(sample.gold_knowledge)
        if self.retrieved is None:
            raise ConfigError("evidence from a corpus needs a retriever (ScoreModels.retrieved)")
        if self.evidence_kind == "corpus":
            return self.retrieved
        return CombinedEvidence(gold_evidence(sample.gold_knowledge), self.retrieved)

    def names(self) -> dict[str, str]:
        """Role -> the name of the model loaded for it."""
        named: dict[str, Any] = {
            "lm": self.lm,
            "nli": self.nli,
            "reranker": self.relevance,
            "paragraph": self.paragraph,
            "answer_model": self.answer,
            "evidence": self.retrieved,
        }
        out = {role: str(model.name) for role, model in named.items() if model is not None}
        return out | {"evidence_kind": self.evidence_kind}

    async def aclose(self) -> None:
        """Release the models that hold resources."""
        for model in (self.lm, self.relevance, self.paragraph, self.answer):
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()


def load_score_models(
    config: ConnerScoreConfig,
    samples: Sequence[ConnerSample],
    options: ModelOptions | None = None,
) -> ScoreModels:
    """Load the models ``config`` names for its metrics.

    Args:
        config: The run's configuration.
        samples: The task's items (for ``corpus='task'``).
        options: Where every local model runs, and how the served ones are reached (their
            response cache among them); each model's base URL comes from ``config``.

    Raises:
        ConfigError: Retrieved evidence without ``corpus``, or an unknown spec.
        MissingDependency, ModelError: A model cannot be loaded.
    """
    options = options or ModelOptions()
    device, dtype = options.device, options.dtype
    metrics = set(config.metrics)
    models = ScoreModels(evidence_kind=config.evidence)
    if metrics & _LM_METRICS:
        models.lm = causal_lm_scorer(config.lm, options.serving(config.lm_base_url))
    if metrics & _NLI_METRICS:
        models.nli = nli3_model(config.nli, options.serving(config.nli_base_url))
    if "relevance" in metrics:
        served = options.serving(config.reranker_base_url)
        models.relevance = relevance_scorer(config.reranker, served)
    if "coherence_para" in metrics:
        models.paragraph = paragraph_scorer(config.paragraph, device=device, dtype=dtype)
    if "validity" in metrics and config.answer_model is not None:
        models.answer = cached_chat(config.answer_model, config.base_url, options)
    if config.needs_corpus():
        if config.corpus is None:
            raise ConfigError(
                f"evidence {config.evidence!r} retrieves passages: give --corpus (a JSONL or "
                "TSV passage file, or 'task' for the task's own gold knowledge texts)"
            )
        corpus = load_corpus(config.corpus, samples)
        retriever = DenseRetriever.from_corpus(embedding_model(config.retriever, options), corpus)
        models.retrieved = RetrievedEvidence(
            retriever,
            corpus.texts,
            k=config.evidence_k,
            name=f"{retriever.source}(k={config.evidence_k})",
        )
        models.data_hashes["corpus"] = retriever.sha256
    return models
