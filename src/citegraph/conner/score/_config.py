"""What a ``conner score`` run does (:class:`ConnerScoreConfig`), and notes on the models it
names: which of them are stand-ins for the paper's models (so every reported number says so).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from citegraph.conner._types import METRICS, Metric
from citegraph.conner.acquire import TASK_CORPUS, TaskChoice
from citegraph.conner.metrics import ConnerRules, Mode
from citegraph.errors import ConfigError
from citegraph.io import ServerURL
from citegraph.models import spec_identity, specs_identity

__all__ = [
    "ConnerScoreConfig",
    "metric_role",
    "model_notes",
    "stand_in_metrics",
    "stand_in_warning",
]


class ConnerScoreConfig(TaskChoice):
    """What a score run computes; written verbatim into ``run.json``."""

    knowledge: str = Field(
        description="The knowledge to score: 'gold' (the task's gold knowledge), a knowledge "
        "run directory (conner generate / retrieve / select) or a JSONL file of {id, text}."
    )
    metrics: tuple[Metric, ...] = Field(
        default=METRICS, description=f"Metrics to compute (comma-separated): {', '.join(METRICS)}."
    )
    mode: Mode = Field(
        default="paper",
        description="paper: the formulas as the paper writes them; reference: the authors' "
        "code (factuality outer max by label over <=32 pairs, PPL cap 200, informativeness "
        "drops the first knowledge token, helpfulness cuts gold knowledge to 500 words, "
        "raw paragraph coherence).",
    )
    lm: str = Field(
        default="local",
        description="Causal LM for coherence, informativeness and helpfulness: 'local' "
        "(SmolLM2-135M), 'hf/<id or path>', a model folder, or 'vllm/<model>' (a server's "
        "prompt log-probabilities).",
    )
    nli: str = Field(
        default="lexical",
        description="Three-way NLI for factuality and validity: 'hf/<id or path>' (an MNLI "
        "model), 'vllm/<model>' (served) or 'lexical' (a word-overlap stand-in, not an NLI "
        "model).",
    )
    reranker: str = Field(
        default="embedding/minilm",
        description="Relevance scorer: 'hf/<cross-encoder>' (Eq. 2), 'vllm/<model>' or "
        "'tei/<model>' (served) or 'embedding/<model>' (cosine similarity fallback, labelled "
        "as such).",
    )
    paragraph: str | None = Field(
        default=None,
        description="Discourse coherence model 'hf/<id or path>' (Eq. 4); none: unmeasured.",
    )
    evidence: Literal["gold", "corpus", "gold+corpus"] = Field(
        default="gold",
        description="Factuality evidence: the item's gold knowledge (its sentences and itself), "
        "passages retrieved from --corpus per sentence, or both.",
    )
    corpus: str | None = Field(
        default=None,
        description="Evidence corpus (JSONL {id, text} or TSV id<TAB>text), or 'task': the "
        "task's own gold knowledge texts (not Wikipedia; for offline runs).",
    )
    retriever: str = Field(default="minilm", description="Embedding model for evidence search.")
    evidence_k: int = Field(default=10, ge=1, description="Passages retrieved per sentence (l).")
    outer: Literal["min", "mean", "max"] | None = Field(
        default=None,
        description="Factuality across sentences: min, mean or max (default: min in paper "
        "mode, max by label in reference mode).",
    )
    ppl_cap: float | None = Field(
        default=None, gt=0, description="Sentence perplexity cap (default: none; 200 reference)."
    )
    u: int = Field(default=3, ge=1, description="Helpfulness: random negative knowledge texts.")
    answer_model: str | None = Field(
        default=None,
        description="Chat model that answers with the knowledge (Table 13 prompts) for "
        "validity, e.g. 'local' or 'openai/gpt-4o-mini'; none: validity unmeasured.",
    )
    answer_shots: int = Field(default=8, ge=0, description="Demonstrations per answer prompt.")
    base_url: ServerURL | None = Field(default=None, description="Server URL of the answer model.")
    lm_base_url: ServerURL | None = Field(
        default=None,
        description="Server URL of a 'vllm/<model>' or 'openai/<model>' --lm (default: the "
        "provider's, e.g. http://localhost:8000/v1).",
    )
    nli_base_url: ServerURL | None = Field(
        default=None, description="Server URL of a 'vllm/<model>' --nli (default: the provider's)."
    )
    reranker_base_url: ServerURL | None = Field(
        default=None,
        description="Server URL of a 'vllm/<model>' or 'tei/<model>' --reranker (default: the "
        "provider's).",
    )
    seed: int = Field(default=0, description="Seed of negatives and demonstrations.")

    @field_validator("metrics", mode="before")
    @classmethod
    def _split_metrics(cls, value: object) -> object:
        if isinstance(value, str):
            value = tuple(m.strip() for m in value.split(",") if m.strip())
        if isinstance(value, (tuple, list)):
            unknown = [m for m in value if m not in METRICS]
            if unknown:
                raise ConfigError(f"unknown metrics {unknown}; choose from {', '.join(METRICS)}")
            if not value:
                raise ConfigError("no metric chosen")
            return tuple(dict.fromkeys(value))
        return value

    def rules(self) -> ConnerRules:
        """The rules of :attr:`mode`, with :attr:`outer` and :attr:`ppl_cap` when given."""
        return ConnerRules.for_mode(self.mode).overriding(outer=self.outer, ppl_cap=self.ppl_cap)

    def needs_corpus(self) -> bool:
        """Whether factuality evidence is retrieved (so ``corpus`` is required)."""
        return "factuality" in self.metrics and self.evidence != "gold"

    def identity(self, exclude: set[str] | None = None) -> dict[str, Any]:
        """The config as ``run.json`` records it (part of the run id): the model specs in
        their first release's spelling (:func:`~citegraph.models.spec_identity`), so
        ``embedding/minilm`` and ``embedding:minilm`` are one run, the id runs made before the
        new spelling already have."""
        return specs_identity(self.model_dump(mode="json", exclude=exclude), SPEC_ROLES)


#: The config's model specs and their roles (``citegraph models``).
SPEC_ROLES = {"lm": "lm", "nli": "nli3", "reranker": "relevance", "paragraph": "coherence"}


#: Model role -> the metrics that model decides.
_ROLE_METRICS = {
    "nli": ("factuality", "validity"),
    "reranker": ("relevance",),
    "lm": ("coherence_sent", "informativeness", "helpfulness"),
}


def _stand_ins(config: ConnerScoreConfig) -> dict[str, list[str]]:
    """Model role -> the chosen metrics it decides, for the roles filled by a stand-in (the
    lexical NLI, the embedding fallback of the reranker, the local SmolLM2)."""
    stand_in = {
        "nli": config.nli.strip() == "lexical",
        "reranker": (spec_identity("relevance", config.reranker) or "").startswith("embedding:"),
        "lm": config.lm == "local",
    }
    return {
        role: used
        for role, metrics in _ROLE_METRICS.items()
        if stand_in[role] and (used := sorted(set(metrics) & set(config.metrics)))
    }


def metric_role(metric: str) -> str | None:
    """The model role (``nli``, ``reranker``, ``lm``) that decides ``metric``, if one does."""
    return next((role for role, metrics in _ROLE_METRICS.items() if metric in metrics), None)


def stand_in_metrics(config: ConnerScoreConfig) -> frozenset[str]:
    """The chosen metrics that a stand-in model decides (see :func:`stand_in_warning`)."""
    return frozenset(m for metrics in _stand_ins(config).values() for m in metrics)


def stand_in_warning(config: ConnerScoreConfig) -> str | None:
    """One line naming the metrics a stand-in model decided and the flag that passes the
    paper's kind of model; ``None`` when no stand-in decided a metric."""
    stand_ins = _stand_ins(config)
    parts = []
    if chosen := stand_ins.get("nli"):
        parts.append(
            f"{', '.join(chosen)} by the lexical word-overlap stand-in (pass --nli hf/<MNLI model>)"
        )
    if "reranker" in stand_ins:
        parts.append(
            f"relevance by {spec_identity('relevance', config.reranker, today=True)} cosine "
            "similarity (pass --reranker hf/<cross-encoder>)"
        )
    if chosen := stand_ins.get("lm"):
        parts.append(
            f"{', '.join(chosen)} by SmolLM2-135M (pass --lm hf/<causal LM>, the "
            "paper: GPT-Neo-2.7B, LLaMA-65B)"
        )
    if not parts:
        return None
    return f"{config.mode}-mode metrics decided by stand-ins: " + "; ".join(parts)


