"""Run a backend as if its model sat on an accelerator, on a CPU-only machine: device checks for CI.

A backend's model is moved onto a *fake* accelerator with torch's ``FakeTensorMode``: its weights
become fake tensors (shape, dtype and device, no data) on :data:`FAKE_DEVICE`, and every tensor
the backend makes while the mode is active is fake too. Any operation mixing a tensor on the fake
accelerator with a (non-scalar) host tensor raises ``FakeTensorDeviceMismatchError`` ("Expected
all tensors to be on the same device"), as CUDA does; an operation that needs the values
(``.tolist()``, ``.item()``, ``float(t)``, ``bool(t)``) raises ``DataDependentOutputException``
instead, which marks where results legitimately reach the host. :func:`run_on_fake_device`
tells the two apart and fails a test only on the first, naming the backend and path.

Why ``lazy:0`` and not ``cuda:0``: on a CPU-only torch build, Python indexing (``t[0]``,
``t[:, None]``) of any tensor, fake or not, on a ``cuda`` device enters a CUDA device guard that
the build does not have ("PyTorch is not linked with support for cuda devices"), and
transformers indexes everywhere. The ``lazy`` device type has a guard in every build, and under
``FakeTensorMode`` none of its kernels runs. To the code under test it is an accelerator like
any other (not ``cpu``).

``copy.deepcopy`` of a fake tensor clones it in the same mode (the LM scorer copies a prefix's
keys and values). ``torch.inference_mode`` is swapped for ``torch.no_grad`` while a check runs:
under inference mode ``torch.tensor(..., device=...)`` skips the fake mode's lifting and fails
on the lazy backend. Autograd state does not change where tensors live.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
import torch
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    FakeTensor,
    FakeTensorDeviceMismatchError,
    FakeTensorMode,
)
from torch.overrides import TorchFunctionMode

#: The stand-in for the model's accelerator (see the module docstring).
FAKE_DEVICE = "lazy:0"
#: What every device-mismatch error says (torch's, fake or real).
MISMATCH_TEXT = "Expected all tensors to be on the same device"

_T = TypeVar("_T")


class FakeAccelerator:
    """One ``FakeTensorMode``: moves models onto :data:`FAKE_DEVICE` and runs code under it."""

    def __init__(self) -> None:
        self.mode = FakeTensorMode()

    def to_device(self, model: Any) -> Any:
        """Replace every parameter and buffer of ``model`` (in place) by a fake tensor of the
        same shape and dtype on :data:`FAKE_DEVICE` (tied weights stay tied). Returns ``model``."""
        moved: dict[int, tuple[Any, Any]] = {}  # id -> (original, kept alive; its fake)

        def fake(tensor: Any) -> Any:
            if id(tensor) not in moved:
                on_host = self.mode.from_tensor(tensor.detach())
                with self.mode:
                    on_device = on_host.to(FAKE_DEVICE)
                if isinstance(tensor, torch.nn.Parameter):
                    on_device = torch.nn.Parameter(on_device, requires_grad=tensor.requires_grad)
                moved[id(tensor)] = (tensor, on_device)
            return moved[id(tensor)][1]

        for module in model.modules():
            for store in (module._parameters, module._buffers):
                for name, tensor in list(store.items()):
                    if tensor is not None:
                        store[name] = fake(tensor)
        return model

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """The fake mode, with ``torch.inference_mode`` acting as ``torch.no_grad``."""
        real = torch.inference_mode
        torch.inference_mode = _no_grad  # type: ignore[assignment,misc]
        try:
            with self.mode, _CopyInMode():
                yield
        finally:
            torch.inference_mode = real  # type: ignore[misc]


class _CopyInMode(TorchFunctionMode):
    """``copy.deepcopy`` of a fake tensor as a clone in the same fake mode (torch's own deepcopy
    gives a tensor of a new mode, which the first operation refuses to mix)."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func is torch.Tensor.__deepcopy__:
            tensor, memo = args
            if id(tensor) not in memo:
                memo[id(tensor)] = tensor.clone()
            return memo[id(tensor)]
        return func(*args, **(kwargs or {}))


def _no_grad(mode: bool = True) -> Any:
    return torch.no_grad() if mode else contextlib.nullcontext()


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during, outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def is_mismatch(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is a device mismatch."""
    return any(
        isinstance(e, FakeTensorDeviceMismatchError) or MISMATCH_TEXT in str(e) for e in _chain(exc)
    )


def reached_host(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is a read of a fake tensor's values."""
    return any(
        isinstance(e, DataDependentOutputException) or "DataDependentOutputException" in str(e)
        for e in _chain(exc)
    )


def run_on_fake_device(
    accelerator: FakeAccelerator, what: str, call: Callable[[], _T], *, to_host: bool
) -> _T | None:
    """Run ``call`` under the fake accelerator and check that no tensor crossed devices.

    Args:
        accelerator: The fake accelerator the backend's model was moved onto.
        what: The backend and path, for the failure message.
        call: The code under test.
        to_host: Whether ``call`` ends by reading results on the host (then it must stop there:
            a call that returns normally never ran on the fake device). Otherwise ``call`` must
            return normally.

    Returns:
        What ``call`` returned (``None`` when it stopped at the host read).
    """
    try:
        with accelerator.active():
            result = call()
    except Exception as exc:
        if is_mismatch(exc):
            pytest.fail(f"{what}: a host tensor met a tensor on the model's device: {exc}")
        if to_host and reached_host(exc):
            return None
        raise
    if to_host:
        pytest.fail(f"{what}: returned without reading a tensor on the host: not on the device")
    return result


def assert_on_device(what: str, tensors: Any) -> None:
    """Every tensor in ``tensors`` is a fake tensor on :data:`FAKE_DEVICE`."""
    for tensor in tensors:
        assert isinstance(tensor, FakeTensor), f"{what}: a real tensor, not the model's"
        assert tensor.device == torch.device(FAKE_DEVICE), f"{what}: on {tensor.device}"
