"""The three-way NLI probability vector (:class:`NLIProbs`) and how class labels map to it.

Shared by the local backends (:mod:`._nli3`) and the server backend (:mod:`._nli_server`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citegraph.errors import ConfigError
from citegraph.models.nli._hf import ENTAILMENT_LABELS

__all__ = [
    "CONTRADICTION_LABELS",
    "NEUTRAL_LABELS",
    "NLI3_LABELS",
    "NLIProbs",
    "find_three_way_indices",
    "normalise_label",
]

#: CONNER's class order: index 0, 1, 2 of :class:`NLIProbs` and of its ``label``.
NLI3_LABELS: tuple[str, str, str] = ("contradiction", "neutral", "entailment")
#: Label names (lower-cased, spaces and hyphens as underscores) that mean contradiction.
CONTRADICTION_LABELS = frozenset(
    {"contradiction", "contradict", "contradicts", "contradicted", "contradictory"}
)
#: Label names that mean neutral.
NEUTRAL_LABELS = frozenset({"neutral", "neutrality"})
_SUM_TOLERANCE = 1e-3


class NLIProbs(BaseModel):
    """One pair's probability vector, in CONNER's order (contradiction, neutral, entailment)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contradiction: float = Field(ge=0.0, le=1.0, description="P(the premise contradicts).")
    neutral: float = Field(ge=0.0, le=1.0, description="P(neither entails nor contradicts).")
    entailment: float = Field(ge=0.0, le=1.0, description="P(the premise entails).")

    @model_validator(mode="after")
    def _sums_to_one(self) -> NLIProbs:
        total = self.contradiction + self.neutral + self.entailment
        if abs(total - 1.0) > _SUM_TOLERANCE:
            raise ValueError(f"probabilities must sum to 1, got {total:.6f}")
        return self

    @property
    def vector(self) -> tuple[float, float, float]:
        """``(contradiction, neutral, entailment)``."""
        return (self.contradiction, self.neutral, self.entailment)

    @property
    def label(self) -> int:
        """The argmax: 0 contradiction, 1 neutral, 2 entailment (the first maximum on ties)."""
        vector = self.vector
        return vector.index(max(vector))

    @property
    def label_name(self) -> str:
        """``"contradiction"``, ``"neutral"`` or ``"entailment"``."""
        return NLI3_LABELS[self.label]


def normalise_label(label: object) -> str:
    """A label lower-cased, spaces and hyphens as underscores."""
    return str(label).strip().lower().replace(" ", "_").replace("-", "_")


def find_three_way_indices(id2label: Mapping[Any, str]) -> tuple[int, int, int]:
    """The class indices of contradiction, neutral and entailment, found by label name.

    Args:
        id2label: The model config's ``id2label`` (keys may be ints or digit strings).

    Returns:
        ``(contradiction index, neutral index, entailment index)``.

    Raises:
        ConfigError: Unless there are exactly three labels, one of each kind; the message lists
            the labels and says how to map them by hand (``class_indices``).
    """
    labels = {int(i): str(label) for i, label in id2label.items()}
    found: list[int] = []
    for names in (CONTRADICTION_LABELS, NEUTRAL_LABELS, ENTAILMENT_LABELS):
        matches = [i for i, label in labels.items() if normalise_label(label) in names]
        if len(matches) != 1 or len(labels) != 3:
            raise ConfigError(
                f"cannot map the model's labels {labels} to contradiction / neutral / entailment;"
                " a three-way NLI model is needed, or pass class_indices=(contradiction index,"
                " neutral index, entailment index)"
            )
        found.append(matches[0])
    return found[0], found[1], found[2]
