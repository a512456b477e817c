"""Where a backend's batched call spends its time: one more call under ``torch.profiler``, its
wall time on the calling thread cut into tokenize / pad / copy / forward / sync / rest.

The backend's code is not changed: for the profiled call only, the benchmark wraps what it can
see from outside in ``record_function`` regions, and the profiler's own op and CUDA runtime events
add what happens inside:

========  ==========================================================================================
tokenize  the backend's tokenizer: ``__call__``, ``encode``, ``decode``, ``batch_decode`` (its
          object's class is swapped for a subclass that times them)
pad       packing and padding into tensors: ``pad_rows``, ``Packed`` (its ``__init__`` and
          ``pad``), ``LMForward._padded`` and the tokenizer's ``pad``, where they exist
copy      ``to_device`` (pinning, host-to-device copies); on CUDA also the runtime's
          ``cudaMemcpyAsync`` outside forward, tokenize and sync (the LM's ``ids.to(device)``)
forward   calls of the model and of its direct submodules from outside it (module hooks; the T5
          encoder, the LM's decoder and head are called directly); on a CPU the computation
          itself, on a GPU the host's launch time (the device's time is "device busy")
ops       the backend's own tensor operations outside those (``aten::`` ops not inside another
          region: the LM's log-softmax over the vocabulary, T5's softmax and argmax, pooling)
sync      waiting for the device: ``tolist`` / ``cpu`` / ``item`` / ``bool`` of a device tensor and
          ``cuda*Synchronize`` (a device-to-host copy of results counts here, with its wait)
rest      the remainder of the call: the backend's Python per batch and per item
========  ==========================================================================================

Every instant of the call counts once, for the innermost of these regions that holds it (a sync
inside forward counts as sync). "device busy" is the union of the device's kernel and copy
intervals during the call (CUDA only), so ``busy / wall`` near 1 is a device-bound call and far
below 1 a host-bound one. "padded/real" is padded input positions over real tokens of the
batches the pad functions made. The profiler slows the call down (its "profiled" time is shown
beside the timed one); shares are of the profiled call.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, record_function

CATEGORIES = ("tokenize", "pad", "copy", "forward", "ops", "sync", "rest")
#: Tokenizer methods and the category their calls count in.
TOKENIZER_METHODS = {
    "__call__": "tokenize",
    "encode": "tokenize",
    "decode": "tokenize",
    "batch_decode": "tokenize",
    "pad": "pad",
}
#: ``(module, attribute path, category, makes a batch)`` of citegraph functions that pack, pad
#: or copy (those not there are skipped; the breakdown lists those found).
PATCHED = (
    ("citegraph.models.hf._batching", "pad_rows", "pad", True),
    ("citegraph.models.hf._batching", "Packed.__init__", "pad", False),
    ("citegraph.models.hf._batching", "Packed.pad", "pad", True),
    ("citegraph.models.hf._batching", "to_device", "copy", False),
    ("citegraph.models.lm._forward", "LMForward._padded", "pad", True),
)
#: Tensor methods that wait for the device when the tensor is on one.
SYNC_METHODS = ("tolist", "cpu", "item", "__bool__")
#: CUDA runtime calls that copy between host and device.
COPY_OPS = {"cudaMemcpyAsync", "cudaMemcpy", "cudaMemcpy2DAsync"}
SYNC_OPS = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"}
PREFIX = "cg::"


@dataclass
class Breakdown:
    """One profiled batched call: milliseconds per category (summing to ``wall_ms``)."""

    wall_ms: float
    ms: dict[str, float]
    batches: int
    forwards: int
    items: int
    padded: int
    real: int
    device_busy_ms: float | None = None
    off_thread_ms: dict[str, float] = field(default_factory=dict)
    patched: list[str] = field(default_factory=list)

    def lines(self, timed_s: float) -> list[str]:
        """The breakdown as a three-line table: ms per batch and share of the call."""
        per, wall = max(self.batches, 1), max(self.wall_ms, 1e-9)
        head = f"  {self.batches:>4} batches, {self.forwards:>4} fwd calls "
        cells = "".join(f"{c:>9}" for c in CATEGORIES)
        busy = self.device_busy_ms
        pad = f"{self.padded / self.real:.2f}" if self.real else "n/a"
        extra = "".join(f" {k} {v:.1f} ms" for k, v in self.off_thread_ms.items())
        return [
            f"{head}{cells} | {'dev busy':>8} {'padded/real':>11} {'rest/item':>9} "
            f"{'profiled':>8} {'timed':>7}",
            f"{'  ms per batch':<32}"
            + "".join(f"{self.ms[c] / per:9.2f}" for c in CATEGORIES)
            + f" | {'n/a' if busy is None else f'{busy / per:.2f}':>8} {pad:>11} "
            f"{1000 * self.ms['rest'] / max(self.items, 1):6.0f} us {self.wall_ms:6.0f} ms "
            f"{1000 * timed_s:4.0f} ms",
            f"{'  share of the call':<32}"
            + "".join(f"{100 * self.ms[c] / wall:8.0f}%" for c in CATEGORIES)
            + f" | {'' if busy is None else f'{100 * busy / wall:.0f}%':>8}"
            + (f"  other threads:{extra}" if extra else ""),
        ]


class _Instrument:
    """Counters and the wrappers' shared state for one profiled call."""

    def __init__(self) -> None:
        self.counts = {"pad": 0, "forward": 0}
        self.padded = self.real = 0
        self.patched: list[str] = []
        self.in_batch = False

    def region(self, category: str) -> Any:
        return record_function(PREFIX + category)

    def batch_stats(self, result: Any, args: tuple[Any, ...]) -> None:
        """Add a padded batch's positions: from its attention mask when on the host, else from
        the token lists it was made of (a device mask is not read: that would wait for it)."""
        mask = result.get("attention_mask") if isinstance(result, dict) else None
        if isinstance(result, tuple) and len(result) == 2:
            mask = result[1]
        if isinstance(mask, torch.Tensor) and mask.device.type == "cpu":
            self.padded += mask.numel()
            self.real += int(mask.sum())
            return
        rows = next((a for a in args if _token_lists(a)), None)
        if rows is not None:
            lengths = [len(r) for r in rows]
            self.padded += len(lengths) * max(lengths)
            self.real += sum(lengths)


