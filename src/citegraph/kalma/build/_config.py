"""What ``kalma build`` does: its configuration, written verbatim into ``run.json``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citegraph.errors import ConfigError
from citegraph.io import ServerURL
from citegraph.kalma.build._evolve import EvolveConfig
from citegraph.kalma.build._prompts import BUILD_PROMPTS
from citegraph.kalma.build._select import CoherenceNorm
from citegraph.kalma.constrain import CitationsMode
from citegraph.models import GenerateConfig, specs_identity


class KalmaBuildConfig(BaseModel):
    """What a build does; written verbatim into ``run.json`` (its hash identifies the build)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kg: str = Field(default="biokalma", description="The KG: biokalma, codex-s, RDF paths...")
    pairs: str | None = Field(
        default=None, description="CSV of person pairs: name1,relation,name2[,paragraph]."
    )
    sample_pairs: int | None = Field(
        default=None, ge=1, description="Sample this many connected person pairs from the KG."
    )
    model: str = Field(default="local", description="Generating model (provider/model).")
    base_url: ServerURL | None = Field(default=None, description="Server URL (OpenAI-compatible).")
    lm: str = Field(
        default="local",
        description="Causal LM for the coherence perplexity: local (SmolLM2), hf/<id or path>, "
        "vllm/<model> (a server's prompt log-probabilities).",
    )
    lm_base_url: ServerURL | None = Field(
        default=None,
        description="Server URL of a vllm/<model> or openai/<model> --lm (default: the "
        "provider's, e.g. http://localhost:8000/v1).",
    )
    rounds: int = Field(default=5, ge=1, description="Rounds (1 = annotation only).")
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="Rarity weight in selection.")
    coherence: CoherenceNorm = Field(
        default="softmax",
        description="Coherence term: softmax of 1/perplexity over the round (paper) or minmax "
        "(1/perplexity rescaled to [0, 1] in the round, so it can compete with rarity).",
    )
    temperature: float = Field(default=0.1, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(default=512, ge=1, description="Most tokens per model reply.")
    seed: int = Field(default=0, description="Seed of pair sampling, generation, human sheet.")
    complete_names: bool = Field(
        default=True, description="Drop pairs whose names are incomplete (Appendix A.1)."
    )
    prompts: str = Field(default=BUILD_PROMPTS, description="Prompt version.")
    citations: CitationsMode = Field(
        default="free",
        description="'free' (the paper's build) or 'constrained': the annotation and extension "
        "replies can cite only facts of the item's knowledge pool (or [NA]), through the "
        "citation grammar of kalma run --citations constrained.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> KalmaBuildConfig:
        if (self.pairs is None) == (self.sample_pairs is None):
            raise ConfigError("give exactly one of --pairs FILE.csv or --sample-pairs N")
        return self

    def evolve_config(self) -> EvolveConfig:
        """Rounds, alpha and sampling parameters of each item."""
        generate = GenerateConfig(
            temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed
        )
        return EvolveConfig(
            rounds=self.rounds,
            alpha=self.alpha,
            coherence=self.coherence,
            generate=generate,
            citations=self.citations,
        )

    def identity(self) -> dict[str, Any]:
        """The config as ``run.json`` records it: ``citations`` only when constrained, so builds
        made before the field existed keep their run ids and resume."""
        exclude = {"citations"} if self.citations == "free" else set()
        return specs_identity(self.model_dump(mode="json", exclude=exclude), {"lm": "lm"})
