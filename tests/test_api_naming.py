"""The Python API's one naming rule, checked on the live public surface.

Every coroutine function that a public package exports (its ``__all__``) is named ``..._async``,
and every exported ``x_async`` has a blocking twin ``x`` exported beside it (``runs.blocking``),
which raises inside a running event loop, whatever the name was before.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import warnings
from collections.abc import Callable, Iterator

import pytest

import citegraph
from citegraph.kalma import score_na, score_na_async
from citegraph.runs import blocking


def public_modules() -> Iterator[object]:
    """Every importable ``citegraph`` package or module without a private part in its name."""
    for info in pkgutil.walk_packages(citegraph.__path__, "citegraph."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        yield importlib.import_module(info.name)


def exports() -> Iterator[tuple[str, str, object]]:
    for module in public_modules():
        for name in getattr(module, "__all__", []):
            yield module.__name__, name, getattr(module, name)  # type: ignore[attr-defined]


def test_every_exported_coroutine_function_is_named_async() -> None:
    offences = [
        f"{module}.{name}"
        for module, name, value in exports()
        if inspect.iscoroutinefunction(value) and not name.endswith("_async")
    ]
    assert offences == []


def test_every_exported_async_name_has_a_blocking_twin() -> None:
    offences = []
    for module, name, value in exports():
        if not name.endswith("_async") or not inspect.iscoroutinefunction(value):
            continue
        twin = getattr(importlib.import_module(module), name.removesuffix("_async"), None)
        exported = name.removesuffix("_async") in importlib.import_module(module).__all__
        if twin is None or not exported or inspect.iscoroutinefunction(twin):
            offences.append(f"{module}.{name}")
    assert offences == []


def test_the_walk_sees_the_renamed_functions() -> None:
    # the rule tests above are vacuous if the walk misses the packages; pin a few.
    names = {(m, n) for m, n, _ in exports()}
    assert ("citegraph.kalma", "ask_async") in names
    assert ("citegraph.conner", "factuality_async") in names
    assert ("citegraph.runs", "run_task_async") in names


async def _double(x: int) -> int:
    await asyncio.sleep(0)
    return 2 * x


_double_async = _double
_double_async.__name__ = "double_async"
double = blocking(_double_async)


def test_the_twin_runs_to_completion_outside_a_loop() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert double(21) == 42
    assert double.__name__ == "double"


def test_the_twin_inside_a_loop_raises_and_leaves_no_coroutine_unawaited() -> None:
    async def old_code() -> int:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a coroutine never awaited would warn
            with pytest.raises(RuntimeError, match="await its \\*_async form"):
                double(5)
        return await _double_async(5)

    assert asyncio.run(old_code()) == 10


@pytest.mark.parametrize(
    ("twin", "args"), [(score_na, (None, [], None)), (double, (1,))], ids=["score_na", "double"]
)
def test_every_twin_raises_alike_inside_a_loop(
    twin: Callable[..., object], args: tuple[object, ...]
) -> None:
    # score_na used to be the coroutine function itself: its twin raises like any other
    async def inside() -> None:
        twin(*args)

    with pytest.raises(RuntimeError, match="inside a running event loop"):
        asyncio.run(inside())


def test_score_na_plain_name_is_no_coroutine_function() -> None:
    assert inspect.iscoroutinefunction(score_na_async)
    assert not inspect.iscoroutinefunction(score_na)
