"""Hugging Face NLI cross-encoder (sequence classifier) behind the :class:`NLIModel` protocol.

Any ``AutoModelForSequenceClassification`` NLI model works: MNLI / ANLI cross-encoders with
labels such as ``contradiction / entailment / neutral`` (in any order) and 2-way models with
``entailment / not_entailment``. The entailment class is found by name in
``model.config.id2label``; ``entailment_index`` overrides it for models with generic labels.

torch and transformers are imported when a model is built, so citegraph imports without them;
a missing package raises :class:`~citegraph.errors.MissingDependency` naming the ``nli`` extra.
Inference is blocking, so :meth:`HFClassifierNLI.entails` runs it in a worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.models._nli_protocol import NLIPair, NLIVerdict

#: Label names (lower-cased, spaces as underscores) that mean "the premise entails".
ENTAILMENT_LABELS = frozenset({"entailment", "entails", "entail", "entailed"})

_T = TypeVar("_T")


def require_transformers() -> tuple[Any, Any]:
    """Import torch and transformers, or raise :class:`MissingDependency` for the ``nli`` extra."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependency("transformers", "nli") from exc
    return torch, transformers


def resolve_model_path(path: str | Path) -> str:
    """A local model directory (checked to exist) or a hub id, as a string.

    Raises:
        ConfigError: If ``path`` is empty.
        ModelError: If ``path`` is clearly a local path (absolute, ``./``, ``~``) that does not
            exist, or is a file rather than a model directory.
    """
    text = str(path).strip()
    if not text:
        raise ConfigError("empty model path or hub id")
    local = Path(text).expanduser()
    if local.exists():
        if not local.is_dir():
            raise ModelError(f"model path {text!r} is a file; expected a model directory")
        return str(local)
    if text.startswith(("/", "./", "../", "~", ".\\")) or local.is_absolute():
        raise ModelError(f"model path {text!r} does not exist")
    return text


@contextmanager
def quiet_loading(transformers: Any) -> Iterator[None]:
    """Silence transformers' loading progress bars while loading (library code never prints)."""
    hf_logging = transformers.utils.logging
    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def load_pretrained(loader: Callable[[str], _T], path: str, what: str) -> _T:
    """Call ``loader(path)``, turning any failure into a :class:`ModelError` that names the path."""
    try:
        return loader(path)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError, ...
        hint = "" if Path(path).exists() else " (not a local directory; hub lookup failed)"
        raise ModelError(f"could not load the {what} from {path!r}{hint}: {exc}") from exc


def check_batching(batch_size: int, max_length: int | None) -> None:
    """Validate the common batching options."""
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if max_length is not None and max_length < 1:
        raise ConfigError(f"max_length must be >= 1, got {max_length}")


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


def _effective_max_length(requested: int, tokenizer: Any, config: Any) -> int:
    """``requested``, lowered to what the tokenizer and the position embeddings allow."""
    limits = [requested]
    model_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(model_max, int) and 0 < model_max < 1_000_000:  # huge = "no limit" sentinel
        limits.append(model_max)
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limits.append(positions)
    return min(limits)


class HFClassifierNLI:
    """An NLI cross-encoder loaded with ``AutoModelForSequenceClassification``.

    The premise and hypothesis are encoded as a text pair. A pair is entailed iff the entailment
    class has the highest logit (default), or iff its softmax probability is >= ``threshold``.
    ``score`` is always that probability. A single-logit model is read as sigmoid(P(entail)).

    Args:
        path: Local model directory or Hugging Face hub id.
        entailment_index: Class index of entailment; read from ``id2label`` when ``None``.
        threshold: Decide by ``P(entail) >= threshold`` instead of argmax.
        batch_size: Pairs per forward pass.
        max_length: Token limit of a pair (longest part truncated first); lowered to the
            model's position limit when that is smaller.
        device: torch device, ``"cpu"`` by default.

    Raises:
        MissingDependency: If torch or transformers is not installed.
        ModelError: If the model cannot be loaded or has no recognisable entailment label.
        ConfigError: On invalid options.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        entailment_index: int | None = None,
        threshold: float | None = None,
        batch_size: int = 16,
        max_length: int = 512,
        device: str = "cpu",
    ) -> None:
        check_batching(batch_size, max_length)
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {threshold}")
        torch, transformers = require_transformers()
        self._path = resolve_model_path(path)
        self._torch = torch
        with quiet_loading(transformers):
            self._tokenizer = load_pretrained(
                transformers.AutoTokenizer.from_pretrained, self._path, "tokenizer"
            )
            model = load_pretrained(
                transformers.AutoModelForSequenceClassification.from_pretrained, self._path, "model"
            )
        self._model = model.to(device).eval()
        self._device = device
        num_labels = int(model.config.num_labels)
        if num_labels == 1:
            index = 0
        elif entailment_index is None:
            index = find_entailment_index(model.config.id2label)
        elif not 0 <= entailment_index < num_labels:
            raise ConfigError(f"entailment_index {entailment_index} outside 0..{num_labels - 1}")
        else:
            index = entailment_index
        self._num_labels = num_labels
        self._entailment_index = index
        self._threshold = threshold
        self._batch_size = batch_size
        self._max_length = _effective_max_length(max_length, self._tokenizer, model.config)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``"hf:<path or hub id>"``."""
        return f"hf:{self._path}"

    @property
    def entailment_index(self) -> int:
        """The class index read as entailment."""
        return self._entailment_index

    @property
    def labels(self) -> dict[int, str]:
        """The model's class labels by index."""
        return {int(i): str(v) for i, v in self._model.config.id2label.items()}

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """One verdict per pair, in order; runs the model in a worker thread, in batches."""
        pairs = list(pairs)
        if not pairs:
            return []
        return await asyncio.to_thread(self.entails_sync, pairs)

    def entails_sync(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """Blocking version of :meth:`entails` (for scripts and worker processes)."""
        verdicts: list[NLIVerdict] = []
        with self._lock, self._torch.inference_mode():
            for start in range(0, len(pairs), self._batch_size):
                verdicts.extend(self._batch(pairs[start : start + self._batch_size]))
        return verdicts

    def _batch(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        torch = self._torch
        encoded = self._tokenizer(
            [p.premise for p in pairs],
            [p.hypothesis for p in pairs],
            padding=True,
            truncation=True,
            max_length=self._max_length,
            return_tensors="pt",
        ).to(self._device)
        try:
            logits = self._model(**encoded).logits.float()
        except Exception as exc:  # shape / device / dtype problems surface here
            raise ModelError(f"{self.name}: forward pass failed: {exc}") from exc
        if self._num_labels == 1:
            prob = torch.sigmoid(logits[:, 0])
            decided = prob >= (0.5 if self._threshold is None else self._threshold)
        else:
            prob = torch.softmax(logits, dim=-1)[:, self._entailment_index]
            if self._threshold is None:
                decided = logits.argmax(dim=-1) == self._entailment_index
            else:
                decided = prob >= self._threshold
        return [
            NLIVerdict(entailed=bool(d), score=float(p), source=self.name)
            for d, p in zip(decided.tolist(), prob.tolist(), strict=True)
        ]
