"""The :class:`NLIModel` protocol: does a premise entail a hypothesis?

KaLMA uses it twice: text-citation alignment (premise = the sentence without its brackets,
hypothesis = the cited fact) and [NA] precision / recall (premise = a sentence marked [NA],
hypothesis = an absent fact). Backends: a Hugging Face NLI cross-encoder, a TRUE-style T5
model, a deterministic lexical triple matcher, and a cascade of the matcher and a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class NLIPair(BaseModel):
    """One premise / hypothesis pair."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    premise: str
    hypothesis: str


class NLIVerdict(BaseModel):
    """The decision for one pair and who made it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entailed: bool
    score: float | None = Field(
        default=None, description="Entailment probability when the backend gives one."
    )
    source: str = Field(description="What decided: e.g. 'lexical' or 'hf:<model path>'.")


@runtime_checkable
class NLIModel(Protocol):
    """Batched entailment decisions."""

    @property
    def name(self) -> str:
        """A stable description of the backend and model, recorded with every number."""
        ...

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """One verdict per pair, in order. Backends batch internally."""
        ...
