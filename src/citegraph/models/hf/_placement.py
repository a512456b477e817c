"""Where a local model runs: the device and dtype a user asks for, resolved, and the model
loaded there, or a clear error when it does not fit.

``device``:

- ``"auto"`` (the default everywhere): the first CUDA GPU when one is present, else Apple's MPS,
  else the CPU;
- ``"cpu"``, ``"cuda"``, ``"cuda:<i>"``, ``"mps"``: that device (a missing one is an error).

``dtype``:

- ``"auto"`` (the default everywhere): bfloat16 on a GPU that supports it, float16 on one that
  does not (MPS, pre-Ampere CUDA), float32 on the CPU. T5-family models (TRUE) overflow in
  float16, so where bfloat16 is missing they stay in float32;
- ``"float32"`` / ``"fp32"``, ``"bfloat16"`` / ``"bf16"``, ``"float16"`` / ``"fp16"``: that
  dtype (float16 and bfloat16 on the CPU are allowed: slow, but sometimes wanted to compare).

dtype moves numbers (bfloat16 moves a mean NLL per token by up to ~0.015 nats), so the resolved
device and dtype, with the model's parameter count and weight size, are recorded with every run
(:class:`Placement`, ``run.json`` ``models``) and a run is not resumed in another dtype.

:func:`load_placed` counts a model's parameters before loading it (on the ``meta`` device, from
its config), and compares its weights with the memory free on the device: weights above
:data:`FIT_SHARE` of it raise one :class:`~citegraph.errors.ModelError` naming the model, its
size and the memory free, never an out-of-memory traceback. A model too large for one GPU is
spread over all of them (``device_map="auto"``, needs ``accelerate``) when ``device`` did not name
one GPU and together they hold it.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, MissingDependency, ModelError

__all__ = [
    "DEVICE_HELP",
    "DTYPE_HELP",
    "FIT_SHARE",
    "Placement",
    "check_placement",
    "free_memory",
    "is_out_of_memory",
    "load_placed",
    "out_of_memory_error",
    "resolve_device",
    "resolve_dtype",
    "run_error",
]

DEVICE_HELP = "auto (a GPU when present: CUDA, else MPS; else CPU), cpu, cuda, cuda:<i>, mps."
DTYPE_HELP = "auto (bf16 on a GPU that has it, else fp16; fp32 on CPU), float32, bfloat16, float16."

#: Weights may take at most this share of the memory free on a device: the rest is for
#: activations, the KV cache of a shared prefix, and the allocator's fragmentation.
FIT_SHARE = 0.9

_DTYPE_ALIASES = {
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}
#: Architectures whose activations overflow float16 (T5's feed-forward outputs).
_NO_FLOAT16 = frozenset({"t5", "mt5", "umt5", "longt5", "switch_transformers"})
_DEVICE = re.compile(r"^(cpu|mps|cuda)(?::(\d+))?$")
_GIB = float(1 << 30)

#: ``free_memory(torch, device) -> (free bytes, total bytes)``, or None when unknown.
MemoryProbe = Callable[[Any, str], "tuple[int, int] | None"]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one loaded model runs, for run records and metric provenance.

    Attributes:
        device: The device its inputs go to (``"cuda:0"``, ``"cpu"``, ``"mps"``).
        dtype: Its weights' dtype (``"bfloat16"``...).
        n_params: Its parameter count.
        weight_bytes: Its weights' size in bytes.
        devices: Every device holding a part of it (more than one when spread over GPUs).
    """

    device: str
    dtype: str
    n_params: int
    weight_bytes: int
    devices: tuple[str, ...] = field(default=())

    def record(self) -> dict[str, Any]:
        """JSON for ``run.json`` and ``metrics.json``."""
        out: dict[str, Any] = {
            "device": self.device,
            "dtype": self.dtype,
            "n_params": self.n_params,
            "weight_bytes": self.weight_bytes,
        }
        if len(self.devices) > 1:
            out["devices"] = list(self.devices)
        return out

    @classmethod
    def of(cls, torch: Any, model: Any, device: str) -> Placement:
        """The placement of a loaded ``model`` whose inputs go to ``device``."""
        params = list(model.parameters())
        n_params = sum(int(p.numel()) for p in params)
        weight_bytes = sum(int(p.numel()) * int(p.element_size()) for p in params)
        dtype = str(params[0].dtype).removeprefix("torch.") if params else "float32"
        mapped = getattr(model, "hf_device_map", None) or {}
        devices = sorted({_device_name(torch, d) for d in mapped.values()}) or [device]
        return cls(device, dtype, n_params, weight_bytes, tuple(devices))


