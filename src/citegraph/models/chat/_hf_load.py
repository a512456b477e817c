"""Loading a causal language model and its tokenizer (transformers) for :class:`HFChat
<citegraph.models.HFChat>` and the LM scorer.

torch and transformers are imported when a model is loaded; when they are missing,
:class:`~citegraph.errors.MissingDependency` names the ``local`` extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
from pathlib import Path
from typing import Any, NamedTuple

from citegraph.errors import MissingDependency
from citegraph.models.hf import (
    Placement,
    check_placement,
    fast_attention,
    load_placed,
    load_pretrained,
    quiet_loading,
    require_transformers,
    resolve_model_path,
)


def require_local() -> tuple[Any, Any]:
    """Import torch and transformers, or raise :class:`MissingDependency` (``local`` extra)."""
    return require_transformers("local")


def quiet_stderr(enabled: bool = True) -> contextlib.AbstractContextManager[Any]:
    """Swallow ``sys.stderr`` while enabled: transformers' GGUF reader draws a tqdm bar that its
    progress-bar switch does not reach (library code never prints)."""
    return contextlib.redirect_stderr(io.StringIO()) if enabled else contextlib.nullcontext()


class LoadedLM(NamedTuple):
    """A causal LM and its tokenizer as :func:`load_causal_lm` loaded them."""

    torch: Any
    model: Any
    tokenizer: Any
    source: str
    gguf_file: str | None
    placement: Placement


def load_causal_lm(
    model_id_or_path: str | Path,
    *,
    gguf_file: str | None = None,
    device: str | None = "auto",
    dtype: Any = "auto",
) -> LoadedLM:
    """Load a tokenizer and causal LM (hub id, local folder, or a ``.gguf`` file path) on
    ``device`` in ``dtype`` (see :mod:`citegraph.models.hf._placement`), in eval mode.

    Shared by :class:`HFChat` and the LM scorer. A path to a ``.gguf`` file is split into its
    folder and ``gguf_file``; transformers dequantizes GGUF weights (needs ``gguf``).

    Raises:
        MissingDependency: torch, transformers or (for GGUF) gguf is missing (``local``).
        ModelError: The path does not exist, the tokenizer or model fails to load, or the model
            does not fit on the device.
        ConfigError: Empty path, unknown device or unknown dtype.
    """
    torch, transformers = require_local()
    text = str(model_id_or_path).strip()
    if gguf_file is None and text.endswith(".gguf") and Path(text).expanduser().is_file():
        gguf_path = Path(text).expanduser()
        text, gguf_file = str(gguf_path.parent), gguf_path.name
    if gguf_file is not None and importlib.util.find_spec("gguf") is None:
        raise MissingDependency("gguf", "local")
    source = resolve_model_path(text)
    check_placement(torch, device, dtype)  # a missing device fails before anything is loaded
    kwargs: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    auto = transformers.AutoModelForCausalLM
    with quiet_loading(transformers), quiet_stderr(gguf_file is not None):
        tokenizer = load_pretrained(
            lambda p: transformers.AutoTokenizer.from_pretrained(p, **kwargs),
            source,
            "tokenizer",
        )
        try:  # for the size check before loading; a GGUF file's config may not read this way
            config = transformers.AutoConfig.from_pretrained(source, **kwargs)
        except Exception:
            config = None
        model, placement = load_placed(
            lambda placed: load_pretrained(
                lambda p: fast_attention(auto.from_pretrained)(p, **kwargs, **placed),
                source,
                "causal LM",
            ),
            torch=torch, name=source, device=device, dtype=dtype, config=config, model_class=auto,
        )  # fmt: skip
    return LoadedLM(torch, model, tokenizer, source, gguf_file, placement)
