"""Hugging Face NLI cross-encoder (sequence classifier) behind the :class:`NLIModel` protocol.

Any ``AutoModelForSequenceClassification`` NLI model works: MNLI / ANLI cross-encoders with
labels such as ``contradiction / entailment / neutral`` (in any order) and 2-way models with
``entailment / not_entailment``. The entailment class is found by name in
``model.config.id2label``; ``entailment_index`` overrides it for models with generic labels.

Loading (torch and transformers imported only then), batching and the worker thread come from
:class:`~citegraph.models.hf._common.HFBackend`, shared with the T5 backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, ModelError
from citegraph.models._nli_protocol import NLIPair, NLIVerdict
from citegraph.models.hf import (
    HFBackend,
    batch_plan_for,
    check_batching,
    classifier_logits,
    effective_max_length,
)

#: Label names (lower-cased, spaces as underscores) that mean "the premise entails".
ENTAILMENT_LABELS = frozenset({"entailment", "entails", "entail", "entailed"})


def find_entailment_index(id2label: Mapping[Any, str]) -> int:
    """The class index whose label means entailment (case-insensitive).

    Args:
        id2label: The model config's ``id2label`` (keys may be ints or digit strings).

    Returns:
        The index of the single label in :data:`ENTAILMENT_LABELS` (``"not_entailment"`` is not
        one).

    Raises:
        ModelError: If no label, or more than one, means entailment; the message lists the labels.
    """
    found = [
        int(index)
        for index, label in id2label.items()
        if str(label).strip().lower().replace(" ", "_").replace("-", "_") in ENTAILMENT_LABELS
    ]
    labels = {int(i): str(label) for i, label in id2label.items()}
    if len(found) != 1:
        problem = "no entailment label" if not found else "several entailment labels"
        raise ModelError(
            f"{problem} in the model's id2label {labels}; pass entailment_index=<class index> "
            "to choose the entailment class explicitly"
        )
    return found[0]


class HFClassifierNLI(HFBackend):
    """An NLI cross-encoder loaded with ``AutoModelForSequenceClassification``.

    The premise and hypothesis are encoded as a text pair. A pair is entailed iff the entailment
    class has the highest logit (default), or iff its softmax probability is >= ``threshold``.
    ``score`` is always that probability. A single-logit model is read as sigmoid(P(entail)).

    Args:
        path: Local model directory or Hugging Face hub id.
        entailment_index: Class index of entailment; read from ``id2label`` when ``None``.
        threshold: Decide by ``P(entail) >= threshold`` instead of argmax.
        batch_size: Most pairs per forward pass; ``None``: the device's plan
            (:func:`~citegraph.models.hf._batching.batch_plan_for`: 16 on a CPU, up to 512 on
            an accelerator).
        max_length: Token limit of a pair (longest part truncated first); lowered to the
            model's position limit when that is smaller.
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
        max_batch_tokens: Most padded positions per forward pass; ``None``: the device's plan
            (no limit on a CPU, 32,768 on an accelerator).

    Raises:
        MissingDependency: If torch or transformers is not installed.
        ModelError: If the model cannot be loaded or has no recognisable entailment label.
        ConfigError: On invalid options.
    """

    scheme = "hf"
    auto_class = "AutoModelForSequenceClassification"

    def __init__(
        self,
        path: str | Path,
        *,
        entailment_index: int | None = None,
        threshold: float | None = None,
        batch_size: int | None = None,
        max_length: int = 512,
        device: str = "auto",
        dtype: Any = "auto",
        max_batch_tokens: int | None = None,
    ) -> None:
        check_batching(batch_size, max_length)
        plan = batch_plan_for(device, batch_size=batch_size, max_batch_tokens=max_batch_tokens)
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {threshold}")
        super().__init__(path, plan=plan, device=device, dtype=dtype)
        config = self._model.config
        num_labels = int(config.num_labels)
        if num_labels == 1:
            index = 0
        elif entailment_index is None:
            index = find_entailment_index(config.id2label)
        elif not 0 <= entailment_index < num_labels:
            raise ConfigError(f"entailment_index {entailment_index} outside 0..{num_labels - 1}")
        else:
            index = entailment_index
        self._num_labels = num_labels
        self._entailment_index = index
        self._threshold = threshold
        self._max_length = effective_max_length(max_length, self._tokenizer, config)

    @property
    def entailment_index(self) -> int:
        """The class index read as entailment."""
        return self._entailment_index

    @property
    def labels(self) -> dict[int, str]:
        """The model's class labels by index."""
        return {int(i): str(v) for i, v in self._model.config.id2label.items()}

    def _verdicts(self, pairs: list[NLIPair]) -> list[NLIVerdict]:
        return self._over_pairs(self._batch, pairs, self._finish)

    def _batch(self, inputs: dict[str, Any]) -> Any:
        """One batch's ``[P(entail), decided]`` rows, left on the model's device."""
        torch = self._torch
        logits = classifier_logits(self.name, self._model, inputs)
        if self._num_labels == 1:
            prob = torch.sigmoid(logits[:, 0])
            decided = prob >= (0.5 if self._threshold is None else self._threshold)
        else:
            prob = torch.softmax(logits, dim=-1)[:, self._entailment_index]
            if self._threshold is None:
                decided = logits.argmax(dim=-1) == self._entailment_index
            else:
                decided = prob >= self._threshold
        return torch.stack([prob, decided.to(prob.dtype)], dim=1)

    def _finish(self, rows: Any) -> list[NLIVerdict]:
        """The verdicts of one batch, from one transfer to the host."""
        return [NLIVerdict(entailed=bool(d), score=p, source=self.name) for p, d in rows.tolist()]
