"""Configuration of ``kalma run``: what identifies a run (written verbatim into ``run.json``).

Runtime settings that change how much is done or how fast (``limit``, ``shard``, concurrency)
are not here: they are recorded in ``run.json`` under ``runtime`` but do not change the run's
identity, so a run can be extended, resumed with more concurrency, or split over machines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from citegraph.errors import ConfigError
from citegraph.io import ServerURL
from citegraph.kalma.constrain import CitationsMode
from citegraph.kalma.generate import DEFAULT_PROMPT, PromptVersion
from citegraph.kalma.run._approx_gold import APPROX_GOLD
from citegraph.kalma.score import (
    KalmaScoreConfig,
    ScoringOptions,
    TextQualityOptions,
    replies_identity,
)
from citegraph.kg import KGOptions
from citegraph.models import GenerateConfig, specs_identity

TASK = "kalma.run"


class KalmaRunConfig(KGOptions, TextQualityOptions, ScoringOptions):
    """One KaLMA experiment: dataset, model, prompt, retrieval, ablations and scoring; with
    ``--retrieval ner``, how ``kg`` is opened (:class:`~citegraph.kg.KGOptions`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: str = Field(
        default="biokalma",
        description="The benchmark: 'biokalma', or a dataset directory written by kalma build.",
    )
    split: Literal["general", "specific"] = Field(
        default="specific", description="BioKaLMA split: 'general' or 'specific' questions."
    )
    questions: str | None = Field(
        default=None,
        description="Your own questions instead of a benchmark: a questions.jsonl path ({id, "
        "question}, optional entities and gold), answered over --kg (retrieval as "
        "--retrieval ner, or the question's entities).",
    )
    model: str = Field(
        default="local",
        description="Answering model as provider/model: openai/..., vllm/..., ollama/..., "
        "llamacpp/..., hf/<id or path>, local (embedded SmolLM2), mock.",
    )
    base_url: ServerURL | None = Field(
        default=None, description="Server URL for OpenAI-compatible providers."
    )
    temperature: float = Field(default=0.5, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(default=512, ge=1, description="Most tokens per answer.")
    seed: int = Field(default=0, description="Seed of sampling and of the ablations' choices.")
    prompt: PromptVersion = Field(
        default=DEFAULT_PROMPT,
        description="Prompt version: 'kalma-table13-v1' (paper) or 'kalma-code-v1' (authors').",
    )
    citations: CitationsMode = Field(
        default="free",
        description="'free' (the paper's experiments: the model writes its citations as it "
        "likes) or 'constrained' (a grammar made from the question's retrieved triples lets a "
        "citation name only them, or [NA]; the text stays free).",
    )
    retrieval: Literal["dataset", "ner"] = Field(
        default="dataset",
        description="KG context: 'dataset' (the graphs shipped with each question, as the "
        "authors' generation scripts read them) or 'ner' (citegraph's retrieval over --kg).",
    )
    kg: str = Field(
        default="biokalma",
        description="KG for --retrieval ner: biokalma, codex-s, wikidata, sparql+<url>, RDF paths.",
    )
    gold: str | None = Field(
        default=None,
        description="Gold minimum knowledge sets: a gold.jsonl path, or 'question-match' (a "
        "labelled approximation; BioKaLMA released no gold). Default: the dataset directory's "
        "gold.jsonl when there is one.",
    )
    remove_knowledge: int = Field(
        default=0,
        ge=0,
        description="Conscious incompetence (§4.4): remove this many gold facts from the KG "
        "given to the model; they become the absent-knowledge ground truth.",
    )
    remove_strategy: Literal["random", "first"] = Field(
        default="random",
        description="Which gold facts to remove: seeded random (paper) or the first k (code).",
    )
    retrieval_accuracy: int = Field(
        default=100,
        ge=0,
        le=100,
        description="Retrieval ablation (§5.3): keep this percent of question graphs, replace "
        "the rest with other questions' graphs.",
    )

    @model_validator(mode="after")
    def _check(self) -> KalmaRunConfig:
        if self.questions is not None:
            self._check_questions()
        elif self.remove_knowledge and self.gold is None and self.dataset == "biokalma":
            raise ConfigError(
                "--remove-knowledge needs gold minimum knowledge sets to remove facts from: "
                "give --gold FILE (gold.jsonl) or --gold question-match (an approximation)"
            )
        if self.reads_differently and not self.over_kg:
            raise ConfigError("--label-predicate and --prefix read --kg: give --retrieval ner")
        if self.retrieval_accuracy < 100 and self.over_kg:
            raise ConfigError(
                "--retrieval-accuracy replaces the dataset's question graphs (§5.3); it needs "
                "--retrieval dataset"
            )
        return self

    def _check_questions(self) -> None:
        if self.gold == APPROX_GOLD:
            raise ConfigError(
                f"--gold {APPROX_GOLD} approximates BioKaLMA's gold from its graphs; your own "
                "questions take their gold in the questions file ('gold') or --gold FILE"
            )

    @property
    def over_kg(self) -> bool:
        """Whether the questions' KG context comes from ``kg`` (``--retrieval ner``, or your own
        questions), not from the dataset's graphs."""
        return self.retrieval == "ner" or self.questions is not None

    def identity(self) -> dict[str, Any]:
        """The config as ``run.json`` records it: ``citations`` only when constrained, the
        label predicates and prefixes only when given, so runs made before the fields existed
        keep their run ids and resume; the KG's cache settings never."""
        exclude = {"citations"} if self.citations == "free" else set()
        if self.text_quality_human is None:
            exclude.add("text_quality_human")
        if self.questions is None:
            exclude.add("questions")
        else:  # your own questions: no benchmark, and always retrieved over kg
            exclude |= {"dataset", "split", "retrieval"}
        out = self.identity_dump(self.model_dump(mode="json", exclude=exclude))
        out = specs_identity(out, {"nli": "nli", "model": "chat", "text_quality": "chat"})
        return replies_identity(out, self.resolved_judge_replies(self.text_quality))

    def generate_config(self) -> GenerateConfig:
        """The sampling parameters of the answering model."""
        return GenerateConfig(
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )

    def score_config(self) -> KalmaScoreConfig:
        """The scoring options, as ``kalma score`` takes them."""
        shared = self.model_dump(include=set(ScoringOptions.model_fields))
        return KalmaScoreConfig(**shared, dataset=self.dataset, split=self.split, seed=self.seed)


def gold_source(config: KalmaRunConfig) -> str | None:
    """The gold a run uses: ``--gold``, else a dataset directory's ``gold.jsonl``, else none."""
    if config.gold is not None:
        return config.gold
    if config.dataset != "biokalma" and config.questions is None:
        candidate = Path(config.dataset) / "gold.jsonl"
        if candidate.is_file():
            return str(candidate)
    return None
