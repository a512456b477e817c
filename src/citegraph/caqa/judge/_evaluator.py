"""The :class:`Evaluator` protocol: something that labels (question, answer, citation) samples.

Backends (``citegraph.caqa``): LLM judges behind any chat model (zero-shot or few-shot, Table 11
prompts), NLI models mapped as AutoIS (two-way), AttrScore-style three-way judges (Appendix C
mapping), and fine-tuned sequence classifiers (``caqa finetune``). Every backend returns one
:class:`Judgement` per sample, in order, and never raises for one bad sample: a reply it cannot
read is a judgement with ``label=None`` and the reply kept in ``raw``, so the report can count it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from citegraph.caqa._types import CaqaSample, Label

LabelSet = Literal["four", "binary", "attrscore"]
"""What an evaluator can predict: the four CAQA categories; supportive / unsupported (AutoIS,
AttributionBench); or AttrScore's attributable / extrapolatory / contradictory mapped to
supportive / irrelevant / contradictory."""


class Judgement(BaseModel):
    """One evaluator decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: Label | None = Field(description="The predicted label; None when unparseable.")
    raw: str = Field(default="", description="The model's reply or class name, verbatim.")
    error: str | None = Field(
        default=None, description="Why there is no label: 'unparseable', or the model error."
    )
    error_type: str | None = Field(
        default=None,
        description="The module-qualified class of the model error, when one was raised (what "
        "a failed record stores as its ``error_type``).",
    )
    scores: dict[str, float] | None = Field(
        default=None, description="Per-label probabilities when the backend has them."
    )
    generation: dict[str, Any] | None = Field(
        default=None,
        description="What the chat model reported of its reply, as a record keeps it "
        "(:func:`~citegraph.models.chat.generation_record`: model, finish_reason, usage, cached, "
        "attempts, latency_s, and batch_size for a local model's fresh reply); None for other "
        "backends and failed calls.",
    )


@runtime_checkable
class Evaluator(Protocol):
    """Batched attribution judgements."""

    @property
    def name(self) -> str:
        """A stable description of the backend, model and prompt, recorded with every number."""
        ...

    @property
    def label_set(self) -> LabelSet:
        """Which labels this evaluator can output."""
        ...

    async def judge(self, samples: Sequence[CaqaSample]) -> list[Judgement]:
        """One judgement per sample, in order."""
        ...

    async def aclose(self) -> None:
        """Release models and connections."""
        ...
