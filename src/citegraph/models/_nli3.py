"""Three-way NLI: P(contradiction), P(neutral), P(entailment) for premise / hypothesis pairs.

CONNER's factuality (Eq. 1) and validity (Eqs. 7-8) read the whole 3-vector of an NLI model, not
just an entailment decision: the three parts become factual-inconsistent, non-verified and
factual-consistent. :class:`NLIProbs` holds one such vector, in CONNER's order (the order of
fairseq's ``roberta.large.mnli``), with :attr:`NLIProbs.label` the argmax as CONNER's code reads
it: 0 = contradiction, 1 = neutral, 2 = entailment.

Backends (both satisfy :class:`NLI3Model`):

- :class:`HFNLI3`: any 3-class ``AutoModelForSequenceClassification`` NLI model. The class order
  is read from ``id2label`` by name (any order, any case); ``class_indices`` overrides it for
  models with generic labels. It also satisfies :class:`~citegraph.models.NLIModel` (entailed iff
  the argmax is entailment), so one loaded model serves both protocols.
- :class:`LexicalNLI3`: :class:`~citegraph.models.LexicalNLI` as probabilities ``(0, 1, 0)``
  (not stated: neutral) or ``(0, 0, 1)`` (stated). Its name is ``"lexical"``, so every number it
  produces says it came from a string matcher, not an NLI model; it never says "contradiction".

:func:`nli3_model` builds either from a spec string: ``"lexical"`` or ``"hf:<path or hub id>"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, Unpack, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from citegraph.errors import ConfigError
from citegraph.models._backend_options import NLI3Options, build_checked
from citegraph.models._hf_batching import batch_plan_for
from citegraph.models._hf_common import (
    HFBackend,
    check_batching,
    classifier_logits,
    effective_max_length,
    in_worker_thread,
)
from citegraph.models._nli_hf import ENTAILMENT_LABELS
from citegraph.models._nli_lexical import LexicalNLI
from citegraph.models._nli_protocol import NLIPair, NLIVerdict

__all__ = [
    "CONTRADICTION_LABELS",
    "HFNLI3",
    "NEUTRAL_LABELS",
    "NLI3_LABELS",
    "LexicalNLI3",
    "NLI3Model",
    "NLIProbs",
    "find_three_way_indices",
    "nli3_model",
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


@runtime_checkable
class NLI3Model(Protocol):
    """Batched three-way NLI probabilities."""

    @property
    def name(self) -> str:
        """A stable description of the backend and model, recorded with every number."""
        ...

    async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        """One probability vector per pair, in order. Backends batch internally."""
        ...


def _normalise(label: object) -> str:
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
        matches = [i for i, label in labels.items() if _normalise(label) in names]
        if len(matches) != 1 or len(labels) != 3:
            raise ConfigError(
                f"cannot map the model's labels {labels} to contradiction / neutral / entailment;"
                " a three-way NLI model is needed, or pass class_indices=(contradiction index,"
                " neutral index, entailment index)"
            )
        found.append(matches[0])
    return found[0], found[1], found[2]


class HFNLI3(HFBackend):
    """A three-class NLI cross-encoder loaded with ``AutoModelForSequenceClassification``.

    The premise and hypothesis are encoded as a text pair (the longer part truncated first);
    the probabilities are the softmax of the logits (in float64), reordered to CONNER's order.

    Args:
        path: Local model directory or Hugging Face hub id.
        batch_size: Most pairs per forward pass; ``None``: the device's plan (16 on a CPU, up
            to 512 on an accelerator).
        device: torch device, ``"cpu"`` by default.
        max_length: Token limit of a pair; lowered to the model's position limit when smaller.
        class_indices: ``(contradiction, neutral, entailment)`` class indices of the model;
            read from ``id2label`` when ``None``.
        max_batch_tokens: Most padded positions per forward pass; ``None``: the device's plan.

    Raises:
        MissingDependency: If torch or transformers is not installed (the ``nli`` extra).
        ModelError: If the model cannot be loaded.
        ConfigError: On invalid options, or labels that cannot be mapped (the message lists them).
    """

    scheme = "hf"
    auto_class = "AutoModelForSequenceClassification"

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int | None = None,
        device: str = "cpu",
        max_length: int = 512,
        class_indices: tuple[int, int, int] | None = None,
        max_batch_tokens: int | None = None,
    ) -> None:
        check_batching(batch_size, max_length)
        plan = batch_plan_for(device, batch_size=batch_size, max_batch_tokens=max_batch_tokens)
        if class_indices is not None and sorted(class_indices) != [0, 1, 2]:
            raise ConfigError(f"class_indices must be a permutation of 0, 1, 2; {class_indices}")
        super().__init__(path, plan=plan, device=device)
        config = self._model.config
        if int(config.num_labels) != 3:
            labels = {int(i): str(v) for i, v in config.id2label.items()}
            raise ConfigError(f"{self.name}: a three-way NLI model is needed, labels {labels}")
        if class_indices is None:
            class_indices = find_three_way_indices(config.id2label)
        self._indices = tuple(class_indices)
        self._max_length = effective_max_length(max_length, self._tokenizer, config)

    @property
    def class_indices(self) -> tuple[int, ...]:
        """The model's class indices of contradiction, neutral and entailment."""
        return self._indices

    @property
    def labels(self) -> dict[int, str]:
        """The model's class labels by index."""
        return {int(i): str(v) for i, v in self._model.config.id2label.items()}

    async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        """One vector per pair, in order; runs the model in a worker thread, in batches."""
        return await in_worker_thread(self.probabilities_sync, pairs)

    def probabilities_sync(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        """Blocking version of :meth:`probabilities` (for scripts and worker processes).

        Raises:
            ModelError: If a forward pass fails.
        """
        with self._lock, self._torch.inference_mode():
            return self._over_pairs(self._probs_batch, list(pairs), self._probs_finish)

    def _probs_batch(self, inputs: dict[str, Any]) -> Any:
        """One batch's probabilities in CONNER's order, left on the model's device."""
        logits = classifier_logits(self.name, self._model, inputs)
        return self._torch.softmax(logits.double(), dim=-1)[:, list(self._indices)]

    @staticmethod
    def _probs_finish(probs: Any) -> list[NLIProbs]:
        """One batch's vectors, from one transfer to the host."""
        return [NLIProbs(contradiction=c, neutral=n, entailment=e) for c, n, e in probs.tolist()]

    def _verdicts(self, pairs: list[NLIPair]) -> list[NLIVerdict]:
        """Verdicts for :meth:`entails`: entailed iff entailment is the argmax."""
        return [
            NLIVerdict(entailed=p.label == 2, score=p.entailment, source=self.name)
            for p in self._over_pairs(self._probs_batch, pairs, self._probs_finish)
        ]


class LexicalNLI3:
    """:class:`~citegraph.models.LexicalNLI` as a three-way model: ``(0, 1 - e, e)``, e in {0, 1}.

    Not an NLI model: a hypothesis whose value the premise states gets entailment 1, anything
    else neutral 1; contradiction is always 0. Named ``"lexical"`` so results say so.

    Args:
        year_only_dates: Accept a year-only mention of a full-date value (see LexicalNLI).
    """

    def __init__(self, *, year_only_dates: bool = False) -> None:
        self._lexical = LexicalNLI(year_only_dates=year_only_dates)

    @property
    def name(self) -> str:
        """``"lexical"`` (``"lexical(year_only_dates)"`` with that option)."""
        return self._lexical.name

    async def probabilities(self, pairs: Sequence[NLIPair]) -> list[NLIProbs]:
        """One 0/1 vector per pair, in order."""
        out = []
        for pair in pairs:
            e = 1.0 if self._lexical.decide(pair).entailed else 0.0
            out.append(NLIProbs(contradiction=0.0, neutral=1.0 - e, entailment=e))
        return out


_FORMS = "'lexical' or 'hf:<path or hub id>'"


def nli3_model(spec: str, **options: Unpack[NLI3Options]) -> NLI3Model:
    """Build the three-way NLI backend that ``spec`` names.

    Args:
        spec: ``"lexical"`` (:class:`LexicalNLI3`) or ``"hf:<path or hub id>"`` (:class:`HFNLI3`).
        **options: Keyword options of the backend (``batch_size``, ``device``, ``max_length``,
            ``class_indices``; ``year_only_dates`` for lexical).

    Returns:
        An object satisfying :class:`NLI3Model`.

    Raises:
        ConfigError: On an unknown spec or option.
        ModelError: If the model cannot be loaded.
        MissingDependency: If torch or transformers is not installed.

    Example:
        >>> nli3_model("lexical").name
        'lexical'
    """
    spec = spec.strip()
    if spec == "lexical":
        return build_checked(spec, LexicalNLI3, options)
    kind, sep, path = spec.partition(":")
    if kind != "hf" or not sep:
        raise ConfigError(f"unknown three-way NLI spec {spec!r}; expected {_FORMS}")
    if not path.strip():
        raise ConfigError(f"NLI spec {spec!r} has no model path or hub id after 'hf:'")
    return build_checked(spec, HFNLI3, options, path.strip())
