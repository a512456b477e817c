"""What the transformers NLI backends share: lazy imports, model loading, batching, the thread.

torch and transformers are imported when a model is built, so citegraph imports without them;
a missing package raises :class:`~citegraph.errors.MissingDependency` naming the ``nli`` extra.
Inference is blocking, so :meth:`HFBackend.entails` runs it in a worker thread, one call at a
time per model (a lock guards the model), over length-sorted batches (:mod:`._hf_batching`).
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, TypeVar

from citegraph.errors import ConfigError, MissingDependency, ModelError
from citegraph.models._nli_protocol import NLIPair, NLIVerdict
from citegraph.models._threads import in_worker_thread
from citegraph.models.hf._batching import BatchPlan, LengthSorted
from citegraph.models.hf._placement import (
    Placement,
    check_placement,
    load_placed,
    run_error,
)

_T = TypeVar("_T")


def require_transformers(extra: str = "nli") -> tuple[Any, Any]:
    """Import torch and transformers, or raise :class:`MissingDependency` naming ``extra``."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependency("transformers", extra, cause=exc) from exc
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


class LoadedModel(NamedTuple):
    """What :func:`load_hf_model` loaded: the torch module, the tokenizer, the model (in eval
    mode, on its device, in its dtype), the resolved path or hub id, and where the model runs."""

    torch: Any
    tokenizer: Any
    model: Any
    source: str
    placement: Placement


def load_hf_model(
    path: str | Path,
    auto_class: str,
    *,
    extra: str = "nli",
    device: str | None = "auto",
    dtype: Any = "auto",
) -> LoadedModel:
    """Load the tokenizer and the ``transformers.<auto_class>`` model at ``path`` (a local model
    directory or a hub id), without progress bars, on ``device`` in ``dtype`` (see
    :mod:`citegraph.models.hf._placement`).

    Raises:
        MissingDependency: torch or transformers is missing (the message names ``extra``).
        ConfigError: ``path`` is empty, or an unknown device or dtype.
        ModelError: ``path`` is a missing local path, the tokenizer or model fails to load, or
            the model does not fit on the device.
    """
    torch, transformers = require_transformers(extra)
    source = resolve_model_path(path)
    check_placement(torch, device, dtype)  # a missing device fails before anything is loaded
    auto = getattr(transformers, auto_class)
    with quiet_loading(transformers):
        tokenizer = load_pretrained(transformers.AutoTokenizer.from_pretrained, source, "tokenizer")
        config = load_pretrained(transformers.AutoConfig.from_pretrained, source, "model config")
        model, placement = load_placed(
            lambda kwargs: load_pretrained(
                lambda p: fast_attention(auto.from_pretrained)(p, config=config, **kwargs),
                source,
                "model",
            ),
            torch=torch, name=source, device=device, dtype=dtype, config=config, model_class=auto,
        )  # fmt: skip
    return LoadedModel(torch, tokenizer, model, source, placement)


#: The attention asked for first: torch's fused ``scaled_dot_product_attention`` (flash or
#: memory-efficient kernels on a GPU).
FAST_ATTENTION = "sdpa"


def fast_attention(from_pretrained: Callable[..., _T]) -> Callable[..., _T]:
    """``from_pretrained`` asking for :data:`FAST_ATTENTION`, and, for an architecture without it
    (transformers refuses an explicit ``"sdpa"`` with ``ValueError``: DeBERTa-v2 in
    transformers 5), loading again with the architecture's default attention.

    transformers 5 already defaults to SDPA where an architecture has it; asking explicitly also
    holds for older releases and for configs saved with another choice. A model that fails to
    load for another reason fails again the second time, with its own error.
    """

    def load(path: str, **kwargs: Any) -> _T:
        try:
            return from_pretrained(path, attn_implementation=FAST_ATTENTION, **kwargs)
        except (ValueError, ImportError):
            return from_pretrained(path, **kwargs)

    return load


class HeldModel(LengthSorted):
    """A loaded transformers model and its tokenizer, used under one lock.

    The chat model, the LM scorer, the classifiers and the embedding model hold their weights
    this way; :meth:`aclose` frees them once a running call has finished.
    """

    _model: Any
    _tokenizer: Any

    def _hold(
        self,
        *,
        model: Any,
        tokenizer: Any,
        torch: Any,
        device: str,
        placement: Placement | None = None,
    ) -> None:
        self._model = model
        self._tokenizer = tokenizer
        self._torch: Any = torch
        self._device = device
        self._placement = placement
        self._lock = threading.Lock()

    @property
    def placement(self) -> Placement | None:
        """Where the model runs (device, dtype, size), or None for a model given already loaded
        without it."""
        return self._placement

    async def aclose(self) -> None:
        """Free the model and tokenizer (waits for a running call to finish)."""
        await asyncio.to_thread(self._free)

    def _free(self) -> None:
        with self._lock:
            self._model = self._tokenizer = None
        gc.collect()


