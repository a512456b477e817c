"""Sequence-classification scorers: a cross-encoder reranker and a single-text scorer.

:class:`CrossEncoderReranker` scores ``(query, passage)`` pairs with a BERT-style cross-encoder,
as CONNER's relevance (Eq. 2) does with ``castorini/monobert-large-msmarco`` (its
``relevance.py``: text_a = query, text_b = knowledge, max length 512, score =
``softmax(logits)[:, 1]``, i.e. P(relevant)). :class:`HFTextScorer` scores single texts, e.g.
with a discourse-coherence regression model for CONNER's paragraph coherence (Eq. 4).

How the logits become one number (``readout``):

==============  =========================  ==============================================
labels          reranker                   text scorer
==============  =========================  ==============================================
1               ``sigmoid(logit)``         the raw logit (a regression head, unbounded)
                (ms-marco cross-encoders)
2               ``softmax[:, 1]``          ``softmax[:, 1]``
more            ``softmax[:, label_index]`` (``label_index`` required)
==============  =========================  ==============================================

``label_index`` chooses another class of a 2-label model. Pairs are tokenised as one input
(``[CLS] query [SEP] passage [SEP]``), truncating the longer part first to ``max_length``
(lowered to the model's position limit), as the GLUE features of the reference code. Inference
is blocking, so the async methods run it in a worker thread, one call at a time per model (a lock
guards the model), in length-sorted batches sized for the device (``batch_size``,
``max_batch_tokens``; see :func:`~citegraph.models.hf._batching.batch_plan_for`).

torch and transformers are imported when a model is loaded; when they are missing,
:class:`~citegraph.errors.MissingDependency` names the ``nli`` extra (the neural-scorer extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Unpack, cast

from citegraph.errors import ConfigError, ModelError
from citegraph.models._backend_options import RerankerOptions, build_checked, build_served
from citegraph.models._options import ModelOptions, backend_options
from citegraph.models._providers import custom_builder, parse_spec
from citegraph.models._threads import in_worker_thread
from citegraph.models.hf import (
    HeldModel,
    batch_plan_for,
    check_batching,
    classifier_logits,
    effective_max_length,
    load_hf_model,
)

if TYPE_CHECKING:
    from citegraph.models.rerank._server import ServerReranker

__all__ = ["CrossEncoderReranker", "HFTextScorer", "reranker_model"]

_OneLabel = Literal["sigmoid", "logit"]


def _choose_readout(
    num_labels: int, label_index: int | None, one_label: _OneLabel, labels: dict[int, str]
) -> tuple[str, int]:
    """The readout name (``"sigmoid"``, ``"logit"`` or ``"softmax"``) and the class index."""
    if num_labels == 1:
        if label_index not in (None, 0):
            raise ConfigError(f"label_index {label_index} for a model with a single output")
        return one_label, 0
    if label_index is None:
        if num_labels != 2:
            raise ModelError(
                f"the model has {num_labels} classes {labels}; pass label_index=<class index> "
                "to choose the class whose probability is the score"
            )
        label_index = 1
    if not 0 <= label_index < num_labels:
        raise ConfigError(f"label_index {label_index} outside 0..{num_labels - 1}")
    return "softmax", label_index


class _SequenceClassifier(HeldModel):
    """A tokenizer and ``AutoModelForSequenceClassification`` reading one number per input."""

    _one_label: _OneLabel = "logit"

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int | None = None,
        device: str = "auto",
        dtype: Any = "auto",
        max_length: int = 512,
        label_index: int | None = None,
        max_batch_tokens: int | None = None,
    ) -> None:
        check_batching(batch_size, max_length)
        self._plan = batch_plan_for(
            device, batch_size=batch_size, max_batch_tokens=max_batch_tokens
        )
        loaded = load_hf_model(
            path, "AutoModelForSequenceClassification", device=device, dtype=dtype
        )
        torch, tokenizer, model, self._path = loaded[:4]
        config = model.config
        labels = {int(i): str(v) for i, v in config.id2label.items()}
        self._readout, self._index = _choose_readout(
            int(config.num_labels), label_index, self._one_label, labels
        )
        self._labels = labels
        self._hold(
            model=model,
            tokenizer=tokenizer,
            torch=torch,
            device=loaded.placement.device,
            placement=loaded.placement,
        )
        self._max_length = effective_max_length(max_length, tokenizer, config)

    @property
    def name(self) -> str:
        """``"hf:<path or hub id>"``."""
        return f"hf:{self._path}"

    @property
    def readout(self) -> str:
        """How logits become the score: ``"softmax[<i>]"``, ``"sigmoid"`` or ``"logit"``."""
        return f"softmax[{self._index}]" if self._readout == "softmax" else self._readout

    @property
    def labels(self) -> dict[int, str]:
        """The model's class labels by index."""
        return dict(self._labels)

    @property
    def settings(self) -> dict[str, Any]:
        """What determines the numbers besides the weights, for run records."""
        return {"name": self.name, "readout": self.readout, "max_length": self._max_length}

    def _run(self, first: Sequence[str], second: Sequence[str] | None) -> list[float]:
        """Scores of the inputs in order (blocking)."""
        with self._lock, self._torch.inference_mode():
            if self._model is None or self._tokenizer is None:
                raise ModelError(f"{self.name}: the model was closed")
            return self._length_sorted(
                self._batch, first, second,
                max_length=self._max_length, plan=self._plan, finish=self._finish,
            )  # fmt: skip

    @staticmethod
    def _finish(values: Any) -> list[float]:
        """One batch's scores, from one transfer to the host."""
        return [float(v) for v in values.tolist()]

    def _batch(self, inputs: dict[str, Any]) -> Any:
        """One batch's scores, left on the model's device."""
        torch = self._torch
        logits = classifier_logits(self.name, self._model, inputs)
        if self._readout == "softmax":
            values = torch.softmax(logits, dim=-1)[:, self._index]
        elif self._readout == "sigmoid":
            values = torch.sigmoid(logits[:, 0])
        else:
            values = logits[:, 0]
        return values


