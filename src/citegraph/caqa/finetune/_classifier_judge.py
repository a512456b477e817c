"""A fine-tuned sequence classifier as a CAQA :class:`~citegraph.caqa.Evaluator`.

Loads a folder written by :func:`~citegraph.caqa.finetune` (``kind="classifier"``), or any
``AutoModelForSequenceClassification`` whose ``id2label`` names read as CAQA labels
(case-insensitive; see :data:`LABEL_SYNONYMS`): ``supportive`` / ``support`` / ``attributable``
..., ``insufficient`` / ``missing``, ``contradictory`` / ``contradiction``, ``irrelevant`` /
``extrapolatory`` (AttrScore's mapping, Appendix C), ``unsupported`` / ``not_attributable``.
The names decide the label set: all four categories, supportive + unsupported (binary), or
supportive + contradictory + irrelevant (AttrScore-style).

The input is what the model was trained on, read from ``citegraph-judge.json``: the (claim,
citation) text pair, or the Alpaca prompt text; a folder without that file gets the pair.
Inference runs in batches under ``torch.no_grad()`` in a worker thread, one call at a time per
model. A batch whose forward pass fails gives judgements with ``label=None`` and the error (the
judge run records them as failed and retries them).
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from citegraph.caqa._types import BINARY_LABELS, CATEGORIES, CaqaSample, Label
from citegraph.caqa.finetune._config import META_FILE
from citegraph.caqa.finetune._data import ClassifierInput, classifier_texts, pad_features
from citegraph.caqa.judge import Judgement, LabelSet
from citegraph.errors import ConfigError, DataError, ModelError
from citegraph.models.hf import (
    Placement,
    check_batching,
    effective_max_length,
    load_hf_model,
    resolve_model_path,
)
from citegraph.runs import error_fields

#: Class names (lower-cased, spaces and hyphens as underscores) read as each CAQA label.
LABEL_SYNONYMS: dict[str, Label] = {
    **dict.fromkeys(
        ("supportive", "support", "supports", "supported", "attributable", "attributed"),
        "supportive",
    ),
    **dict.fromkeys(("insufficient", "missing", "partial", "partially_supported"), "insufficient"),
    **dict.fromkeys(("contradictory", "contradiction", "contradicts", "refutes"), "contradictory"),
    **dict.fromkeys(("irrelevant", "extrapolatory", "not_relevant", "unrelated"), "irrelevant"),
    **dict.fromkeys(
        ("unsupported", "not_supported", "not_supportive", "not_attributable", "unattributable"),
        "unsupported",
    ),
}
_LABEL_SETS: dict[frozenset[str], LabelSet] = {
    frozenset(CATEGORIES): "four",
    frozenset(BINARY_LABELS): "binary",
    frozenset({"supportive", "contradictory", "irrelevant"}): "attrscore",
}


def map_class_labels(id2label: Mapping[Any, str]) -> tuple[dict[int, Label], LabelSet]:
    """Each class index's CAQA label, and the label set they make.

    Raises:
        ConfigError: A class name is not a known label, two classes map to one label, or the
            labels are not a CAQA label set; the message lists the model's labels.
    """
    names = {int(i): str(name) for i, name in id2label.items()}
    mapped: dict[int, Label] = {}
    for index, name in sorted(names.items()):
        key = name.strip().lower().replace("-", "_").replace(" ", "_")
        if key not in LABEL_SYNONYMS:
            raise ConfigError(
                f"class {index} {name!r} is not a CAQA label; the model's labels are {names}. "
                f"Known names: {', '.join(sorted(LABEL_SYNONYMS))}"
            )
        mapped[index] = LABEL_SYNONYMS[key]
    label_set = _LABEL_SETS.get(frozenset(mapped.values()))
    if label_set is None or len(set(mapped.values())) != len(mapped):
        raise ConfigError(
            f"the model's labels {names} map to {sorted(mapped.values())}, not a CAQA label set "
            "(four categories, supportive/unsupported, or supportive/contradictory/irrelevant)"
        )
    return mapped, label_set


def _read_metadata(folder: Path) -> dict[str, Any] | None:
    file = folder / META_FILE
    if not file.is_file():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path=file, line=exc.lineno) from exc
    if not isinstance(data, dict):
        raise DataError("expected a JSON object", path=file)
    if data.get("kind") != "classifier":
        raise ConfigError(
            f"{folder} holds a {data.get('kind')!r} fine-tune, not a classifier; judge a causal "
            f"model with the chat evaluator 'hf/{folder}' and prompt {data.get('prompt')!r}"
        )
    return data


class ClassifierJudge:
    """A sequence classifier judging CAQA samples.

    Args:
        path: The model folder (or a hub id; no metadata is read from the hub).
        batch_size: Samples per forward pass.
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``
            (None: auto).
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
        max_length: Token limit per input (None: the training ``max_length``, else 512),
            lowered to the model's position limit.
        input_format: Override the input (``"pair"`` or ``"prompt"``) read from the metadata.
        prompt: Override the Alpaca prompt used with ``input_format="prompt"``.

    Raises:
        MissingDependency: torch or transformers is not installed (``nli`` extra).
        ModelError: The model cannot be loaded.
        ConfigError: Bad options, a causal fine-tune, or class names that are not CAQA labels.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int = 16,
        device: str | None = "auto",
        dtype: Any = "auto",
        max_length: int | None = None,
        input_format: ClassifierInput | None = None,
        prompt: str | None = None,
    ) -> None:
        check_batching(batch_size, max_length)
        source = resolve_model_path(path)
        local = Path(source).exists()
        meta = _read_metadata(Path(source)) if local else None
        loaded = load_hf_model(
            source, "AutoModelForSequenceClassification", device=device, dtype=dtype
        )
        torch, tokenizer, model = loaded.torch, loaded.tokenizer, loaded.model
        self._labels, self._label_set = map_class_labels(model.config.id2label)
        self.placement: Placement = loaded.placement
        """Where the model runs (device, dtype, size)."""
        self._device = loaded.placement.device
        self._torch, self._tokenizer = torch, tokenizer
        self._model: Any = model
        meta = meta or {}
        self._input = cast(ClassifierInput, input_format or meta.get("input") or "pair")
        self._prompt = prompt or meta.get("prompt") or "alpaca"
        requested = max_length or int(meta.get("max_length") or 512)
        self._max_length = effective_max_length(requested, tokenizer, model.config)
        self._batch_size = batch_size
        self._pad_id = tokenizer.pad_token_id
        if self._pad_id is None:
            self._pad_id = tokenizer.eos_token_id or 0
        self._lock = threading.Lock()
        self._path = str(Path(source).resolve()) if local else source
        self.metadata: dict[str, Any] | None = meta or None
        """``citegraph-judge.json`` of the folder, when it has one."""

    @property
    def name(self) -> str:
        """``cls:<path>[<labels in class order>]``."""
        labels = ",".join(self._labels[i] for i in sorted(self._labels))
        return f"cls:{self._path}[{labels}]"

    @property
    def label_set(self) -> LabelSet:
        """``four``, ``binary`` or ``attrscore``, from the class names."""
        return self._label_set

    @property
    def labels(self) -> dict[int, Label]:
        """The CAQA label of each class index."""
        return dict(self._labels)

    async def judge(self, samples: Sequence[CaqaSample]) -> list[Judgement]:
        """One judgement per sample, in order (inference in a worker thread)."""
        samples = list(samples)
        if not samples:
            return []
        return await asyncio.to_thread(self.judge_sync, samples)

    def judge_sync(self, samples: Sequence[CaqaSample]) -> list[Judgement]:
        """Blocking version of :meth:`judge`.

        Raises:
            ModelError: The judge was closed.
        """
        out: list[Judgement] = []
        with self._lock, self._torch.no_grad():
            if self._model is None:
                raise ModelError(f"{self.name}: the model was closed")
            for start in range(0, len(samples), self._batch_size):
                out.extend(self._batch(samples[start : start + self._batch_size]))
        return out

    def _batch(self, samples: Sequence[CaqaSample]) -> list[Judgement]:
        try:
            first, second = classifier_texts(samples, self._input, self._prompt)
            encoded = self._tokenizer(first, second, truncation=True, max_length=self._max_length)
            rows = [{key: encoded[key][i] for key in encoded} for i in range(len(samples))]
            batch = pad_features(rows, {"input_ids": int(self._pad_id)}, self._torch)
            batch = {k: v.to(self._device) for k, v in batch.items()}
            probs = self._torch.softmax(self._model(**batch).logits.float(), dim=-1).tolist()
        except Exception as exc:  # tokenizer / shape / device errors: the batch fails, not the run
            failed = error_fields(exc, prefix="model error: ")
            return [Judgement(label=None, **failed) for _ in samples]
        names = self._model.config.id2label
        judgements = []
        for row in probs:
            best = max(range(len(row)), key=row.__getitem__)
            scores: dict[str, float] = {self._labels[i]: float(p) for i, p in enumerate(row)}
            judgements.append(
                Judgement(label=self._labels[best], raw=str(names[best]), scores=scores)
            )
        return judgements

    async def aclose(self) -> None:
        """Free the model (waits for a running batch to finish)."""
        await asyncio.to_thread(self._free)

    def _free(self) -> None:
        with self._lock:
            self._model = None
        gc.collect()