def _wrap(
    inst: _Instrument, category: str, fn: Callable[..., Any], batch: bool = False
) -> Callable[..., Any]:
    """``fn`` in a region of ``category``; with ``batch``, an outermost call is one batch made
    (counted, and its padded and real positions added up)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        outer = batch and not inst.in_batch
        if outer:
            inst.in_batch = True
        try:
            with inst.region(category):
                result = fn(*args, **kwargs)
        finally:
            if outer:
                inst.in_batch = False
        if outer:
            inst.counts["pad"] += 1
            inst.batch_stats(result, args)
        return result

    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


@contextmanager
def _patched_functions(inst: _Instrument) -> Iterator[None]:
    """Wrap :data:`PATCHED` wherever citegraph's loaded modules refer to them."""
    undo: list[tuple[Any, str, Any]] = []
    try:
        for module_name, path, category, batch in PATCHED:
            module = sys.modules.get(module_name)
            owner_name, _, attr = path.rpartition(".")
            owner = getattr(module, owner_name, None) if owner_name else module
            original = getattr(owner, attr, None) if owner is not None else None
            if original is None:
                continue
            wrapped = _wrap(inst, category, original, batch)
            if owner_name:  # a method: the class attribute
                undo.append((owner, attr, original))
                setattr(owner, attr, wrapped)
            else:  # a function: every citegraph module global that refers to it
                for name, mod in list(sys.modules.items()):
                    if name.startswith("citegraph") and getattr(mod, attr, None) is original:
                        undo.append((mod, attr, original))
                        setattr(mod, attr, wrapped)
            inst.patched.append(f"{module_name}.{path}")
        yield
    finally:
        for owner, attr, original in reversed(undo):
            setattr(owner, attr, original)