class CrossEncoderReranker(_SequenceClassifier):
    """A cross-encoder relevance model: P(relevant) of each ``(query, passage)`` pair.

    Args:
        path: Local model directory or Hugging Face hub id (e.g.
            ``castorini/monobert-large-msmarco``, ``cross-encoder/ms-marco-MiniLM-L-6-v2``).
        batch_size: Most pairs per forward pass; ``None``: the device's plan (16 on a CPU, up
            to 512 on an accelerator).
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
        max_length: Token limit of a pair (longer part truncated first), 512 as CONNER; lowered
            to the model's position limit.
        label_index: The "relevant" class of a model with 2 or more classes (default 1 for 2).
        max_batch_tokens: Most padded positions per forward pass; ``None``: the device's plan.

    Raises:
        MissingDependency: torch or transformers is missing (the ``nli`` extra).
        ModelError: The model cannot be loaded, or it has more than 2 classes and no
            ``label_index``.
        ConfigError: Bad options.

    Example:
        >>> reranker = CrossEncoderReranker("castorini/monobert-large-msmarco")  # doctest: +SKIP
        >>> pair = ("who wrote Hamlet", "Hamlet is a play by Shakespeare.")
        >>> reranker.score_sync([pair])  # doctest: +SKIP
    """

    _one_label: _OneLabel = "sigmoid"

    async def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(relevant) of each ``(query, passage)``, in order (worker thread)."""
        return await in_worker_thread(self.score_sync, pairs)

    def score_sync(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Blocking :meth:`score`.

        Raises:
            ModelError: The model was closed or a forward pass failed.
        """
        if not pairs:
            return []
        return self._run([q for q, _ in pairs], [p for _, p in pairs])


class HFTextScorer(_SequenceClassifier):
    """A single-text sequence classifier or regressor giving one number per text.

    A 1-output model gives its raw logit (a regression score, unbounded); a 2-class model
    ``softmax[:, label_index]`` (default 1).

    Args:
        path: Local model directory or Hugging Face hub id.
        batch_size: Most texts per forward pass; ``None``: the device's plan.
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
        max_length: Token limit of a text (truncated at the end); lowered to the model's limit.
        label_index: The class whose probability is the score (required beyond 2 classes).
        max_batch_tokens: Most padded positions per forward pass; ``None``: the device's plan.

    Raises:
        MissingDependency: torch or transformers is missing (the ``nli`` extra).
        ModelError: The model cannot be loaded or has more than 2 classes and no label_index.
        ConfigError: Bad options.
    """

    async def score(self, texts: Sequence[str]) -> list[float]:
        """The score of each text, in order (worker thread)."""
        return await in_worker_thread(self.score_sync, texts)

    def score_sync(self, texts: Sequence[str]) -> list[float]:
        """Blocking :meth:`score`.

        Raises:
            ModelError: The model was closed or a forward pass failed.
        """
        if not texts:
            return []
        return self._run(list(texts), None)


def reranker_model(
    spec: str, options: ModelOptions | None = None, **backend: Unpack[RerankerOptions]
) -> CrossEncoderReranker | ServerReranker:
    """Build the cross-encoder reranker ``spec`` names.

    Args:
        spec: ``"hf/<hub id or local path>"``, or ``"vllm/<model>"`` / ``"tei/<model>"`` for a
            served cross-encoder (:class:`~citegraph.models.ServerReranker`; options
            ``base_url``, ``cache``...).
        options: Where a local model runs and how a server is reached.
        **backend: Keyword options of :class:`CrossEncoderReranker` (``batch_size``,
            ``device``, ``max_length``, ``label_index``).

    Raises:
        ConfigError: An unknown spec or option.
        MissingDependency: torch or transformers is missing.
        ModelError: The model cannot be loaded.

    Example:
        >>> reranker = reranker_model("hf/castorini/monobert-large-msmarco")  # doctest: +SKIP
    """
    parsed = parse_spec("reranker", spec)
    given = backend_options(options, parsed, cast(dict[str, Any], backend))
    if (build := custom_builder(parsed)) is not None:  # a provider of register_provider
        return cast(CrossEncoderReranker, build(parsed, given))
    if parsed.provider in ("vllm", "tei"):
        from citegraph.models.rerank._server import ServerReranker

        served = {"provider": parsed.provider, **given}
        return build_served(spec, ServerReranker, served, parsed.model, what="reranker")
    return build_checked(spec, CrossEncoderReranker, given, parsed.model, what="reranker")