_In = TypeVar("_In")
_Out = TypeVar("_Out")


def check_batching(batch_size: int | None, max_length: int | None) -> None:
    """Validate the common batching options (``batch_size=None``: the device's plan)."""
    if batch_size is not None and batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if max_length is not None and max_length < 1:
        raise ConfigError(f"max_length must be >= 1, got {max_length}")


class HFBackend(LengthSorted):
    """A tokenizer and model loaded with transformers, run in batches in a worker thread.

    Subclasses set :attr:`scheme` (the prefix of :attr:`name`) and :attr:`auto_class` (the
    ``transformers`` auto class that loads the model), validate their own options *before*
    calling ``super().__init__`` (so bad options fail without loading anything), and implement
    :meth:`_verdicts` (batching with ``_length_sorted``).

    Args:
        path: Local model directory or Hugging Face hub id.
        plan: How pairs are cut into batches (:func:`~._hf_batching.batch_plan_for`, built and
            validated by the subclass).
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"``, ``"mps"``.
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.

    Raises:
        MissingDependency: If torch or transformers is not installed.
        ModelError: If the path is missing or the tokenizer or model cannot be loaded.
        ConfigError: If ``path`` is empty.
    """

    scheme: ClassVar[str]
    auto_class: ClassVar[str]
    _max_length: int | None

    def __init__(
        self, path: str | Path, *, plan: BatchPlan, device: str | None, dtype: Any
    ) -> None:
        loaded = load_hf_model(path, self.auto_class, device=device, dtype=dtype)
        self._path = loaded.source
        self._torch = loaded.torch
        self._tokenizer = loaded.tokenizer
        self._model = loaded.model
        self._placement: Placement | None = loaded.placement
        self._device = loaded.placement.device
        self._plan = plan
        self._lock = threading.Lock()

    @property
    def placement(self) -> Placement | None:
        """Where the model runs (device, dtype, size)."""
        return self._placement

    @property
    def name(self) -> str:
        """``"<scheme>:<path or hub id>"``, e.g. ``"hf:..."`` or ``"t5:..."``."""
        return f"{self.scheme}:{self._path}"

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """One verdict per pair, in order; runs the model in a worker thread, in batches."""
        return await in_worker_thread(self.entails_sync, pairs)

    def entails_sync(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """Blocking version of :meth:`entails` (for scripts and worker processes).

        Raises:
            ModelError: If a forward pass fails or the batches give the wrong number of verdicts.
        """
        with self._lock, self._torch.inference_mode():
            verdicts = self._verdicts(list(pairs))
        if len(verdicts) != len(pairs):
            raise ModelError(f"{self.name}: {len(verdicts)} verdicts for {len(pairs)} pairs")
        return verdicts

    def _verdicts(self, pairs: list[NLIPair]) -> list[NLIVerdict]:
        """The verdicts of all pairs, in order (called under the lock, in inference mode)."""
        raise NotImplementedError

    @property
    def batch_plan(self) -> BatchPlan:
        """How inputs are cut into batches on this backend's device."""
        return self._plan

    def _over_pairs(
        self,
        run: Callable[[dict[str, Any]], Any],
        pairs: list[NLIPair],
        finish: Callable[[Any], list[_T]],
    ) -> list[_T]:
        """``run`` over length-sorted batches of the (premise, hypothesis) pairs, truncated to
        ``_max_length``, and ``finish`` of its outputs; one result per pair, in order."""
        return self._length_sorted(
            run, [p.premise for p in pairs], [p.hypothesis for p in pairs],
            max_length=self._max_length, plan=self._plan, finish=finish,
        )  # fmt: skip


def effective_max_length(requested: int, tokenizer: Any, config: Any) -> int:
    """``requested``, lowered to what the tokenizer and the position embeddings allow."""
    limits = [requested]
    model_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(model_max, int) and 0 < model_max < 1_000_000:  # huge = "no limit" sentinel
        limits.append(model_max)
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limits.append(positions)
    return min(limits)


def classifier_logits(name: str, model: Any, inputs: dict[str, Any]) -> Any:
    """Float32 logits of a sequence-classification model for one padded batch of inputs: the
    forward pass shared by the NLI, three-way NLI and reranker backends.

    Raises:
        ModelError: The forward pass failed (shape, device or dtype problems surface here).
    """
    try:
        return model(**inputs).logits.float()
    except Exception as exc:
        import torch  # loaded already: the model is a torch module

        raise run_error(torch, name, str(model.device), exc) from exc