@contextmanager
def _timed_tokenizer(inst: _Instrument, tokenizer: Any) -> Iterator[None]:
    """Swap the tokenizer's class for a subclass whose methods run in regions."""
    cls = tokenizer.__class__
    methods = {
        name: _wrap(inst, category, getattr(cls, name))
        for name, category in TOKENIZER_METHODS.items()
        if callable(getattr(cls, name, None))
    }
    tokenizer.__class__ = type(f"Timed{cls.__name__}", (cls,), methods)
    try:
        yield
    finally:
        tokenizer.__class__ = cls


@contextmanager
def _forward_hooks(inst: _Instrument, model: Any) -> Iterator[None]:
    """Regions around calls of ``model`` and its direct children made from outside the model."""
    state = threading.local()
    handles = []

    def pre(module: Any, args: Any) -> None:
        depth = getattr(state, "depth", 0)
        state.depth = depth + 1
        if depth == 0:
            inst.counts["forward"] += 1
            state.region = inst.region("forward")
            state.region.__enter__()

    def post(module: Any, args: Any, output: Any) -> None:
        state.depth -= 1
        if state.depth == 0:
            state.region.__exit__(None, None, None)

    for module in (model, *model.children()):
        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def _sync_methods(inst: _Instrument) -> Iterator[None]:
    """Regions around the tensor methods that wait for the device, on device tensors."""
    originals = {name: getattr(torch.Tensor, name) for name in SYNC_METHODS}

    def make(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self.device.type == "cpu":
                return fn(self, *args, **kwargs)
            with inst.region("sync"):
                return fn(self, *args, **kwargs)

        return wrapped

    for name, fn in originals.items():
        setattr(torch.Tensor, name, make(fn))
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(torch.Tensor, name, fn)


def profile_call(
    run: Callable[[], Any],
    *,
    model: Any,
    tokenizer: Any,
    device: str,
    items: int,
    trace: Path | None = None,
) -> tuple[Any, Breakdown]:
    """``run()`` once under the profiler with the regions above; its result and breakdown.

    Args:
        run: One batched call of the backend.
        model: The backend's transformers model (for the forward hooks).
        tokenizer: The backend's tokenizer object.
        device: Where the model runs (``"cpu"``, ``"cuda"``...).
        items: Inputs in the call (for the rest per item).
        trace: Where to write a chrome trace of the call, or ``None``.
    """
    inst = _Instrument()
    activities = [ProfilerActivity.CPU]
    cuda = device.startswith("cuda")
    if cuda:
        activities.append(ProfilerActivity.CUDA)
        torch.cuda.synchronize()
    with ExitStack() as stack:
        stack.enter_context(_patched_functions(inst))
        stack.enter_context(_timed_tokenizer(inst, tokenizer))
        stack.enter_context(_forward_hooks(inst, model))
        if cuda:
            stack.enter_context(_sync_methods(inst))
        with profile(activities=activities) as prof, record_function(PREFIX + "call"):
            result = run()
            if cuda:
                torch.cuda.synchronize()
    if trace is not None:
        trace.parent.mkdir(parents=True, exist_ok=True)
        prof.export_chrome_trace(str(trace))
    out = analyse(list(prof.events()), cuda)
    out.batches = inst.counts["pad"] or inst.counts["forward"]
    out.forwards, out.items = inst.counts["forward"], items
    out.padded, out.real, out.patched = inst.padded, inst.real, inst.patched
    return result, out


def _category(event: Any, ancestors: list[str], off_cpu: bool) -> str | None:
    """The category an event counts in, or ``None`` (it counts in its enclosing region)."""
    name = event.name
    if name.startswith(PREFIX):
        return name[len(PREFIX) :] if name != PREFIX + "call" else None
    if name in SYNC_OPS:
        return "sync"
    if not ancestors and name.startswith("aten::"):
        return "ops"
    if off_cpu and name in COPY_OPS and not {"forward", "tokenize", "sync"} & set(ancestors):
        return "copy"
    return None


def analyse(events: list[Any], off_cpu: bool) -> Breakdown:
    """Exclusive time per category of the ``cg::call`` region's thread (see the module)."""
    call = next(e for e in events if e.name == PREFIX + "call")
    begin, end = call.time_range.start, call.time_range.end
    thread = call.thread
    host = [
        e for e in events if _on_host(e) and begin <= e.time_range.start and e.time_range.end <= end
    ]
    host.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    ms = dict.fromkeys(CATEGORIES, 0.0)
    off: dict[str, float] = {}
    stack: list[tuple[float, str]] = []  # (end, category) of open regions, innermost last
    for e in host:
        start, stop = e.time_range.start, e.time_range.end
        if e.thread != thread and not _under_thread(e, thread):
            cat = _category(e, [], off_cpu)
            if cat is not None and e.name.startswith(PREFIX):
                off[cat] = off.get(cat, 0.0) + (stop - start) / 1000
            continue
        while stack and stack[-1][0] <= start:
            stack.pop()
        cat = _category(e, [c for _, c in stack], off_cpu)
        if cat is None:
            continue
        if stack:
            stop = min(stop, stack[-1][0])
            ms[stack[-1][1]] -= (stop - start) / 1000
        ms[cat] += (stop - start) / 1000
        stack.append((stop, cat))
    wall = (end - begin) / 1000
    ms["rest"] = max(0.0, wall - sum(v for k, v in ms.items() if k != "rest"))
    busy = _device_busy(events, begin, end) if off_cpu else None
    return Breakdown(wall, ms, 0, 0, 0, 0, 0, busy, off)


def _token_lists(value: Any) -> bool:
    """Whether ``value`` is a non-empty list of token-id lists."""
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(v, list | tuple) for v in value)
    )


