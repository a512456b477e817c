"""What a ``conner select`` run does (:class:`ConnerSelectConfig`) and the settings it refuses."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citegraph.conner._types import Metric
from citegraph.conner.acquire import ConnerGenerateConfig
from citegraph.conner.score import ConnerScoreConfig
from citegraph.conner.select._selection import INTRINSIC_METRICS
from citegraph.errors import ConfigError

__all__ = ["ConnerSelectConfig", "check_select", "scored_metrics"]


class ConnerSelectConfig(BaseModel):
    """How candidates are sampled and weighed; the generation and scoring options are the
    :class:`ConnerGenerateConfig` and :class:`ConnerScoreConfig` given beside it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidates: int = Field(default=5, ge=1, description="Candidates sampled per item (r).")
    weights: tuple[float, float, float, float] = Field(
        default=(1.0, 1.0, 1.0, 1.0),
        description="γ for factuality, relevance, coherence_para, informativeness "
        "(comma-separated; the paper does not give its values).",
    )
    missing: Literal["none", "renormalise"] = Field(
        default="none",
        description="A candidate missing a weighted metric: no quality (none), or the "
        "measured terms rescaled (renormalise).",
    )

    @field_validator("weights", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return tuple(float(w) for w in value.split(","))
            except ValueError as exc:
                raise ConfigError(f"weights must be 4 numbers like 1,1,0,1, got {value!r}") from exc
        return value


def scored_metrics(config: ConnerSelectConfig) -> tuple[Metric, ...]:
    """The intrinsic metrics with a non-zero weight: the only ones candidates are scored on."""
    return tuple(m for m, w in zip(INTRINSIC_METRICS, config.weights, strict=True) if w != 0)


def check_select(
    config: ConnerSelectConfig, generate: ConnerGenerateConfig, score: ConnerScoreConfig
) -> None:
    """Refuse settings that cannot select.

    Raises:
        ConfigError: Greedy decoding with several candidates, all-zero γ, or a weighted
            paragraph coherence without a model (unless ``missing`` is ``renormalise``).
    """
    if config.candidates > 1 and generate.temperature == 0:
        raise ConfigError(
            "greedy decoding gives the same candidate every time: sample with --temperature > 0 "
            "(the paper: top-p 0.9)"
        )
    if not scored_metrics(config):
        raise ConfigError("all weights are 0")
    weight_para = config.weights[INTRINSIC_METRICS.index("coherence_para")]
    if weight_para and score.paragraph is None and config.missing == "none":
        raise ConfigError(
            "coherence_para has weight but no --paragraph model: every quality would be "
            "missing; give --paragraph, weight 0 (e.g. --weights 1,1,0,1) or --missing "
            "renormalise"
        )