def resolve_device(torch: Any, spec: str | None = "auto") -> str:
    """The torch device ``spec`` names (see the module docstring).

    Raises:
        ConfigError: An unknown device, or one this machine does not have.
    """
    text = (spec or "auto").strip().lower()
    if text == "auto":
        if torch.cuda.is_available():
            return "cuda:0"
        return "mps" if _has_mps(torch) else "cpu"
    match = _DEVICE.match(text)
    if match is None:
        raise ConfigError(f"unknown device {spec!r}; expected {DEVICE_HELP}")
    kind, index = match.group(1), match.group(2)
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ConfigError(
                f"device {spec!r}: no CUDA GPU is visible (torch {torch.__version__})"
            )
        if int(index or 0) >= count:
            raise ConfigError(f"device {spec!r}: only {count} CUDA GPU(s) are visible")
        return f"cuda:{int(index or 0)}"
    if kind == "mps" and not _has_mps(torch):
        raise ConfigError(f"device {spec!r}: Apple MPS is not available")
    return kind


def resolve_dtype(torch: Any, spec: Any = "auto", device: str = "cpu", model_type: str = "") -> Any:
    """The torch dtype ``spec`` names on ``device`` (see the module docstring).

    Args:
        torch: The torch module.
        spec: ``"auto"`` / ``None``, a dtype name or alias, or a torch dtype.
        device: The resolved device (``"auto"`` decides by it).
        model_type: The model's ``config.model_type`` (T5-family models avoid float16).

    Raises:
        ConfigError: An unknown dtype name.
    """
    if isinstance(spec, torch.dtype):
        return spec
    text = "auto" if spec is None else str(spec).strip().lower().removeprefix("torch.")
    if text == "auto":
        kind = device.split(":")[0]
        if kind == "cpu":
            return torch.float32
        if kind == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32 if model_type in _NO_FLOAT16 else torch.float16
    name = _DTYPE_ALIASES.get(text)
    if name is None:
        raise ConfigError(f"unknown dtype {spec!r}; expected {DTYPE_HELP}")
    return getattr(torch, name)


def check_placement(torch: Any, device: str | None, dtype: Any) -> None:
    """Refuse a device this machine lacks or an unknown dtype before anything is loaded (the
    spec itself goes on to :func:`load_placed`, which needs to know whether one GPU was named).

    Raises:
        ConfigError: As :func:`resolve_device` and :func:`resolve_dtype`.
    """
    resolve_dtype(torch, dtype, resolve_device(torch, device))


def free_memory(torch: Any, device: str) -> tuple[int, int] | None:
    """``(free, total)`` bytes on ``device``: a CUDA GPU's, or the host's available memory for
    the CPU (Linux ``MemAvailable``); None where it cannot be known (MPS, other systems)."""
    kind, _, index = device.partition(":")
    if kind == "cuda":
        free, total = torch.cuda.mem_get_info(int(index or 0))
        return int(free), int(total)
    if kind == "cpu":
        return _host_memory()
    return None