def _on_host(event: Any) -> bool:
    return str(getattr(event, "device_type", "CPU")).endswith("CPU") and not event.is_async


def _under_thread(event: Any, thread: int) -> bool:
    parent = getattr(event, "cpu_parent", None)
    while parent is not None:
        if parent.thread == thread:
            return True
        parent = getattr(parent, "cpu_parent", None)
    return False


def _device_busy(events: list[Any], begin: float, end: float) -> float:
    """Milliseconds in which the device ran a kernel or a copy (union of intervals)."""
    spans = sorted(
        (max(begin, e.time_range.start), min(end, e.time_range.end))
        for e in events
        if not str(getattr(e, "device_type", "CPU")).endswith("CPU")
        and "sync" not in f"{e.name} {getattr(e, 'activity_type', '')}".lower()
        and e.time_range.end > begin
        and e.time_range.start < end
    )
    busy, reach = 0.0, begin
    for start, stop in spans:
        if stop > reach:
            busy += stop - max(start, reach)
            reach = stop
    return busy / 1000


LEGEND = " ".join(
    [
        "breakdown: one more batched call under torch.profiler; ms per batch (share of that",
        "call) on the calling thread, each instant counted once for its innermost region:",
        "tokenize = the backend tokenizer's __call__/encode/decode/batch_decode; pad = pad_rows,",
        "Packed, LMForward._padded, tokenizer.pad; copy = to_device and, on CUDA,",
        "cudaMemcpyAsync outside forward and sync; forward = calls of the model and its direct",
        "submodules (on a CPU the computation, on a GPU the launches); ops = aten ops outside",
        "those regions (the backend's own tensor work: log-softmax, argmax, pooling); sync =",
        "tolist/cpu/item/bool of device tensors and cuda*Synchronize; rest = the remainder",
        "(Python per batch and item). dev busy = union of the device's kernel and copy",
        "intervals (CUDA only); padded/real = padded positions / real tokens.",
    ]
)
