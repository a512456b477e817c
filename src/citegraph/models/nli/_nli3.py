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

:func:`nli3_model` builds either from a spec string: ``"lexical"``, ``"hf/<path or hub id>"``
or ``"vllm/<model>"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, Unpack, cast, runtime_checkable

from citegraph.errors import ConfigError
from citegraph.models._backend_options import NLI3Options, build_checked, build_served
from citegraph.models._nli_protocol import NLIPair, NLIVerdict
from citegraph.models._options import ModelOptions, backend_options
from citegraph.models._providers import custom_builder, parse_spec
from citegraph.models._threads import in_worker_thread
from citegraph.models.hf import (
    HFBackend,
    batch_plan_for,
    check_batching,
    classifier_logits,
    effective_max_length,
)
from citegraph.models.nli._lexical import LexicalNLI
from citegraph.models.nli._nli3_probs import (
    CONTRADICTION_LABELS,
    NEUTRAL_LABELS,
    NLI3_LABELS,
    NLIProbs,
    find_three_way_indices,
)

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


class HFNLI3(HFBackend):
    """A three-class NLI cross-encoder loaded with ``AutoModelForSequenceClassification``.

    The premise and hypothesis are encoded as a text pair (the longer part truncated first);
    the probabilities are the softmax of the logits (in float64), reordered to CONNER's order.

    Args:
        path: Local model directory or Hugging Face hub id.
        batch_size: Most pairs per forward pass; ``None``: the device's plan (16 on a CPU, up
            to 512 on an accelerator).
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
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
        device: str = "auto",
        dtype: Any = "auto",
        max_length: int = 512,
        class_indices: tuple[int, int, int] | None = None,
        max_batch_tokens: int | None = None,
    ) -> None:
        check_batching(batch_size, max_length)
        plan = batch_plan_for(device, batch_size=batch_size, max_batch_tokens=max_batch_tokens)
        if class_indices is not None and sorted(class_indices) != [0, 1, 2]:
            raise ConfigError(f"class_indices must be a permutation of 0, 1, 2; {class_indices}")
        super().__init__(path, plan=plan, device=device, dtype=dtype)
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


def nli3_model(
    spec: str, options: ModelOptions | None = None, **backend: Unpack[NLI3Options]
) -> NLI3Model:
    """Build the three-way NLI backend that ``spec`` names.

    Args:
        spec: ``"lexical"`` (:class:`LexicalNLI3`), ``"hf/<path or hub id>"`` (:class:`HFNLI3`)
            or ``"vllm/<model>"`` (:class:`~citegraph.models.ServerNLI3`, a served model).
        options: Where a local model runs and how a server is reached.
        **backend: Keyword options of the backend (``batch_size``, ``device``, ``max_length``,
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
    parsed = parse_spec("nli3", spec)
    given = backend_options(options, parsed, cast(dict[str, Any], backend))
    if (build := custom_builder(parsed)) is not None:  # a provider of register_provider
        return cast(NLI3Model, build(parsed, given))
    if parsed.provider == "lexical":
        return build_checked(parsed.text, LexicalNLI3, given)
    if parsed.provider == "vllm":
        from citegraph.models.nli._server import ServerNLI3

        return build_served(parsed.text, ServerNLI3, given, parsed.model, what="NLI")
    return build_checked(parsed.text, HFNLI3, given, parsed.model)
