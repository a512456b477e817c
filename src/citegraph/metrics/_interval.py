"""Records for confidence intervals: the bootstrap settings and the interval they produce."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class BootstrapConfig(BaseModel):
    """Settings of a percentile bootstrap."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_resamples: int = Field(default=1000, ge=1, description="Number of bootstrap resamples.")
    confidence: float = Field(
        default=0.95, gt=0.0, lt=1.0, description="Coverage of the interval, e.g. 0.95."
    )
    seed: int = Field(default=0, description="Seed of the resampling RNG (stdlib random).")


class ConfidenceInterval(BaseModel):
    """A percentile bootstrap interval and how it was obtained."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    low: float = Field(description="Lower bound: the (1 - confidence) / 2 quantile.")
    high: float = Field(description="Upper bound: the (1 + confidence) / 2 quantile.")
    confidence: float = Field(description="Nominal coverage, e.g. 0.95.")
    n_resamples: int = Field(description="Resamples drawn.")
    n_valid: int = Field(
        description="Resamples on which the statistic was measured (others are left out)."
    )
    seed: int = Field(description="Seed of the resampling RNG.")
    unit: str = Field(description="What was resampled with replacement, e.g. 'answer'.")
    method: Literal["percentile"] = "percentile"