def load_placed(
    load: Callable[[dict[str, Any]], Any],
    *,
    torch: Any,
    name: str,
    device: str | None = "auto",
    dtype: Any = "auto",
    config: Any = None,
    model_class: Any = None,
    memory: MemoryProbe = free_memory,
) -> tuple[Any, Placement]:
    """Load a model on the device and in the dtype asked for, in eval mode.

    Args:
        load: Calls ``from_pretrained`` with the keyword arguments it is given (``dtype``, and
            ``device_map`` when the model is spread or loaded straight onto an accelerator).
        torch: The torch module.
        name: The model's name or path, for errors.
        device: As :func:`resolve_device`.
        dtype: As :func:`resolve_dtype`.
        config: The model's transformers config (its size is counted before loading when it is
            given with ``model_class``); None: checked after loading only.
        model_class: The transformers class (or auto class) that builds the model from
            ``config``.
        memory: ``(free, total)`` bytes of a device (injectable for tests).

    Returns:
        The model (eval mode, on its device) and its :class:`Placement`.

    Raises:
        ConfigError: An unknown or missing device, or an unknown dtype.
        ModelError: The model does not fit (named, with its size and the memory free), or
            loading ran out of memory.
        MissingDependency: Spreading over GPUs needs ``accelerate`` (the ``local`` extra).
    """
    target = resolve_device(torch, device)
    model_type = str(getattr(config, "model_type", "") or "")
    torch_dtype = resolve_dtype(torch, dtype, target, model_type)
    kwargs: dict[str, Any] = {"dtype": torch_dtype}
    n_params = _count_params(torch, config, model_class)
    spread = False
    if n_params is not None:
        need = n_params * _element_size(torch, torch_dtype)
        spread = _check_fit(torch, name, target, device, need, torch_dtype, n_params, memory)
    accelerate = importlib.util.find_spec("accelerate") is not None
    if spread:
        if not accelerate:
            raise MissingDependency("accelerate", "local")
        kwargs["device_map"] = "auto"
    elif target != "cpu" and accelerate:
        kwargs["device_map"] = {"": target}  # straight onto the device, not through host memory
    try:
        model = load(kwargs)
        if "device_map" not in kwargs:
            model = model.to(target)
    except Exception as exc:
        if is_out_of_memory(exc):
            raise out_of_memory_error(torch, name, target, exc) from None
        raise
    model.eval()
    inputs_at = _input_device(torch, model, target)
    return model, Placement.of(torch, model, inputs_at)


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc``, or the error it wraps (its ``__cause__``), is a device (or the host
    allocator) running out of memory."""
    name = type(exc).__name__
    text = str(exc)
    return (
        name == "OutOfMemoryError"
        or "out of memory" in text.lower()
        or (isinstance(exc, RuntimeError) and "DefaultCPUAllocator: can't allocate" in text)
        or (exc.__cause__ is not None and is_out_of_memory(exc.__cause__))
    )


def out_of_memory_error(torch: Any, name: str, device: str, exc: BaseException) -> ModelError:
    """One :class:`ModelError` for an out-of-memory failure: the model, the device and what is
    free on it, and what to try (the original error's first line kept)."""
    probe = _safe_memory(torch, device)
    free = "" if probe is None else f" ({_gib(probe[0])} free of {_gib(probe[1])})"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ModelError(
        f"{name}: out of memory on {device}{free}: {first[:200]}; try a smaller --batch-size, "
        "--dtype bfloat16, another device, or a model server"
    )


def run_error(
    torch: Any, name: str, device: str, exc: BaseException, what: str = "forward pass"
) -> ModelError:
    """The :class:`ModelError` of a failed forward pass or generation: an out-of-memory names
    the device and what is free on it (:func:`out_of_memory_error`); anything else keeps its
    message."""
    if is_out_of_memory(exc):
        return out_of_memory_error(torch, name, device, exc)
    return ModelError(f"{name}: {what} failed: {exc}")


def _check_fit(
    torch: Any,
    name: str,
    target: str,
    asked: str | None,
    need: int,
    torch_dtype: Any,
    n_params: int,
    memory: MemoryProbe,
) -> bool:
    """Whether to spread the model over GPUs; raises when it fits nowhere."""
    probe = memory(torch, target)
    if probe is None or need <= FIT_SHARE * probe[0]:
        return False
    one_gpu_named = asked is not None and ":" in asked
    if target.startswith("cuda") and not one_gpu_named:
        gpus = [memory(torch, f"cuda:{i}") for i in range(torch.cuda.device_count())]
        together = sum(p[0] for p in gpus if p is not None)
        if len(gpus) > 1 and need <= FIT_SHARE * together:
            return True
    dtype_name = str(torch_dtype).removeprefix("torch.")
    where = "the host" if target == "cpu" else target
    raise ModelError(
        f"{name} does not fit on {target}: {n_params / 1e9:.2f}B parameters need "
        f"{_gib(need)} of weights in {dtype_name}, and {where} has {_gib(probe[0])} free of "
        f"{_gib(probe[1])}; use a smaller dtype (--dtype bfloat16), more or larger GPUs, or a "
        "model server"
    )


def _count_params(torch: Any, config: Any, model_class: Any) -> int | None:
    """The parameter count of ``model_class`` built from ``config`` on the meta device (no
    memory), or None when it cannot be built that way."""
    if config is None or model_class is None:
        return None
    try:
        with torch.device("meta"):
            build = getattr(model_class, "from_config", None) or model_class
            empty = build(config)
        return sum(int(p.numel()) for p in empty.parameters())
    except Exception:  # an exotic architecture: checked by loading instead
        return None


def _element_size(torch: Any, dtype: Any) -> int:
    return int(torch.empty((), dtype=dtype).element_size())


def _input_device(torch: Any, model: Any, fallback: str) -> str:
    """Where a (possibly spread) model's inputs go: its input embeddings' device."""
    if not getattr(model, "hf_device_map", None):
        return fallback
    try:
        return _device_name(torch, model.get_input_embeddings().weight.device)
    except Exception:
        return fallback


def _device_name(torch: Any, where: Any) -> str:
    if isinstance(where, int):
        return f"cuda:{where}"
    text = str(where)
    return "cuda:0" if text == "cuda" else text


def _has_mps(torch: Any) -> bool:
    backend = getattr(getattr(torch, "backends", None), "mps", None)
    return bool(backend is not None and backend.is_available())


def _host_memory() -> tuple[int, int] | None:
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        return None
    values: dict[str, int] = {}
    for line in meminfo.read_text().splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[key] = int(parts[0]) * 1024
    if "MemAvailable" not in values or "MemTotal" not in values:
        return None
    return values["MemAvailable"], values["MemTotal"]


def _safe_memory(torch: Any, device: str) -> tuple[int, int] | None:
    try:
        return free_memory(torch, device)
    except Exception:
        return None


def _gib(n: int) -> str:
    return f"{n / _GIB:.1f} GiB"