def model_notes(config: ConnerScoreConfig) -> dict[str, str]:
    """For each model role, a note when the model is not what the paper used (a stand-in)."""
    notes: dict[str, str] = {}
    uses = set(config.metrics)
    stand_ins = _stand_ins(config)
    if "nli" in stand_ins:
        notes["nli"] = (
            "lexical: a word-overlap stand-in, not a trained NLI model (none is available "
            "offline); factuality and validity are not comparable to the paper's numbers"
        )
    if "reranker" in stand_ins:
        notes["reranker"] = (
            f"{spec_identity('relevance', config.reranker, today=True)}: embedding cosine "
            "similarity, a fallback for the paper's "
            "query-knowledge cross-encoder"
        )
    if "lm" in stand_ins:
        notes["lm"] = (
            "local: SmolLM2-135M-Instruct, a small stand-in for the paper's GPT-2 / GPT-Neo "
            "(coherence, informativeness) and LLaMA (helpfulness)"
        )
    if "coherence_para" in uses and config.paragraph is None:
        notes["paragraph"] = "no discourse coherence model given: coherence_para is unmeasured"
    if "validity" in uses and config.answer_model is None:
        notes["answer_model"] = "no answer model given: validity is unmeasured"
    elif "validity" in uses and config.answer_model == "local":
        notes["answer_model"] = "local: SmolLM2-135M-Instruct answers (the paper: LLaMA-65B)"
    if config.corpus == TASK_CORPUS and config.needs_corpus():
        notes["corpus"] = (
            "task: the task's own gold knowledge texts as the evidence corpus (the paper "
            "retrieves from Wikipedia)"
        )
    if config.knowledge == "gold" and "factuality" in uses and config.evidence != "corpus":
        notes["evidence"] = (
            "the gold knowledge is scored against evidence that contains it: factuality is a "
            "sanity check of the NLI model here, not a measurement"
        )
    return notes
